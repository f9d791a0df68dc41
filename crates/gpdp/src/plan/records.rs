//! Whether a plan's proxy shares records with the data being released
//! (docs/plan.md, "The proxy must not be the data"): each record (its
//! covariates, then its response) is fingerprinted from its parsed numbers,
//! so a row-permuted copy, other line endings or reformatted numbers
//! ("1.50" for "1.5") give the same fingerprints as the original.
//!
//! A fingerprint is the first 8 bytes of SHA-256 over the record's values as
//! IEEE-754 bit patterns (little-endian; −0 as +0), as 16 lower-case hex
//! digits. plan.json stores the proxy's (they are public, as the proxy is).
//! Two different records collide with probability about 2⁻⁶⁴ per pair.

use sha2::{Digest, Sha256};

use crate::model::data::Dataset;

/// The fingerprint of one record (covariates `x`, response `y`).
pub fn record_fingerprint(x: &[f64], y: f64) -> String {
    let mut h = Sha256::new();
    for &v in x.iter().chain(std::iter::once(&y)) {
        let v = if v == 0.0 { 0.0 } else { v };
        h.update(v.to_bits().to_le_bytes());
    }
    h.finalize()[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// The fingerprints of every record of `data`, sorted (a multiset).
pub fn record_fingerprints(data: &Dataset) -> Vec<String> {
    let mut v: Vec<String> = (0..data.len()).map(|i| record_fingerprint(data.x().row(i), data.y()[i])).collect();
    v.sort_unstable();
    v
}

/// How many records of `data` have a fingerprint among `proxy` (sorted, as
/// [`record_fingerprints`] gives them).
pub fn shared_records(proxy: &[String], data: &Dataset) -> usize {
    (0..data.len()).filter(|&i| proxy.binary_search(&record_fingerprint(data.x().row(i), data.y()[i])).is_ok()).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::points::Points;

    fn data(rows: &[[f64; 3]]) -> Dataset {
        let x: Vec<f64> = rows.iter().flat_map(|r| [r[0], r[1]]).collect();
        Dataset::new(Points::new(x, 2).unwrap(), rows.iter().map(|r| r[2]).collect()).unwrap()
    }

    #[test]
    fn permuted_or_reformatted_records_are_the_same_and_others_are_not() {
        let a = data(&[[1.0, 2.0, 3.5], [0.0, 4.0, -1.0], [7.0, 8.0, 9.0]]);
        // Permuted, with −0 for 0 (as "-0.0" would parse).
        let b = data(&[[7.0, 8.0, 9.0], [-0.0, 4.0, -1.0], [1.0, 2.0, 3.5]]);
        let fa = record_fingerprints(&a);
        assert_eq!(fa, record_fingerprints(&b));
        assert_eq!(shared_records(&fa, &b), 3);
        // A changed reading, swapped coordinates, the next double: different records.
        let c = data(&[[1.0, 2.0, 3.6], [4.0, 0.0, -1.0], [7.0, 8.0, 9.0f64.next_up()]]);
        assert_eq!(shared_records(&fa, &c), 0);
        assert_eq!(fa[0].len(), 16);
    }
}
