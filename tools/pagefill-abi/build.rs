// SPDX-License-Identifier: GPL-2.0

//! Lists every `pub const` of `abi.rs` (qualified by its module) as Rust code
//! that evaluates each one, so the documentation test checks all of them
//! with values the compiler computed, and a new constant cannot go unchecked.

use std::fmt::Write as _;

fn main() {
    println!("cargo::rerun-if-changed=../../include/pagefill/abi.rs");
    let src = std::fs::read_to_string("../../include/pagefill/abi.rs").expect("abi.rs is readable");
    let mut module: Option<String> = None;
    let mut out = String::from("/// Every constant of abi.rs: (qualified name, value).\n#[allow(clippy::unnecessary_cast)]\n");
    out.push_str("pub const ALL_CONSTANTS: &[(&str, u64)] = &[\n");
    for line in src.lines() {
        if let Some(rest) = line.strip_prefix("pub mod ") {
            module = Some(rest.trim_end_matches(" {").to_string());
            continue;
        }
        if line == "}" {
            module = None;
            continue;
        }
        let Some(rest) = line.trim_start().strip_prefix("pub const ") else {
            continue;
        };
        if rest.starts_with("fn ") {
            continue;
        }
        let name = rest.split(':').next().unwrap_or_default().trim();
        let path = match &module {
            Some(m) => format!("{m}::{name}"),
            None => name.to_string(),
        };
        writeln!(out, "    (\"{path}\", pagefill_abi::{path} as u64),").unwrap();
    }
    out.push_str("];\n");
    let dest = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("constants.rs");
    std::fs::write(dest, out).unwrap();
}
