// SPDX-License-Identifier: GPL-2.0

//! The programming interface documentation, the ABI crate and (through the
//! crate) the driver and device model must agree. This test reads the rst
//! tables of `programming-interface.rst` and checks every row against
//! `abi.rs`, and that every constant `abi.rs` defines is documented.

use std::collections::BTreeMap;

const DOC: &str = include_str!(
    "../../../Documentation/networking/device_drivers/ethernet/pagefill/programming-interface.rst"
);
const ABI_SRC: &str = include_str!("../abi.rs");

/// Every documented name with the value `abi.rs` gives it.
fn abi_values() -> BTreeMap<&'static str, u64> {
    use pagefill_abi::*;
    BTreeMap::from([
        ("PCI_VENDOR_ID", u64::from(PCI_VENDOR_ID)),
        ("PCI_DEVICE_ID", u64::from(PCI_DEVICE_ID)),
        ("PCI_REVISION", u64::from(PCI_REVISION)),
        ("BAR0_SIZE", BAR0_SIZE as u64),
        ("MSIX_TABLE_OFFSET", u64::from(MSIX_TABLE_OFFSET)),
        ("MSIX_PBA_OFFSET", u64::from(MSIX_PBA_OFFSET)),
        ("MSIX_VECTORS", u64::from(MSIX_VECTORS)),
        ("ID_MAGIC", u64::from(ID_MAGIC)),
        ("VERSION_MAJOR", u64::from(VERSION_MAJOR)),
        ("VERSION_MINOR", u64::from(VERSION_MINOR)),
        ("ID", reg::ID as u64),
        ("VERSION", reg::VERSION as u64),
    ])
}

fn parse_number(s: &str) -> Option<u64> {
    let s = s.trim_matches('`');
    match s.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(&hex.replace('_', ""), 16).ok(),
        None => s.parse().ok(),
    }
}

/// Rows of the form ``NAME``  ``VALUE`` ... from every table in the doc.
fn doc_rows() -> Vec<(String, u64)> {
    DOC.lines()
        .filter_map(|l| {
            let mut cols = l.split_whitespace();
            let name = cols.next()?.strip_prefix("``")?.strip_suffix("``")?;
            let value = parse_number(cols.next()?)?;
            Some((name.to_string(), value))
        })
        .collect()
}

#[test]
fn every_documented_value_matches_the_abi() {
    let abi = abi_values();
    let rows = doc_rows();
    assert!(rows.len() >= abi.len(), "too few table rows parsed: {rows:?}");
    for (name, value) in &rows {
        let Some(&want) = abi.get(name.as_str()) else {
            panic!("the doc's table names {name}, which abi.rs does not define");
        };
        assert_eq!(*value, want, "{name}: doc says {value:#x}, abi.rs says {want:#x}");
    }
}

#[test]
fn every_abi_constant_is_documented() {
    let documented: Vec<String> = doc_rows().into_iter().map(|(n, _)| n).collect();
    let consts = ABI_SRC.lines().filter_map(|l| {
        let rest = l.trim_start().strip_prefix("pub const ")?;
        if rest.starts_with("fn ") {
            return None;
        }
        rest.split(':').next().map(str::trim)
    });
    for name in consts {
        assert!(
            documented.iter().any(|d| d == name),
            "abi.rs defines {name}, which the programming interface does not document"
        );
        assert!(
            abi_values().contains_key(name),
            "abi.rs defines {name}, which this test does not check"
        );
    }
}
