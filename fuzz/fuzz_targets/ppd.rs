//! The HM Land Registry price-paid reader (`read_ppd`): any bytes give counts
//! or an error, never a panic; the counts add up.
#![no_main]

use gpdp_experiments::realdata::ppd::{PpdFilter, read_ppd};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let Some((&flags, input)) = bytes.split_first() else { return };
    let filter = if flags & 1 == 1 { PpdFilter::default() } else { PpdFilter { county: None, ..PpdFilter::default() } };
    let skip = flags & 2 == 2;
    let mut kept = 0u64;
    let Ok(counts) = read_ppd(input, "fuzz.csv", &filter, skip, |r| {
        assert!(r.price > 0);
        kept += 1;
    }) else {
        return;
    };
    assert_eq!(counts.kept, kept);
    assert_eq!(counts.rows, counts.kept + counts.rejected.total() + counts.malformed);
});
