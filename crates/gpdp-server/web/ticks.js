// Axis ticks and number formats. The tick rule is the library's
// (gpdp::postprocess::palette::{nice_step, linear_ticks, tick_decimals}); its
// constants come from the server's generated module palette.js.

import { NICE_STEPS, TICK_TOLERANCE } from './palette.js';

// 1, 2 or 5 × 10^k, about span / target.
export function niceStep(span, target) {
  const raw = span / Math.max(1, target);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const f = raw / mag;
  const hit = NICE_STEPS.find(([bound]) => f < bound);
  return (hit ? hit[1] : 10) * mag;
}

// The multiples of `step` in [lo, hi] (ends kept within TICK_TOLERANCE
// steps), at most 200; zero is exactly 0.
export function linearTicks(lo, hi, step) {
  const k0 = Math.ceil(lo / step - TICK_TOLERANCE);
  const k1 = Math.floor(hi / step + TICK_TOLERANCE);
  const ticks = [];
  for (let k = k0; k <= k1 && ticks.length < 200; k++) ticks.push(k === 0 ? 0 : k * step);
  return ticks;
}

// Decimals that show every multiple of `step` exactly.
export function tickDecimals(step) {
  return Math.max(0, -Math.floor(Math.log10(step) + TICK_TOLERANCE));
}

// About `count` round ticks over [lo, hi], with the decimals to print them.
export function niceTicks(lo, hi, count) {
  if (!(hi > lo) || !Number.isFinite(lo) || !Number.isFinite(hi)) return { ticks: [lo], decimals: 0 };
  const step = niceStep(hi - lo, count);
  return { ticks: linearTicks(lo, hi, step), decimals: tickDecimals(step) };
}

export function formatValue(v) {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a === 0) return '0';
  if (a >= 1e6 || a < 1e-3) return v.toExponential(3);
  const decimals = Math.max(0, 3 - Math.floor(Math.log10(a)));
  return v.toFixed(decimals);
}

export function formatCoord(x, decimals) {
  return decimals === null || decimals === undefined ? String(x) : x.toFixed(decimals);
}
