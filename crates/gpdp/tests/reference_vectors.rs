//! The accountant against 40 reference values from an independent
//! implementation (tests/data/accountant-vectors.csv).

use gpdp::{Conversion, Kernel, KernelKind, ReleaseParams};

#[test]
fn matches_independent_implementation() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/accountant-vectors.csv");
    let mut rdr = csv::Reader::from_path(path).unwrap();
    let mut worst = 0.0f64;
    let mut rows = 0;
    for rec in rdr.deserialize::<std::collections::HashMap<String, String>>() {
        let r = rec.unwrap();
        let f = |k: &str| -> f64 { r[k].parse().unwrap() };
        let kind: KernelKind = r["kernel"].parse().unwrap();
        let scale = if r["scale"] == "inf" { f64::INFINITY } else { f("scale") };
        let mut p = ReleaseParams::new(
            Kernel::new(kind, f("lengthscale")).unwrap(),
            r["domain"].parse().unwrap(),
            f("n") as usize,
            f("ridge"),
            scale,
        );
        p.gp_noise = f("gp_noise");
        let conv: Conversion = r["conversion"].parse().unwrap();
        let release = p.check().unwrap();
        let rep = release.epsilon(f("draws") as u64, f("delta"), conv).unwrap();
        let c = &rep.components[0];
        let ctx = format!("{r:?}");
        assert_eq!(c.sensitivity_source.label(), r["sensitivity_source"], "{ctx}");
        let rel = |a: f64, b: f64| (a - b).abs() / b.abs().max(1e-300);
        assert!(rel(c.kappa.unwrap(), f("kappa")) < 1e-12, "κ {ctx}");
        assert!(rel(c.variance_bound, f("variance_bound")) < 1e-8, "V {} {ctx}", c.variance_bound);
        assert!(rel(c.sensitivity, f("sensitivity")) < 1e-8, "Δ {} {ctx}", c.sensitivity);
        let want = f("epsilon");
        if want == 0.0 {
            assert_eq!(rep.epsilon, 0.0, "{ctx}");
            assert!(rep.epsilon_clamped_at_zero);
        } else {
            let e = rel(rep.epsilon, want);
            worst = worst.max(e);
            assert!(e < 1e-8, "ε = {} vs {want} (rel {e:e}) α = {} {ctx}", rep.epsilon, rep.alpha);
        }
        rows += 1;
    }
    assert_eq!(rows, 40);
    eprintln!("worst relative ε difference over 40 vectors: {worst:e}");
}
