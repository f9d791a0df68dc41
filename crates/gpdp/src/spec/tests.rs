use super::*;

fn base() -> ReleaseSpec {
    let mut s = ReleaseSpec::new(KernelKind::Matern32, "box:0,1,0,1".parse().unwrap(), 1e-5);
    s.lengthscale = Some(0.2);
    s.scale = Some(1.0);
    s.ridge = Some(2.0);
    s.response_bound = Some(1.0);
    s
}

#[test]
fn json_round_trips_exactly_and_omits_defaults() {
    let mut s = base();
    s.gp_noise = Some(0.1);
    s.draws = Draws::new(3).unwrap();
    s.response_bound = None;
    s.response_range = Some(ResponseRange::new(-0.5, 60.25).unwrap());
    s.bound = BoundChoice::Joint;
    s.snap = Some(Snap::Spacing(0.125));
    s.lengthscale = Some(0.1 + 0.2); // not a short decimal: must round-trip bit for bit
    let json = serde_json::to_string(&s).unwrap();
    let back: ReleaseSpec = serde_json::from_str(&json).unwrap();
    assert_eq!(back, s);
    assert_eq!(back.lengthscale.unwrap().to_bits(), (0.1f64 + 0.2).to_bits());
    assert!(!json.contains("on_unbounded") && !json.contains("sampler"), "defaults are omitted: {json}");
    assert!(json.contains(r#""snap":0.125"#) && json.contains(r#""response_range":[-0.5,60.25]"#), "{json}");
}

#[test]
fn unknown_keys_and_bad_values_are_refused_by_name() {
    let e =
        serde_json::from_str::<ReleaseSpec>(r#"{"kernel":"matern32","domain":"interval:0,1","delta":0.1,"ridg":1}"#)
            .unwrap_err()
            .to_string();
    assert!(e.contains("ridg"), "{e}");
    let e = serde_json::from_str::<ReleaseSpec>(
        r#"{"kernel":"matern32","domain":"interval:0,1","delta":0.1,"ridge":1,"on_unbounded":"drop"}"#,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("drop"), "{e}");
    let e = serde_json::from_str::<ReleaseSpec>(
        r#"{"kernel":"matern32","domain":"interval:0,1","delta":0.1,"response_range":[3,1]}"#,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("LO < HI"), "{e}");
}

#[test]
fn the_solved_parameter_is_an_enum_of_the_keys() {
    let s = base();
    assert_eq!(s.solved().unwrap(), Solved::Fixed);
    let mut c = base();
    c.ridge = None;
    c.target_epsilon = Some(3.0);
    c.ridge_floor = Some(0.5);
    assert_eq!(c.solved().unwrap(), Solved::Calibrate { target_epsilon: 3.0, solve: Solve::Ridge, floor: Some(0.5) });
    // Both the ridge and a target for it: refused, naming the key.
    let mut both = base();
    both.target_epsilon = Some(3.0);
    assert!(matches!(both.solved(), Err(Error::Spec { key: "ridge", .. })));
    // Solving the scale: the scale must be absent, the ridge present, no floor.
    let mut sc = base();
    sc.scale = None;
    sc.target_epsilon = Some(3.0);
    sc.solve = Some(Solve::Scale);
    assert!(matches!(sc.solved(), Ok(Solved::Calibrate { solve: Solve::Scale, floor: None, .. })));
    sc.ridge_floor = Some(1.0);
    assert!(matches!(sc.solved(), Err(Error::Spec { key: "ridge_floor", .. })));
    let mut none = base();
    none.ridge = None;
    assert!(matches!(none.solved(), Err(Error::Spec { key: "ridge", .. })));
    let mut floor_alone = base();
    floor_alone.ridge_floor = Some(1.0);
    assert!(matches!(floor_alone.solved(), Err(Error::Spec { key: "ridge_floor", .. })));
}

#[test]
fn the_mechanism_is_the_one_the_parameters_give() {
    // Fixed: the same guarantee as MechanismParams built by hand.
    let s = base();
    let m = s.mechanism(20).unwrap();
    let kernel = Kernel::new(KernelKind::Matern32, 0.2).unwrap();
    let by_hand = MechanismParams::new(
        ReleaseParams::new(kernel, "box:0,1,0,1".parse().unwrap(), 20, 2.0, 1.0),
        1e-5,
        ResponseScale::Bound(1.0),
    )
    .check()
    .unwrap();
    assert_eq!(m.privacy(), by_hand.privacy());
    // Calibrated with a floor above the calibrated ridge: the floor is used and ε ≤ target.
    let mut c = base();
    c.ridge = None;
    c.target_epsilon = Some(4.0);
    let calibrated = c.mechanism(20).unwrap();
    let r = calibrated.accounted_release().params().ridge;
    assert!(calibrated.privacy().epsilon <= 4.0);
    c.ridge_floor = Some(2.0 * r);
    let floored = c.mechanism(20).unwrap();
    assert_eq!(floored.accounted_release().params().ridge, 2.0 * r);
    assert!(floored.privacy().epsilon < calibrated.privacy().epsilon);
}

#[test]
fn snap_and_lattice_keys() {
    let mut s = base();
    s.snap = Some(Snap::Counts("11x6".into()));
    let l = s.lattice().unwrap().unwrap();
    assert!(l.snaps());
    assert_eq!(l.counts(), &[11, 6]);
    s.snap = Some(Snap::Spacing(0.25));
    assert_eq!(s.lattice().unwrap().unwrap().counts(), &[5, 5]);
    s.snap = Some(Snap::Spacing(0.3));
    assert!(s.lattice().is_err(), "0.3 does not divide the side 1");
    s.covariate_lattice = Some("5".into());
    assert!(matches!(s.lattice(), Err(Error::Spec { key: "snap", .. })));
    s.snap = None;
    let l = s.lattice().unwrap().unwrap();
    assert!(!l.snaps());
}

#[test]
fn messages_name_keys_in_each_front_ends_spelling() {
    let mut s = base();
    s.lengthscale = None;
    let e = s.mechanism(10).unwrap_err().to_string();
    assert!(e.starts_with("`lengthscale`: required"), "{e}");
    assert!(render_keys(&e, Spelling::Flag).starts_with("--lengthscale: required"));
    assert!(render_keys(&e, Spelling::Keyword).starts_with("lengthscale: required"));
    assert!(render_keys(&e, Spelling::Field).starts_with("lengthscale: required"));
    assert_eq!(render_keys("`target_epsilon` and `x`", Spelling::Flag), "--target-epsilon and `x`");
    assert_eq!(render_keys("unclosed `ridge", Spelling::Flag), "unclosed `ridge");
}

#[test]
fn the_schema_lists_every_key_and_the_required_ones() {
    let keys = ReleaseSpec::keys();
    for k in [
        "kernel",
        "lengthscale",
        "domain",
        "ridge",
        "target_epsilon",
        "solve",
        "ridge_floor",
        "snap",
        "covariate_lattice",
        "sampler",
        "rkhs_norm",
        "assume_rkhs_responses",
        "conversion",
        "bound",
    ] {
        assert!(keys.iter().any(|x| x == k), "{k} missing from {keys:?}");
    }
    let schema = ReleaseSpec::json_schema();
    let required: Vec<&str> = schema["required"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(required, ["kernel", "domain", "delta"]);
    assert_eq!(schema["additionalProperties"], serde_json::json!(false));
    assert_eq!(schema["properties"]["bound"]["enum"], serde_json::json!(["tight", "joint", "paper"]));
}

#[test]
fn the_spec_of_a_mechanism_rebuilds_it() {
    let mut c = base();
    c.ridge = None;
    c.target_epsilon = Some(4.0);
    c.ridge_floor = Some(0.01);
    c.snap = Some(Snap::Spacing(0.25));
    c.response_bound = None;
    c.response_range = Some(ResponseRange::new(0.0, 60.0).unwrap());
    c.units = Some("µg/m³".into());
    c.draws = Draws::new(2).unwrap();
    let m = c.mechanism(30).unwrap();
    let of = ReleaseSpec::of(&m).unwrap();
    assert_eq!(of.target_epsilon, None);
    assert_eq!(of.ridge, Some(m.accounted_release().params().ridge));
    assert_eq!(of.snap, Some(Snap::Counts("5x5".into())));
    let again = of.mechanism(30).unwrap();
    assert_eq!(again.privacy(), m.privacy());
    assert_eq!(again.params(), m.params());
    // `resolved` agrees with `of` on the solved parameter.
    assert_eq!(c.resolved(&m).ridge, of.ridge);
    assert_eq!(c.resolved(&m).mechanism(30).unwrap().privacy(), m.privacy());
}

/// ReleaseSpec::from_model and ReleaseSpec::model are inverse on the model
/// keys, and ReleaseSpec::params goes through ModelSpec::release_params.
#[test]
fn the_model_keys_round_trip_and_translate_once() {
    let mut m = ModelSpec::new(KernelKind::Matern32, "box:0,1,0,1".parse().unwrap());
    m.lengthscale = Some(0.2);
    m.ridge = Some(3.0);
    m.scale = Some(0.5);
    m.gp_noise = Some(0.1);
    m.sensitivity = SensitivityChoice::Lemma(crate::privacy::bounds::Lemma::B8);
    m.rkhs_norm = Some(2.0);
    m.bound = BoundChoice::Paper;
    let s = ReleaseSpec::from_model(m.clone(), 1e-5);
    assert_eq!(s.model(), m);
    let direct = m.release_params(7, None).unwrap();
    let through_spec = ReleaseSpec { response_bound: Some(1.0), ..s }.params(7).unwrap().release;
    assert_eq!(format!("{direct:?}"), format!("{through_spec:?}"));
    // The solved parameter may be absent, and only it.
    m.ridge = None;
    assert!(m.release_params(7, Some(Solve::Ridge)).is_ok());
    let e = m.release_params(7, Some(Solve::Scale)).unwrap_err().to_string();
    assert!(e.contains("`ridge`"), "{e}");
    m.sensitivity = SensitivityChoice::Auto;
    let e = m.release_params(7, Some(Solve::Ridge)).unwrap_err().to_string();
    assert!(e.contains("`rkhs_norm`"), "{e}");
}

/// The `relation` key: omitted at its default, `change-response` round-trips,
/// an unknown relation is refused naming it; with the data the mechanism
/// uses their covariates (public under that relation), without them the
/// bound for any covariates; covariates with replace-one are refused.
#[test]
fn the_relation_key_selects_the_guarantee() {
    let s = base();
    assert!(!serde_json::to_string(&s).unwrap().contains("relation"));
    let mut cr = s.clone();
    cr.relation = NeighbouringRelation::ChangeResponse;
    let text = serde_json::to_string(&cr).unwrap();
    assert!(text.contains(r#""relation":"change-response""#), "{text}");
    assert_eq!(serde_json::from_str::<ReleaseSpec>(&text).unwrap(), cr);
    let bad = text.replace("change-response", "swap-two");
    assert!(serde_json::from_str::<ReleaseSpec>(&bad).unwrap_err().to_string().contains("swap-two"));
    assert!(ReleaseSpec::keys().contains(&"relation".to_string()));
    let x =
        crate::model::points::Points::from_rows(&[[0.1, 0.2], [0.4, 0.4], [0.8, 0.3], [0.5, 0.9], [0.2, 0.7]]).unwrap();
    let data = crate::model::data::Dataset::new(x.clone(), vec![0.1, 0.2, 0.3, 0.4, 0.5]).unwrap();
    let with = cr.mechanism_for_data(&data, HyperparameterSource::Stated).unwrap();
    let free = cr.mechanism(5).unwrap();
    let g = with.privacy().gaussian.as_ref().unwrap();
    assert_eq!(g.covariates, Some(5));
    assert!(free.privacy().gaussian.as_ref().unwrap().covariates.is_none());
    assert!(with.privacy().epsilon <= free.privacy().epsilon);
    assert_eq!(ReleaseSpec::of(&with).unwrap().relation, NeighbouringRelation::ChangeResponse);
    let replace = s.mechanism_for_data(&data, HyperparameterSource::Stated).unwrap();
    assert!(replace.privacy().gaussian.is_none());
    let e = s.mechanism_with(5, Some(&x), HyperparameterSource::Stated).unwrap_err();
    assert!(e.to_string().contains("`relation`"), "{e}");
}
