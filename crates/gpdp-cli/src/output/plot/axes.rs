//! Axes: linear and log ranges, tick positions and labels (the linear tick
//! rule is the library's `gpdp::postprocess::palette`).

use super::*;

/// One axis in drawing units (log10 of the data on a log axis), with its
/// tick positions and labels.
pub(super) struct Axis {
    pub(super) log: bool,
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) ticks: Vec<(f64, String)>,
    pub(super) minor: Vec<f64>,
}

impl Axis {
    /// A linear axis over [lo, hi] (lo < hi) with about `target` ticks.
    pub(super) fn linear(lo: f64, hi: f64, target: usize) -> Axis {
        let step = nice_step(hi - lo, target);
        let mag = lo.abs().max(hi.abs());
        let ticks = linear_ticks(lo, hi, step).into_iter().map(|v| (v, fmt_tick(v, step, mag))).collect();
        Axis { log: false, lo, hi, ticks, minor: Vec::new() }
    }

    /// A log axis over [10^lo, 10^hi] (given as exponents, lo < hi).
    pub(super) fn log(lo: f64, hi: f64) -> Axis {
        let (ticks, minor) = log_ticks(lo, hi);
        Axis { log: true, lo, hi, ticks, minor }
    }

    /// Data value → drawing units (None if it cannot be shown on this axis).
    pub(super) fn tr(&self, v: f64) -> Option<f64> {
        if !v.is_finite() {
            None
        } else if self.log {
            (v > 0.0).then(|| v.log10())
        } else {
            Some(v)
        }
    }

    pub(super) fn coord(&self) -> AxisCoord {
        AxisCoord {
            lo: self.lo,
            hi: self.hi,
            bold: self.ticks.iter().map(|t| t.0).collect(),
            light: self.minor.clone(),
        }
    }

    /// The label of the tick nearest to `v`.
    pub(super) fn label(&self, v: f64) -> String {
        self.ticks
            .iter()
            .min_by(|a, b| (a.0 - v).abs().total_cmp(&(b.0 - v).abs()))
            .map(|t| t.1.clone())
            .unwrap_or_default()
    }

    pub(super) fn label_width<DB: DrawingBackend>(&self, area: &Area<DB>, style: &TextStyle) -> u32 {
        self.ticks.iter().map(|t| area.estimate_text_size(&t.1, style).map(|s| s.0).unwrap_or(0)).max().unwrap_or(0)
    }
}

/// A linear coordinate over [lo, hi] (drawing units) with given tick
/// positions (bold) and minor grid lines (light).
pub(super) struct AxisCoord {
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) bold: Vec<f64>,
    pub(super) light: Vec<f64>,
}

impl Ranged for AxisCoord {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let f = (v - self.lo) / (self.hi - self.lo);
        let p = limit.0 as f64 + f * (limit.1 - limit.0) as f64;
        p.clamp(-1e7, 1e7).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() { self.light.clone() } else { self.bold.clone() }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// The data range [lo, hi] of an axis, padded by `pad` of its span, from
/// values already in drawing units; a degenerate range is widened.
pub(super) fn auto_range(vals: impl Iterator<Item = f64>, pad: f64, log: bool) -> Option<(f64, f64)> {
    let (lo, hi) = vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)));
    if !lo.is_finite() {
        return None;
    }
    if hi - lo <= 1e-12 * lo.abs().max(hi.abs()).max(1e-300) {
        let d = if log { 0.5 } else { 0.1 * lo.abs().max(1.0) };
        return Some((lo - d, hi + d));
    }
    let d = pad * (hi - lo);
    Some((lo - d, hi + d))
}

use gpdp::postprocess::palette::{linear_ticks, nice_step, tick_decimals};

/// A tick label for `v` on an axis with tick spacing `step` and largest
/// magnitude `mag`: plain decimals (plain integers up to 10⁸ when the
/// spacing is whole, e.g. metres of a projected CRS: "385000"), or
/// scientific notation for very large or very small numbers.
pub(super) fn fmt_tick(v: f64, step: f64, mag: f64) -> String {
    if (1e5..1e8).contains(&mag) && step >= 1.0 && step.fract() == 0.0 {
        return format!("{v:.0}");
    }
    if !(1e-3..1e5).contains(&mag) {
        if v == 0.0 {
            return "0".into();
        }
        let digits = (mag.log10().floor() - step.log10().floor()).clamp(0.0, 4.0) as usize;
        return format!("{:.*e}", digits, v);
    }
    format!("{:.*}", tick_decimals(step), v)
}

pub(super) fn superscript(k: i64) -> String {
    k.to_string()
        .chars()
        .map(|c| match c {
            '-' => '⁻',
            '0' => '⁰',
            '1' => '¹',
            '2' => '²',
            '3' => '³',
            '4' => '⁴',
            '5' => '⁵',
            '6' => '⁶',
            '7' => '⁷',
            '8' => '⁸',
            _ => '⁹',
        })
        .collect()
}

/// 10^k as "0.01" … "10000" or "10⁻⁵".
pub(super) fn fmt_pow10(k: i64) -> String {
    match k {
        -3..=-1 => format!("{:.*}", (-k) as usize, 10f64.powi(k as i32)),
        0..=4 => format!("{}", 10i64.pow(k as u32)),
        _ => format!("10{}", superscript(k)),
    }
}

/// Ticks of a log axis over exponents [lo, hi]: decades (thinned when
/// many), else 1-2-5 multiples, else linear ticks; minor lines at 2…9 × 10^k
/// when few decades are shown.
pub(super) fn log_ticks(lo: f64, hi: f64) -> (Vec<(f64, String)>, Vec<f64>) {
    let k0 = (lo - 1e-9).ceil() as i64;
    let k1 = (hi + 1e-9).floor() as i64;
    let inside = |t: f64| t >= lo - 1e-9 && t <= hi + 1e-9;
    let mut minor = Vec::new();
    if hi - lo <= 7.0 {
        for k in (lo.floor() as i64)..=(hi.ceil() as i64) {
            for m in 2..=9 {
                let t = k as f64 + (m as f64).log10();
                if inside(t) {
                    minor.push(t);
                }
            }
        }
    }
    if k1 - k0 >= 1 {
        let every = ((k1 - k0 + 1) as f64 / 7.0).ceil().max(1.0) as i64;
        let ticks = (k0..=k1).filter(|k| k.rem_euclid(every) == 0).map(|k| (k as f64, fmt_pow10(k))).collect();
        return (ticks, minor);
    }
    let mut ticks = Vec::new();
    for k in (lo.floor() as i64 - 1)..=(hi.ceil() as i64) {
        for m in [1.0, 2.0, 5.0] {
            let t = k as f64 + f64::log10(m);
            if inside(t) {
                let v = m * 10f64.powi(k as i32);
                let label = if m == 1.0 { fmt_pow10(k) } else { fmt_tick(v, 10f64.powi(k as i32), v) };
                ticks.push((t, label));
            }
        }
    }
    if ticks.len() >= 3 {
        return (ticks, minor);
    }
    let (a, b) = (10f64.powf(lo), 10f64.powf(hi));
    let step = nice_step(b - a, 4);
    let ticks =
        linear_ticks(a, b, step).into_iter().filter(|&v| v > 0.0).map(|v| (v.log10(), fmt_tick(v, step, b))).collect();
    (ticks, Vec::new())
}
