// SPDX-License-Identifier: GPL-2.0

//! The programming interface documentation, the ABI crate and (through the
//! crate) the driver and device model must agree. This test reads the rst
//! tables of `programming-interface.rst` and checks every row against
//! `abi.rs`, and that every constant `abi.rs` defines is documented.
//! `build.rs` lists the constants with the values the compiler gives them.

include!(concat!(env!("OUT_DIR"), "/constants.rs"));

const DOC: &str = include_str!(
    "../../../Documentation/networking/device_drivers/ethernet/pagefill/programming-interface.rst"
);

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

fn abi_value(name: &str) -> Option<u64> {
    ALL_CONSTANTS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, v)| v)
}

#[test]
fn every_documented_value_matches_the_abi() {
    let rows = doc_rows();
    assert!(
        rows.len() >= ALL_CONSTANTS.len(),
        "too few table rows parsed: {rows:?}"
    );
    for (name, value) in &rows {
        let Some(want) = abi_value(name) else {
            panic!("the doc's table names {name}, which abi.rs does not define");
        };
        assert_eq!(
            *value, want,
            "{name}: doc says {value:#x}, abi.rs says {want:#x}"
        );
    }
}

#[test]
fn every_abi_constant_is_documented() {
    let rows = doc_rows();
    let missing: Vec<&str> = ALL_CONSTANTS
        .iter()
        .map(|&(n, _)| n)
        .filter(|n| !rows.iter().any(|(d, _)| d == n))
        .collect();
    assert!(
        missing.is_empty(),
        "abi.rs defines constants the programming interface does not document: {missing:?}"
    );
}

#[test]
fn register_offsets_are_aligned_and_distinct() {
    let regs: Vec<(&str, u64)> = ALL_CONSTANTS
        .iter()
        .copied()
        .filter(|(n, _)| n.starts_with("reg::") && !n.starts_with("reg::Q_"))
        .filter(|(n, _)| {
            !matches!(
                *n,
                "reg::QUEUE_BASE"
                    | "reg::QUEUE_STRIDE"
                    | "reg::QUEUE_END"
                    | "reg::FILTER_STRIDE"
                    | "reg::FILTER_END"
                    | "reg::END"
            )
        })
        .collect();
    let queues = pagefill_abi::reg::QUEUE_BASE as u64..pagefill_abi::reg::QUEUE_END as u64;
    for (i, (n, v)) in regs.iter().enumerate() {
        assert_eq!(v % 4, 0, "{n} is not 32-bit aligned");
        assert!(!queues.contains(v), "{n} overlaps the queue registers");
        assert!(
            *v < pagefill_abi::reg::END as u64,
            "{n} is past the register space"
        );
        for (m, w) in &regs[i + 1..] {
            assert_ne!(v, w, "{n} and {m} share an offset");
        }
    }
    assert!(pagefill_abi::reg::END <= pagefill_abi::MSIX_TABLE_OFFSET as usize);
}
