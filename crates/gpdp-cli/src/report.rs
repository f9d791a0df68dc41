//! Printing privacy reports: human-readable text and flat JSON.

use gpdp::PrivacyReport;
use serde_json::{Map, Value, json};

fn num(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else if v.is_nan() {
        Value::Null
    } else if v > 0.0 {
        json!("inf")
    } else {
        json!("-inf")
    }
}

/// The `account --json` object: one flat object for a single release.
pub fn report_json(r: &PrivacyReport) -> Value {
    let c = &r.components[0];
    let mut m = Map::new();
    m.insert("epsilon".into(), num(r.epsilon));
    m.insert("delta".into(), num(r.delta));
    m.insert("alpha".into(), num(r.alpha));
    m.insert("alpha_max".into(), num(r.alpha_max));
    m.insert("rdp".into(), num(r.rdp));
    m.insert("covariance_term".into(), num(c.covariance_term));
    m.insert("mean_term".into(), num(c.mean_term));
    m.insert("tau".into(), num(c.tau));
    m.insert("variance_bound".into(), num(c.variance_bound));
    m.insert("variance_bound_source".into(), json!(c.variance_bound_source));
    m.insert("kappa".into(), c.kappa.map_or(Value::Null, num));
    m.insert("sensitivity".into(), num(c.sensitivity));
    m.insert("sensitivity_source".into(), json!(c.sensitivity_source.label()));
    m.insert("draws".into(), json!(c.draws));
    m.insert("conversion".into(), json!(r.conversion.name()));
    m.insert("epsilon_clamped_at_zero".into(), json!(r.epsilon_clamped_at_zero));
    m.insert("kernel".into(), json!(c.kernel));
    m.insert("lengthscale".into(), num(c.lengthscale));
    m.insert("domain".into(), json!(c.domain));
    m.insert("n".into(), json!(c.n));
    m.insert("ridge".into(), num(c.ridge));
    m.insert("scale".into(), num(c.scale));
    m.insert("gp_noise".into(), num(c.gp_noise));
    m.insert("response_bound".into(), num(c.response_bound));
    Value::Object(m)
}

/// The per-row report columns of `account --batch` (name, value).
pub fn report_columns(r: &PrivacyReport) -> Vec<(&'static str, String)> {
    let c = &r.components[0];
    let f = |v: f64| if v.is_infinite() { "inf".to_string() } else { format!("{v}") };
    vec![
        ("epsilon", f(r.epsilon)),
        ("delta", f(r.delta)),
        ("alpha", f(r.alpha)),
        ("alpha_max", f(r.alpha_max)),
        ("rdp", f(r.rdp)),
        ("covariance_term", f(c.covariance_term)),
        ("mean_term", f(c.mean_term)),
        ("tau", f(c.tau)),
        ("variance_bound", f(c.variance_bound)),
        ("variance_bound_source", c.variance_bound_source.clone()),
        ("kappa", c.kappa.map_or(String::new(), f)),
        ("sensitivity", f(c.sensitivity)),
        ("sensitivity_source", c.sensitivity_source.label().to_string()),
        ("epsilon_clamped_at_zero", r.epsilon_clamped_at_zero.to_string()),
    ]
}

/// Names of the report columns, in order.
pub fn report_column_names() -> [&'static str; 14] {
    [
        "epsilon",
        "delta",
        "alpha",
        "alpha_max",
        "rdp",
        "covariance_term",
        "mean_term",
        "tau",
        "variance_bound",
        "variance_bound_source",
        "kappa",
        "sensitivity",
        "sensitivity_source",
        "epsilon_clamped_at_zero",
    ]
}

fn lemma_words(label: &str) -> &'static str {
    match label {
        "B.1" => "generic bounded-response bound",
        "B.4" => "constant kernel",
        "B.5" => "purely diagonal kernel",
        "B.7" => "exponential kernel in 1-D",
        "B.8" => "noiseless RKHS responses",
        _ => "",
    }
}

/// A short human-readable report.
pub fn report_text(r: &PrivacyReport) -> String {
    use std::fmt::Write;
    let c = &r.components[0];
    let mut s = String::new();
    let sigma = if c.scale.is_infinite() { "∞ (covariance-only)".to_string() } else { format!("{}", c.scale) };
    let _ = writeln!(s, "Privacy of releasing L = {} posterior sample path(s)", c.draws);
    let _ = writeln!(s, "  kernel        {} (ℓ = {}) on {}", c.kernel, c.lengthscale, c.domain);
    let _ = writeln!(s, "  data          n = {}, responses |y| ≤ M_Y = {}", c.n, c.response_bound);
    let _ = writeln!(s, "  release       ridge r = {}, scale σ = {sigma}, GP noise η = {}", c.ridge, c.gp_noise);
    let _ = writeln!(s, "  V̂_n           {:.6}   {}", c.variance_bound, c.variance_bound_source);
    let _ = writeln!(
        s,
        "  Δ̂_n           {:.6}   Lemma {} ({})",
        c.sensitivity,
        c.sensitivity_source.label(),
        lemma_words(c.sensitivity_source.label())
    );
    let _ = writeln!(s, "  order α       {:.6}   (admissible: 1 < α < {:.6})", r.alpha, r.alpha_max);
    let _ = writeln!(s, "    covariance term 2ψ_α(τ̃)   {:.6} per draw  (τ̃ = {:.6})", c.covariance_term, c.tau);
    let _ = writeln!(s, "    mean term                 {:.6} per draw", c.mean_term);
    let _ = writeln!(s, "    RDP of all draws          {:.6}", r.rdp);
    let conv = match r.conversion {
        gpdp::Conversion::Paper => "paper (Mironov 2017)",
        gpdp::Conversion::Improved => "improved (Canonne–Kamath–Steinke 2020 / Balle et al. 2020)",
    };
    let _ = writeln!(s, "  conversion    {conv}");
    if r.epsilon_clamped_at_zero {
        let _ = writeln!(
            s,
            "  note          the conversion is negative here; ε = 0 is reported (a valid (0, δ) statement)"
        );
    }
    let _ = write!(s, "⇒ ({:.6}, {:e})-differentially private", r.epsilon, r.delta);
    s
}
