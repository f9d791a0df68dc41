// Colours of the map: the library's palettes (gpdp::postprocess::palette),
// received from the server as the generated module palette.js — the same
// stops, the same interpolation and the same colour-range rule as the PNG and
// SVG figures of `gpdp release`, so a value has the same colour in both.

import { PALETTES } from './palette.js';

// The colour of t ∈ [0, 1] (clamped; NaN → 0) in palette `name`: linear
// interpolation between the two neighbouring stops, each channel rounded
// half away from zero (as Rust's f64::round; the mixed values are ≥ 0, where
// Math.round agrees).
export function colour(name, t) {
  const stops = PALETTES[name];
  const u = Number.isNaN(t) ? 0 : Math.min(1, Math.max(0, t));
  const x = u * (stops.length - 1);
  const k = Math.min(Math.floor(x), stops.length - 2);
  const f = x - k;
  const a = stops[k];
  const b = stops[k + 1];
  return [0, 1, 2].map((c) => Math.round(a[c] + f * (b[c] - a[c])));
}

// The value range a colour map spans (gpdp::postprocess::palette::color_range):
// symmetric [−m, m] for the diverging palette, else [min, max], widened by
// 0.1 · max(|min|, 1) on both sides when min = max.
export function colourRange(name, min, max) {
  if (name === 'diverging') {
    const m = Math.max(Math.abs(min), Math.abs(max));
    return m > 0 ? [-m, m] : [-1, 1];
  }
  if (max > min) return [min, max];
  const d = 0.1 * Math.max(Math.abs(min), 1);
  return [min - d, max + d];
}

// The colour of value v on the colour range [lo, hi].
export function colourOfValue(name, v, lo, hi) {
  return colour(name, (v - lo) / (hi - lo));
}

export const rgb = (c) => `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
