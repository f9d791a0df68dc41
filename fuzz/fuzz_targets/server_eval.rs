//! The body of `POST /releases/{id}/eval` (`gpdp_server::api::parse_eval_body`,
//! the parser the route uses): any body gives (points, path) or a 400-class
//! error, never a panic; accepted points are finite numbers (JSON has no
//! NaN or ∞).
#![no_main]

use gpdp_server::ServerError;
use gpdp_server::api::parse_eval_body;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    match parse_eval_body(bytes) {
        Ok((points, _path)) => assert!(points.iter().flatten().all(|v| v.is_finite())),
        Err(e) => assert!(matches!(e, ServerError::BadRequest(_)), "{e:?}"),
    }
});
