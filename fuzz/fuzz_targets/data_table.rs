//! The CSV reader of `--data` and `--at` (`gpdp::io::read_table_bytes`), then
//! the data policy on what it read (domain check, clipping, lattice snap).
//! Any input must give `Ok` or an error, never a panic; an accepted table
//! must be consistent.
#![no_main]

use gpdp::{CovariateLattice, DataPolicy, Dataset, Domain, OnUnbounded};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let Some((&flags, csv)) = bytes.split_first() else { return };
    let need_y = flags & 1 == 1;
    let Ok(table) = gpdp::io::read_table_bytes("fuzz.csv", csv, need_y) else { return };
    assert_eq!(table.x_names.len(), table.x.dim());
    assert!(table.x.as_slice().iter().all(|v| v.is_finite()));
    let Some(y) = table.y else {
        assert!(!need_y);
        return;
    };
    assert_eq!(y.len(), table.x.len());
    let n = y.len();
    let dim = table.x.dim();
    let Ok(data) = Dataset::new(table.x, y) else { return };
    let domain = Domain::cuboid(vec![0.0; dim], vec![1.0; dim]).unwrap();
    let lattice = (flags & 2 == 2).then(|| CovariateLattice::new(vec![2 + (flags as usize >> 4); dim]).unwrap());
    let on_unbounded = if flags & 4 == 4 { OnUnbounded::Reject } else { OnUnbounded::Clip };
    let policy =
        DataPolicy { domain: domain.clone(), n, response_bound: 1.0, on_unbounded, covariate_lattice: lattice };
    if let Ok((fitted, _)) = policy.apply(&data) {
        assert_eq!(fitted.len(), n);
        assert!(fitted.y().iter().all(|v| v.abs() <= 1.0));
        assert!(fitted.x().iter().all(|x| domain.contains(x)));
    }
});
