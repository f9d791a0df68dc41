//! The `--domain` parser (`Domain::from_str`): any string gives a domain or an
//! error, never a panic; an accepted domain is usable (finite, positive-or-
//! zero diameter) and prints as a string that parses back to it.
#![no_main]

use gpdp::Domain;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let Ok(s) = std::str::from_utf8(bytes) else { return };
    let Ok(domain) = s.parse::<Domain>() else { return };
    let d = domain.diameter();
    assert!(d.is_finite() && d >= 0.0, "{domain}: diameter {d}");
    assert!(domain.dim() >= 1);
    let (lo, hi) = domain.bounding_box();
    assert!(lo.iter().zip(&hi).all(|(a, b)| a <= b), "{domain}");
    let again: Domain = domain.to_string().parse().unwrap_or_else(|e| panic!("{domain} does not parse back: {e}"));
    assert_eq!(again, domain);
});
