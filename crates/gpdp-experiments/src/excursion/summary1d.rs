//! The summary row of one 1-D study configuration with the columns of the
//! paper's Tables 1–3 (docs/experiments.md), and its formatting as in the paper:
//! "median [q25, q75]" over pairs, with per-pair ratios
//!
//! ```text
//! relative BCE increase_j = L_BCE(θ_priv)_j / L_BCE(θ*)_j − 1
//! relative IoU gap_j      = 1 − IoU_Lpath(θ_priv)_j / IoU(θ*)_j
//! ```
//!
//! Quartiles interpolate linearly between order statistics (numpy's
//! default, `gpdp::postprocess::metrics::median_iqr`).

use gpdp::postprocess::metrics::median_iqr;
use serde::Serialize;

use super::evaluate1d::PairEval;
use super::search::Candidate;
use gpdp::Draws;
use gpdp::privacy::SensitivityConstants;

/// q25, median, q75 over pairs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct Quartiles {
    /// 25% quantile.
    pub q25: f64,
    /// Median.
    pub median: f64,
    /// 75% quantile.
    pub q75: f64,
}

impl Quartiles {
    /// From values (NaNs ignored).
    pub fn of(values: &[f64]) -> Self {
        let (q25, median, q75) = median_iqr(values);
        Quartiles { q25, median, q75 }
    }
}

/// One selected θ with its search value, ε and cutoffs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct Selection {
    /// θ = (ℓ, r, σ).
    pub theta: Candidate,
    /// Mean integrated BCE over the main pairs (the search objective).
    pub mean_bce: f64,
    /// ε_L(θ) at the study's δ (∞ for σ = 0).
    pub epsilon: f64,
    /// C of {p ≥ C}, chosen on the validation pairs.
    pub set_cutoff: f64,
    /// Mean validation IoU at C.
    pub set_cutoff_validation_iou: f64,
    /// Vote cutoff c of the L-path release (½ and not tuned when L = 1).
    pub vote_cutoff: f64,
    /// Mean validation IoU at c (NaN when not tuned).
    pub vote_cutoff_validation_iou: f64,
}

/// The summary of one configuration.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Summary1d {
    /// Training-set size n = |D|.
    pub n: usize,
    /// Noise bound M_ξ.
    pub noise: f64,
    /// NSR = M_ξ/(1 − M_ξ).
    pub nsr: f64,
    /// Paths per release L.
    pub draws: Draws,
    /// Privacy budget ε₀ of the constrained search.
    pub epsilon_max: f64,
    /// Sensitivity constants used for every ε.
    pub constants: SensitivityConstants,
    /// θ* (unconstrained).
    pub unconstrained: Selection,
    /// θ_priv (ε < ε₀).
    pub private: Selection,
    /// d_eff at θ*.
    pub d_eff_unconstrained: Quartiles,
    /// d_eff at θ_priv.
    pub d_eff_private: Quartiles,
    /// Per-pair relative BCE increase.
    pub relative_bce_increase: Quartiles,
    /// IoU of {p ≥ C} at θ*.
    pub iou_unconstrained: Quartiles,
    /// Per-pair mean IoU of the released L-path set at θ_priv.
    pub path_iou_mean: Quartiles,
    /// Per-pair SD of that IoU.
    pub path_iou_sd: Quartiles,
    /// Per-pair relative IoU gap.
    pub relative_iou_gap: Quartiles,
}

/// Aggregates the per-pair rows of θ* and θ_priv (same pairs, same order).
#[allow(clippy::too_many_arguments)]
pub fn summarise(
    n: usize,
    noise: f64,
    draws: Draws,
    epsilon_max: f64,
    constants: SensitivityConstants,
    unconstrained: Selection,
    private: Selection,
    star: &[PairEval],
    priv_: &[PairEval],
) -> Summary1d {
    let q = |f: &dyn Fn(&PairEval) -> f64, rows: &[PairEval]| Quartiles::of(&rows.iter().map(f).collect::<Vec<_>>());
    let rel_bce: Vec<f64> = star.iter().zip(priv_).map(|(a, b)| b.bce / a.bce - 1.0).collect();
    let gap: Vec<f64> = star.iter().zip(priv_).map(|(a, b)| 1.0 - b.path_iou_mean / a.set_iou).collect();
    Summary1d {
        n,
        noise,
        nsr: noise / (1.0 - noise),
        draws,
        epsilon_max,
        constants,
        unconstrained,
        private,
        d_eff_unconstrained: q(&|r| r.d_eff, star),
        d_eff_private: q(&|r| r.d_eff, priv_),
        relative_bce_increase: Quartiles::of(&rel_bce),
        iou_unconstrained: q(&|r| r.set_iou, star),
        path_iou_mean: q(&|r| r.path_iou_mean, priv_),
        path_iou_sd: q(&|r| r.path_iou_sd, priv_),
        relative_iou_gap: Quartiles::of(&gap),
    }
}

const SUPERSCRIPT: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];

/// ε as in the paper: 3 significant digits below 1000 ("63.6", "500"),
/// else one significant digit times a power of ten ("2·10⁴", "10⁷"); "∞".
pub fn format_epsilon(e: f64) -> String {
    if e.is_nan() {
        return "NaN".into();
    }
    if e.is_infinite() {
        return "∞".into();
    }
    if e < 999.5 {
        let decimals = if e <= 0.0 { 2 } else { (2 - e.log10().floor() as i32).max(0) as usize };
        return format!("{e:.decimals$}");
    }
    let mut k = e.log10().floor() as i32;
    let mut a = (e / 10f64.powi(k)).round() as i64;
    if a >= 10 {
        a = 1;
        k += 1;
    }
    let exp: String = k.to_string().chars().map(|c| SUPERSCRIPT[c.to_digit(10).unwrap_or(0) as usize]).collect();
    if a == 1 { format!("10{exp}") } else { format!("{a}·10{exp}") }
}

/// `v` with at most `digits` significant digits, trailing zeros dropped
/// ("0.3675" for 0.36749999999999994, "9" for 9.0000000001).
pub fn format_sig(v: f64, digits: usize) -> String {
    if !v.is_finite() || v == 0.0 {
        return if v.is_infinite() { "∞".into() } else { format!("{v}") };
    }
    let decimals = (digits as i32 - 1 - v.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.decimals$}");
    let s = if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
    s.replace('-', "−")
}

/// θ = (ℓ, r, σ) with 4 significant digits each.
pub fn format_theta(c: &Candidate) -> String {
    format!("({}, {}, {})", format_sig(c.lengthscale, 4), format_sig(c.ridge, 4), format_sig(c.scale, 4))
}

fn fmt_num(v: f64, decimals: usize) -> String {
    if v.is_nan() { "NaN".into() } else { format!("{v:.decimals$}").replace('-', "−") }
}

fn fmt_quartiles(q: &Quartiles, decimals: usize, unit: &str) -> String {
    format!(
        "{}{unit} [{}{unit}, {}{unit}]",
        fmt_num(q.median, decimals),
        fmt_num(q.q25, decimals),
        fmt_num(q.q75, decimals)
    )
}

/// d_eff as in the paper: one decimal from 10 on ("52.7 [52.0, 53.4]"),
/// two below ("8.47 [8.42, 8.53]").
pub fn format_d_eff(q: &Quartiles) -> String {
    fmt_quartiles(q, if q.median.abs() >= 10.0 { 1 } else { 2 }, "")
}

/// A ratio as a percentage as in the paper: no decimals from 100% on
/// ("115% [67%, 187%]"), one below ("8.8% [0.2%, 19.4%]"); values that
/// round to zero as "0%" (as the paper's "2.2% [0%, 7.4%]").
pub fn format_percent(q: &Quartiles) -> String {
    let p = Quartiles { q25: 100.0 * q.q25, median: 100.0 * q.median, q75: 100.0 * q.q75 };
    let d = if p.median.abs() >= 100.0 { 0 } else { 1 };
    let f = |v: f64| {
        let txt = fmt_num(v, d);
        if txt.chars().all(|c| matches!(c, '0' | '.' | '−')) { "0%".to_string() } else { format!("{txt}%") }
    };
    format!("{} [{}, {}]", f(p.median), f(p.q25), f(p.q75))
}

/// IoU-type values with three decimals ("0.874 [0.806, 0.927]").
pub fn format_iou(q: &Quartiles) -> String {
    fmt_quartiles(q, 3, "")
}

/// The column headers of [`markdown_table`] (the paper's Tables 1–3).
pub fn headers(with_n: bool, draws: Draws, epsilon_max: f64) -> Vec<String> {
    let e0 = format!("{epsilon_max}");
    let path = if draws == Draws::ONE { "1-path".to_string() } else { format!("{draws}-path") };
    let mut h = vec![];
    if with_n {
        h.push("\\|D\\|".to_string());
    }
    h.extend([
        "M_ξ".to_string(),
        "NSR".to_string(),
        "ε, unconstrained".to_string(),
        "d_eff, unconstrained".to_string(),
        format!("d_eff, ε < {e0}"),
        "relative BCE increase".to_string(),
        "IoU, unconstrained".to_string(),
        format!("{path} IoU mean, ε < {e0}"),
        format!("{path} IoU SD, ε < {e0}"),
        "relative IoU gap".to_string(),
    ]);
    h
}

/// One formatted row of [`markdown_table`].
pub fn row_cells(s: &Summary1d, with_n: bool) -> Vec<String> {
    let mut r = vec![];
    if with_n {
        r.push(s.n.to_string());
    }
    r.extend([
        format!("{}", s.noise),
        format!("{:.2}", s.nsr),
        format_epsilon(s.unconstrained.epsilon),
        format_d_eff(&s.d_eff_unconstrained),
        format_d_eff(&s.d_eff_private),
        format_percent(&s.relative_bce_increase),
        format_iou(&s.iou_unconstrained),
        format_iou(&s.path_iou_mean),
        format_iou(&s.path_iou_sd),
        format_percent(&s.relative_iou_gap),
    ]);
    r
}

/// A markdown table, one row per configuration, with the paper's columns
/// (and a |D| column first when `with_n`). Rows must share L and ε₀ (the
/// headers use the first row's).
pub fn markdown_table(rows: &[Summary1d], with_n: bool) -> String {
    let (draws, e0) = rows.first().map_or((Draws::ONE, 10.0), |s| (s.draws, s.epsilon_max));
    let h = headers(with_n, draws, e0);
    let mut out = format!("| {} |\n|{}\n", h.join(" | "), "---|".repeat(h.len()));
    for s in rows {
        out.push_str(&format!("| {} |\n", row_cells(s, with_n).join(" | ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(q25: f64, median: f64, q75: f64) -> Quartiles {
        Quartiles { q25, median, q75 }
    }

    #[test]
    fn formats_like_the_paper() {
        assert_eq!(format_epsilon(23_456.0), "2·10⁴");
        assert_eq!(format_epsilon(9.6e6), "10⁷");
        assert_eq!(format_epsilon(2.04e3), "2·10³");
        assert_eq!(format_epsilon(500.2), "500");
        assert_eq!(format_epsilon(63.61), "63.6");
        assert_eq!(format_epsilon(39.0), "39.0");
        assert_eq!(format_epsilon(9.871), "9.87");
        assert_eq!(format_epsilon(f64::INFINITY), "∞");
        assert_eq!(format_d_eff(&q(52.04, 52.71, 53.38)), "52.7 [52.0, 53.4]");
        assert_eq!(format_d_eff(&q(8.424, 8.471, 8.53)), "8.47 [8.42, 8.53]");
        assert_eq!(format_percent(&q(0.67, 1.151, 1.87)), "115% [67%, 187%]");
        assert_eq!(format_percent(&q(0.002, 0.088, 0.194)), "8.8% [0.2%, 19.4%]");
        assert_eq!(format_percent(&q(0.0, 0.022, 0.074)), "2.2% [0%, 7.4%]");
        assert_eq!(format_percent(&q(-0.0031, 0.006, 0.027)), "0.6% [−0.3%, 2.7%]");
        assert_eq!(format_percent(&q(-0.0004, 0.006, 0.027)), "0.6% [0%, 2.7%]");
        assert_eq!(format_iou(&q(0.8061, 0.8744, 0.927)), "0.874 [0.806, 0.927]");
        assert_eq!(format_sig(0.36749999999999994, 4), "0.3675");
        assert_eq!(format_sig(9.000000000001, 4), "9");
        assert_eq!(format_sig(0.022000000000000006, 4), "0.022");
        assert_eq!(format_sig(2.0999999999999996, 4), "2.1");
        assert_eq!(format_sig(1234.6, 4), "1235");
        assert_eq!(
            format_theta(&Candidate { lengthscale: 0.119, ridge: 5.1, scale: 0.048999999999999995 }),
            "(0.119, 5.1, 0.049)"
        );
    }

    #[test]
    fn aggregation_and_table() {
        let ev = |bce: f64, d_eff: f64, set_iou: f64, path: f64, sd: f64| PairEval {
            bce,
            d_eff,
            set_iou,
            path_iou_mean: path,
            path_iou_sd: sd,
        };
        let star = [ev(1.0, 8.0, 0.8, 0.7, 0.0), ev(2.0, 9.0, 0.9, 0.8, 0.0), ev(4.0, 10.0, 1.0, 0.9, 0.0)];
        let priv_ = [ev(1.5, 2.0, 0.7, 0.6, 0.05), ev(2.0, 2.1, 0.8, 0.72, 0.04), ev(3.0, 2.2, 0.9, 0.5, 0.03)];
        let sel = |scale: f64, epsilon: f64| Selection {
            theta: Candidate { lengthscale: 0.5, ridge: 1.0, scale },
            mean_bce: 1.0,
            epsilon,
            set_cutoff: 0.5,
            set_cutoff_validation_iou: 0.9,
            vote_cutoff: 0.5,
            vote_cutoff_validation_iou: f64::NAN,
        };
        let s = summarise(
            100,
            0.5,
            Draws::ONE,
            10.0,
            SensitivityConstants::Proven,
            sel(0.3, 63.6),
            sel(1.0, 9.9),
            &star,
            &priv_,
        );
        assert_eq!(s.nsr, 1.0);
        assert_eq!(s.d_eff_unconstrained, q(8.5, 9.0, 9.5));
        // Relative BCE increase per pair: 0.5, 0, −0.25.
        assert_eq!(s.relative_bce_increase, q(-0.125, 0.0, 0.25));
        // Relative IoU gap per pair: 1 − 0.6/0.8, 1 − 0.72/0.9, 1 − 0.5/1.
        let g = [0.25, 0.2, 0.5];
        assert!((s.relative_iou_gap.median - g[0]).abs() < 1e-12);
        assert!((s.relative_iou_gap.q25 - 0.225).abs() < 1e-12 && (s.relative_iou_gap.q75 - 0.375).abs() < 1e-12);
        assert_eq!(s.path_iou_sd.median, 0.04);
        let md = markdown_table(std::slice::from_ref(&s), true);
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(
            lines[0].starts_with("| \\|D\\| | M_ξ | NSR | ε, unconstrained | d_eff, unconstrained | d_eff, ε < 10 |")
        );
        assert_eq!(
            lines[2],
            "| 100 | 0.5 | 1.00 | 63.6 | 9.00 [8.50, 9.50] | 2.10 [2.05, 2.15] | 0% [−12.5%, 25.0%] | 0.900 [0.850, 0.950] \
             | 0.600 [0.550, 0.660] | 0.040 [0.035, 0.045] | 25.0% [22.5%, 37.5%] |"
        );
    }
}
