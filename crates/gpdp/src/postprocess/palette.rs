//! The colour maps and the axis-tick rule shared by every front end: the
//! PNG/SVG figures of `gpdp-cli` and the map viewer of `gpdp serve` (which
//! receives these numbers from the server as a generated JavaScript module,
//! never as a second hand-typed copy).
//!
//! Everything here is a pure function of its arguments; nothing depends on
//! data other than the values passed in.
//!
//! Guarantees:
//! - [`color`] maps `t` ∈ [0, 1] (clamped; NaN reads as 0) to an sRGB triple
//!   by piecewise-linear interpolation between the palette's [`stops`],
//!   rounding each channel half away from zero. Equal `t` ⇒ equal colour, in
//!   every front end that uses these stops and this interpolation.
//! - [`color_range`] is the one rule for the value range a colour map spans.
//! - [`nice_step`] / [`linear_ticks`] are the one rule for linear axis ticks.

/// Colour maps for heat maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Palette {
    /// Perceptually uniform dark violet → yellow (matplotlib's viridis,
    /// sampled at 9 evenly spaced stops).
    Viridis,
    /// Blue → white → red (ColorBrewer RdBu, 11 stops); white at the middle
    /// of the colour range, which by default is symmetric about 0:
    /// [−m, m] with m = max |v|.
    Diverging,
    /// Black → white.
    Grey,
}

impl Palette {
    /// Every palette, in a fixed order.
    pub const ALL: [Palette; 3] = [Palette::Viridis, Palette::Diverging, Palette::Grey];

    /// A stable lower-case name (`viridis`, `diverging`, `grey`).
    pub fn name(self) -> &'static str {
        match self {
            Palette::Viridis => "viridis",
            Palette::Diverging => "diverging",
            Palette::Grey => "grey",
        }
    }
}

/// Viridis at t = 0, 1/8, …, 1.
pub const VIRIDIS: [[u8; 3]; 9] = [
    [68, 1, 84],
    [71, 44, 122],
    [59, 81, 139],
    [44, 113, 142],
    [33, 144, 141],
    [39, 173, 129],
    [92, 200, 99],
    [170, 220, 50],
    [253, 231, 37],
];

/// ColorBrewer RdBu (reversed: blue at t = 0) at t = 0, 1/10, …, 1.
pub const RDBU: [[u8; 3]; 11] = [
    [5, 48, 97],
    [33, 102, 172],
    [67, 147, 195],
    [146, 197, 222],
    [209, 229, 240],
    [247, 247, 247],
    [253, 219, 199],
    [244, 165, 130],
    [214, 96, 77],
    [178, 24, 43],
    [103, 0, 31],
];

/// Black → white.
pub const GREY: [[u8; 3]; 2] = [[0, 0, 0], [255, 255, 255]];

/// The evenly spaced colour stops of a palette (at least two): stop `k` of
/// `n` is the colour at t = k / (n − 1).
pub fn stops(p: Palette) -> &'static [[u8; 3]] {
    match p {
        Palette::Viridis => &VIRIDIS,
        Palette::Diverging => &RDBU,
        Palette::Grey => &GREY,
    }
}

/// The colour of `t` ∈ [0, 1] (clamped; NaN → 0) in palette `p`: linear
/// interpolation between the two neighbouring [`stops`], each channel
/// rounded half away from zero.
pub fn color(p: Palette, t: f64) -> [u8; 3] {
    let table = stops(p);
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let x = t * (table.len() - 1) as f64;
    let k = (x.floor() as usize).min(table.len() - 2);
    let f = x - k as f64;
    let (a, b) = (table[k], table[k + 1]);
    let mix = |u: u8, v: u8| (u as f64 + f * (v as f64 - u as f64)).round() as u8;
    [mix(a[0], b[0]), mix(a[1], b[1]), mix(a[2], b[2])]
}

/// The colour of value `v` on a colour range `(lo, hi)` (lo < hi):
/// [`color`] of (v − lo) / (hi − lo).
pub fn color_of_value(p: Palette, v: f64, (lo, hi): (f64, f64)) -> [u8; 3] {
    color(p, (v - lo) / (hi - lo))
}

/// The value range a colour map spans, from the values' `(min, max)` and an
/// optional explicit range (used as given). Otherwise: for
/// [`Palette::Diverging`] the symmetric [−m, m], m = max(|min|, |max|)
/// ([−1, 1] when m = 0); for the others [min, max], widened by
/// 0.1 · max(|min|, 1) on both sides when min = max. Always lo < hi for
/// finite input.
pub fn color_range(p: Palette, (min, max): (f64, f64), explicit: Option<(f64, f64)>) -> (f64, f64) {
    if let Some(r) = explicit {
        return r;
    }
    if p == Palette::Diverging {
        let m = min.abs().max(max.abs());
        return if m > 0.0 { (-m, m) } else { (-1.0, 1.0) };
    }
    if max > min {
        (min, max)
    } else {
        let d = 0.1 * min.abs().max(1.0);
        (min - d, max + d)
    }
}

/// The "nice" tick-step rule: a raw step `span / target` with mantissa
/// f ∈ [1, 10) becomes m × 10^k with m the first `MANTISSA` whose bound
/// exceeds f (else 10): `(bound, m)`.
pub const NICE_STEPS: [(f64, f64); 3] = [(1.5, 1.0), (3.0, 2.0), (7.0, 5.0)];

/// Relative tolerance with which a tick at an end of the range is kept.
pub const TICK_TOLERANCE: f64 = 1e-9;

/// 1, 2 or 5 × 10^k, about `span / target` (see [`NICE_STEPS`]).
pub fn nice_step(span: f64, target: usize) -> f64 {
    let raw = span / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let m = NICE_STEPS.iter().find(|(bound, _)| f < *bound).map_or(10.0, |(_, m)| *m);
    m * mag
}

/// The multiples of `step` in [lo, hi] (ends kept within
/// [`TICK_TOLERANCE`] steps), at most 200; zero is exactly 0.
pub fn linear_ticks(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    let k0 = (lo / step - TICK_TOLERANCE).ceil() as i64;
    let k1 = (hi / step + TICK_TOLERANCE).floor() as i64;
    (k0..=k1).take(200).map(|k| if k == 0 { 0.0 } else { k as f64 * step }).collect()
}

/// The number of decimals that shows every multiple of `step` exactly
/// (0 for steps ≥ 1).
pub fn tick_decimals(step: f64) -> usize {
    (-(step.log10() + TICK_TOLERANCE).floor()).max(0.0) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn palette_ends_middle_and_clamping() {
        assert_eq!(color(Palette::Diverging, 0.5), [247, 247, 247]);
        assert_eq!(color(Palette::Viridis, 0.0), [68, 1, 84]);
        assert_eq!(color(Palette::Viridis, 1.0), [253, 231, 37]);
        assert_eq!(color(Palette::Viridis, 0.125), [71, 44, 122]);
        // Halfway between stops 0 and 1: (68+71)/2 = 69.5 → 70, 22.5 → 23, 103.
        assert_eq!(color(Palette::Viridis, 0.0625), [70, 23, 103]);
        assert_eq!(color(Palette::Grey, 2.0), [255, 255, 255]);
        assert_eq!(color(Palette::Grey, -1.0), [0, 0, 0]);
        assert_eq!(color(Palette::Grey, f64::NAN), [0, 0, 0]);
        assert_eq!(color(Palette::Grey, 0.5), [128, 128, 128]);
        for p in Palette::ALL {
            assert!(stops(p).len() >= 2);
            assert_eq!(color(p, 1.0), *stops(p).last().unwrap());
            assert_eq!(color(p, 0.0), stops(p)[0]);
        }
    }

    #[test]
    fn color_ranges() {
        assert_eq!(color_range(Palette::Diverging, (-0.5, 2.0), None), (-2.0, 2.0));
        assert_eq!(color_range(Palette::Diverging, (0.0, 0.0), None), (-1.0, 1.0));
        assert_eq!(color_range(Palette::Viridis, (1.0, 3.0), None), (1.0, 3.0));
        assert_eq!(color_range(Palette::Viridis, (5.0, 5.0), None), (4.5, 5.5));
        assert_eq!(color_range(Palette::Grey, (0.0, 0.0), None), (-0.1, 0.1));
        assert_eq!(color_range(Palette::Viridis, (1.0, 3.0), Some((0.0, 9.0))), (0.0, 9.0));
        assert_eq!(color_of_value(Palette::Viridis, 3.0, (1.0, 3.0)), [253, 231, 37]);
    }

    #[test]
    fn ticks() {
        assert_eq!(nice_step(1.0, 5), 0.2);
        assert_eq!(nice_step(37.0, 8), 5.0);
        assert_eq!(nice_step(37.0, 5), 10.0);
        assert_eq!(nice_step(0.003, 1), 0.005);
        assert_eq!(nice_step(0.0029, 1), 0.002);
        assert_eq!(linear_ticks(-0.05, 1.05, 0.2), vec![0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]);
        assert_eq!(linear_ticks(-1.0, 1.0, 0.5), vec![-1.0, -0.5, 0.0, 0.5, 1.0]);
        assert_eq!(tick_decimals(0.2), 1);
        assert_eq!(tick_decimals(0.05), 2);
        assert_eq!(tick_decimals(5.0), 0);
        assert_eq!(tick_decimals(0.1), 1);
    }
}
