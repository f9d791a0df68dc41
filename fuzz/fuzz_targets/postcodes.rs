//! The postcode-directory reader (`PostcodeLookup::read`, ONSPD or any CSV
//! with named columns): any bytes give a lookup or an error, never a panic;
//! the counts add up and stored coordinates are finite.
#![no_main]

use gpdp_experiments::realdata::postcodes::{PostcodeColumns, PostcodeLookup};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let Some((&flags, input)) = bytes.split_first() else { return };
    let skip = flags & 1 == 1;
    let Ok(lookup) = PostcodeLookup::read(input, "fuzz.csv", &PostcodeColumns::default(), None, skip) else { return };
    let c = lookup.counts;
    assert_eq!(c.rows, c.kept + c.empty_postcode + c.not_needed + c.without_coordinates + c.duplicates + c.malformed);
    assert_eq!(lookup.len() as u64, c.kept);
});
