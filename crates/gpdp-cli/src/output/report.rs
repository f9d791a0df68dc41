//! Presenting privacy reports: the human-readable text, and table cells.
//! The schema itself — what `--json` prints and `report.json` holds — is
//! the library's [`gpdp::PrivacyReport`], serialised as it is.

use gpdp::PrivacyReport;
use gpdp::error::fmt_value;
use serde_json::Value;

/// A JSON value as a CSV cell: strings bare, null empty, numbers and
/// booleans as JSON writes them (shortest round-trip form).
pub fn cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn lemma_words(label: &str) -> &'static str {
    match label {
        "B.1" => "generic bounded-response bound",
        "B.4" => "constant kernel",
        "B.5" => "purely diagonal kernel",
        "B.7" => "exponential kernel in 1-D",
        "B.8" => "noiseless RKHS responses",
        "B.8-tight" => "noiseless RKHS responses, half the paper's constant",
        "coupled" => "generic, coupled residual bound",
        "operator" => "generic, rank-one operator bound",
        _ => "",
    }
}

/// A short human-readable report; a composed report lists every component.
pub fn report_text(r: &PrivacyReport) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let total = r.total_draws();
    if let Some(g) = &r.gaussian {
        let p = &g.release;
        let _ = writeln!(s, "Privacy of releasing L = {total} posterior sample path(s)");
        let _ =
            writeln!(s, "  relation      {}: protects {}", g.neighbouring_relation, g.neighbouring_relation.protects());
        let _ = writeln!(s, "  kernel        {} (ℓ = {}) on {}", p.kernel, fmt_value(p.lengthscale), p.domain);
        let _ = writeln!(s, "  data          n = {}, responses |y| ≤ M_Y = {}", p.n, fmt_value(p.response_bound));
        let _ = writeln!(
            s,
            "  release       ridge r = {}, scale σ = {}, GP noise η = {}",
            fmt_value(p.ridge),
            fmt_value(p.scale),
            fmt_value(p.gp_noise)
        );
        let _ = writeln!(s, "  accounting    {}", g.method);
        let _ = writeln!(s, "  distance      μ = {} ({})", fmt_value(g.mu), g.mu_source);
        let _ = writeln!(s, "  guarantee     ε = {} at δ = {:e}", num6(r.epsilon), r.delta);
        if let Some(e) = g.rdp_epsilon {
            let _ = writeln!(s, "  RDP instead   ε = {} (improved conversion)", num6(e));
        }
        return s;
    }
    if r.components.len() == 1 {
        let _ = writeln!(s, "Privacy of releasing L = {total} posterior sample path(s)");
    } else {
        let _ = writeln!(s, "Privacy of {} composed releases ({total} draws in all)", r.components.len());
    }
    let relation = r.neighbouring_relation();
    let _ = writeln!(s, "  relation      {relation}: protects {}", relation.protects());
    for (i, c) in r.components.iter().enumerate() {
        if r.components.len() > 1 {
            let _ = writeln!(s, "  release {} (L = {})", i + 1, c.draws);
        }
        let sigma = if c.scale.is_infinite() { "∞ (covariance-only)".to_string() } else { fmt_value(c.scale) };
        let _ = writeln!(s, "  kernel        {} (ℓ = {}) on {}", c.kernel, fmt_value(c.lengthscale), c.domain);
        let _ = writeln!(s, "  data          n = {}, responses |y| ≤ M_Y = {}", c.n, fmt_value(c.response_bound));
        let _ = writeln!(
            s,
            "  release       ridge r = {}, scale σ = {sigma}, GP noise η = {}",
            fmt_value(c.ridge),
            fmt_value(c.gp_noise)
        );
        let _ = writeln!(
            s,
            "  bound         {}",
            match c.bound {
                gpdp::BoundChoice::Tight => "tight (docs/proofs/tight-accountant.md)",
                gpdp::BoundChoice::Paper => "paper (Theorem 3.1 / Prop. 2 and the paper's lemmas)",
                gpdp::BoundChoice::Joint => {
                    "joint (the tight bound, or the certified joint supremum where smaller: docs/proofs/joint-accountant.md)"
                }
            }
        );
        let _ = writeln!(s, "  V̂_n           {}   {}", num6(c.variance_bound), c.variance_bound_source);
        let _ = writeln!(
            s,
            "  Δ̂_n           {}   {} ({}){}",
            num6(c.sensitivity),
            match c.sensitivity_source.label() {
                l if l.starts_with("B.") => format!("Lemma {l}"),
                l => format!("the {l} bound"),
            },
            lemma_words(c.sensitivity_source.label()),
            match c.sensitivity_constants.label() {
                Some(l) => format!(" — published constants: {l}"),
                None => String::new(),
            }
        );
        let _ = writeln!(
            s,
            "    covariance term           {} per draw  (τ̃ = {}; {})",
            num6(c.covariance_term),
            num6(c.tau),
            c.covariance_term_source
        );
        let _ = writeln!(s, "    mean term                 {} per draw  ({})", num6(c.mean_term), c.mean_term_source);
    }
    let _ = writeln!(s, "  order α       {}   (admissible: 1 < α < {})", order(r.alpha), order(r.alpha_max));
    let _ = writeln!(s, "  RDP of all draws            {}", num6(r.rdp));
    let conv = match r.conversion {
        gpdp::Accounting::Rdp(gpdp::Conversion::Paper) => "paper (Mironov 2017)",
        gpdp::Accounting::Rdp(gpdp::Conversion::Improved) => {
            "improved (Canonne–Kamath–Steinke 2020 / Balle et al. 2020)"
        }
        gpdp::Accounting::Pld => {
            "pld: exact privacy-loss distribution of the dominating pair (docs/proofs/pld-covariance-only.md); the order/RDP lines above are the improved RDP conversion's, for comparison"
        }
    };
    let _ = writeln!(s, "  conversion    {conv}");
    if let Some(p) = &r.pld {
        pld_text(&mut s, p);
    }
    if r.epsilon_clamped_at_zero {
        let _ = writeln!(
            s,
            "  note          the conversion is negative here; ε = 0 is reported (a valid (0, δ) statement)"
        );
    }
    if r.delta >= 1.0 && r.pld.is_none() {
        let _ = writeln!(s, "  note          δ = 1: no order α > 1 is admissible; the statement is vacuous");
    }
    let delta = if r.delta >= 1e-3 { format!("{}", r.delta) } else { format!("{:e}", r.delta) };
    let _ = write!(s, "⇒ ({}, {delta})-differentially private", num6(r.epsilon));
    s
}

/// The PLD lines of a report: the discretisation, what was added to δ, and
/// the RDP value it replaces.
fn pld_text(s: &mut String, p: &gpdp::privacy::PldReport) {
    use std::fmt::Write;
    let _ = writeln!(
        s,
        "  PLD grid      h = {:.3e}, {} points, FFT length {}, tilt θ = {:.4}",
        p.grid_width, p.support_points, p.fft_len, p.tilt
    );
    let _ = writeln!(
        s,
        "  PLD δ terms   +∞ mass {:.2e} (counted in δ), {:.2e} moved up to the lower cut-off, float slack {:.2e}; certified δ = {:.6e}",
        p.infinity_mass, p.lower_truncation_mass, p.float_slack, p.delta_bound
    );
    if let Some(e) = p.rdp_epsilon {
        let _ = writeln!(s, "  RDP instead   ε = {} (improved conversion)", num6(e));
    }
    if let Some(d) = p.rdp_delta {
        let _ = writeln!(s, "  RDP instead   δ = {d:.6e} (improved conversion)");
    }
}

/// An order α: six decimals, or `1 + (α − 1)` when α is within 10⁻⁴ of 1
/// (six decimals would print an admissible α_max as "1.000000").
fn order(alpha: f64) -> String {
    let am1 = alpha - 1.0;
    if am1 > 0.0 && am1 < 1e-4 { format!("1 + {am1:.3e}") } else { num6(alpha) }
}

/// Six decimals, or scientific notation for magnitudes ≥ 10⁶.
fn num6(v: f64) -> String {
    if v.abs() >= 1e6 { format!("{v:.6e}") } else { format!("{v:.6}") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpdp::{Draws, Kernel, ReleaseParams};

    #[test]
    fn cells_and_text_cover_every_component() {
        assert_eq!(cell(&Value::Null), "");
        assert_eq!(cell(&serde_json::json!("inf")), "inf");
        assert_eq!(cell(&serde_json::json!(0.05)), "0.05");
        let p = |n| ReleaseParams::new(Kernel::exponential(1.0).unwrap(), "interval:0,1".parse().unwrap(), n, 1.0, 5.0);
        let mut acc = gpdp::RdpAccountant::new();
        acc.compose_release(p(10).check().unwrap(), Draws::new(2).unwrap())
            .compose_release(p(20).check().unwrap(), Draws::ONE);
        let r = acc.epsilon(0.05, gpdp::Conversion::Improved).unwrap();
        let t = report_text(&r);
        assert!(t.contains("2 composed releases (3 draws in all)"), "{t}");
        assert!(t.contains("n = 10") && t.contains("n = 20"), "{t}");
    }
}
