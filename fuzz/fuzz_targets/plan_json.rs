//! `plan.json` as `gpdp release --plan` reads it: the `gpdp::plan::Plan`
//! document (serde_json), then its release spec, with the ridge at the
//! fitted floor, made into a mechanism (checked by the accountant).
//! Any file gives a release or an error, never a panic; an accepted plan
//! writes back (serde_json) to a document that reads as the same plan.
#![no_main]

use gpdp::plan::Plan;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let Ok(plan) = serde_json::from_slice::<Plan>(bytes) else { return };
    let text = serde_json::to_vec(&plan).expect("a plan that was read writes back");
    let again: Plan = serde_json::from_slice(&text).expect("a written plan reads back");
    assert_eq!(serde_json::to_vec(&again).unwrap(), text, "the plan does not round-trip");
    if plan.version != gpdp::plan::PLAN_VERSION {
        return;
    }
    // As `gpdp release --plan` does: the plan's spec, here with its ridge
    // fixed at the fitted floor instead of a target ε.
    let mut spec = plan.release.spec.clone();
    spec.target_epsilon = None;
    spec.solve = None;
    spec.ridge_floor = None;
    spec.ridge = Some(plan.fitted_ridge.max(1e-3));
    // The joint certifier can take seconds on some settings (timed by the
    // accountant benchmark); libFuzzer's 10 s per input is for hangs.
    if spec.bound == gpdp::BoundChoice::Joint {
        spec.bound = gpdp::BoundChoice::Tight;
    }
    let n = plan.release.n.clamp(1, 1 << 20);
    let Ok(m) = spec.mechanism(n) else { return };
    let e = m.privacy().epsilon;
    assert!(e >= 0.0 && !e.is_nan(), "ε = {e}");
});
