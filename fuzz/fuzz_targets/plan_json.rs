//! `plan.json` as `gpdp release --plan` reads it: the `gpdp::plan::Plan`
//! document (serde_json), then the fields release takes from it — the
//! kernel and its ℓ, the domain, the response range — and the release's
//! parameters built from them, checked by the accountant (tight bound).
//! Any file gives a release or an error, never a panic; an accepted plan
//! writes back (serde_json) to a document that reads as the same plan.
#![no_main]

use gpdp::model::units::{ResponseRange, ResponseScale};
use gpdp::plan::Plan;
use gpdp::{Domain, Kernel, KernelKind, MechanismParams, ReleaseParams};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let Ok(plan) = serde_json::from_slice::<Plan>(bytes) else { return };
    let text = serde_json::to_vec(&plan).expect("a plan that was read writes back");
    let again: Plan = serde_json::from_slice(&text).expect("a written plan reads back");
    assert_eq!(serde_json::to_vec(&again).unwrap(), text, "the plan does not round-trip");
    if plan.version != gpdp::plan::PLAN_VERSION {
        return;
    }
    let Ok(kind) = plan.fit.kernel.parse::<KernelKind>() else { return };
    let Ok(domain) = plan.release.domain.parse::<Domain>() else { return };
    let scale = match plan.release.response_range {
        Some(r) => match ResponseRange::new(r.lo, r.hi) {
            Ok(r) => ResponseScale::Range(r),
            Err(_) => return,
        },
        None => ResponseScale::Bound(plan.release.response_bound),
    };
    let h = plan.fit.hyper;
    let Ok(kernel) = Kernel::new(kind, h.lengthscale) else { return };
    let n = plan.release.n.clamp(1, 1 << 20);
    let ridge = plan.fitted_ridge.max(1e-3);
    let r = ReleaseParams::new(kernel, domain, n, ridge, h.scale);
    let Ok(m) = MechanismParams::new(r, plan.release.delta, scale).check() else { return };
    let e = m.privacy().epsilon;
    assert!(e >= 0.0 && !e.is_nan(), "ε = {e}");
});
