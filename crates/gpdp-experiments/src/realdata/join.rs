//! Step 3: the inner join of the sales with the postcode directory.

use serde::Serialize;

use super::postcodes::PostcodeLookup;
use super::ppd::PpdRecord;

/// What the join did: `matched + unmatched` = sales joined.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct JoinCounts {
    /// Sales whose postcode has coordinates.
    pub matched: u64,
    /// Sales whose postcode is not in the lookup (or had no coordinates).
    pub unmatched: u64,
}

/// Inner join: (easting, northing, ln price) of every sale whose postcode
/// is in the lookup, in input order.
pub fn join(sales: &[PpdRecord], lookup: &PostcodeLookup) -> (Vec<[f64; 3]>, JoinCounts) {
    let mut counts = JoinCounts::default();
    let mut out = Vec::with_capacity(sales.len());
    for s in sales {
        match lookup.get(&s.postcode) {
            Some([x, y]) => {
                counts.matched += 1;
                out.push([x, y, (s.price as f64).ln()]);
            }
            None => counts.unmatched += 1,
        }
    }
    (out, counts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::realdata::postcodes::PostcodeColumns;

    #[test]
    fn inner_join_counts_unmatched() {
        let l = PostcodeLookup::read(
            "pcds,x,y\nA1 1AA,10,20\n".as_bytes(),
            "pc.csv",
            &PostcodeColumns::default(),
            None,
            false,
        )
        .unwrap();
        let sales = vec![
            PpdRecord { postcode: "A11AA".into(), price: 100, year: 2018 },
            PpdRecord { postcode: "A11AB".into(), price: 200, year: 2018 },
            PpdRecord { postcode: "A11AA".into(), price: 300, year: 2018 },
        ];
        let (pts, c) = join(&sales, &l);
        assert_eq!(c, JoinCounts { matched: 2, unmatched: 1 });
        assert_eq!(pts, vec![[10.0, 20.0, 100f64.ln()], [10.0, 20.0, 300f64.ln()]]);
    }
}
