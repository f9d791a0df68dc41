// The viewer's state and small page helpers, shared by its modules.

export const MARGIN = { left: 78, right: 36, top: 14, bottom: 48 };
export const GRID_TARGET_2D = 40; // ≈ 40 × 40 revealed points for the map
export const GRID_TARGET_1D = 64;
export const FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif';

export const state = {
  id: null,
  release: null,
  dim: 0,
  path: 0,
  grid: null, // {counts, lower, upper, values: Float64Array (NaN = none), min, max, query}
  marks: [], // {point, value, decimals, seq}
  cursor: null, // keyboard cursor (domain coordinates)
  cursorVisible: false, // shown after keyboard use only
  layout: null,
  heat: null, // offscreen canvas holding the heat image at device resolution
  heatKey: '',
  seq: 0,
  gridOverride: null,
};

export const $ = (id) => document.getElementById(id);
export const enc = encodeURIComponent;
export const clamp = (x, lo, hi) => Math.min(hi, Math.max(lo, x));

// -------------------------------------------------------------- messages

export function showError(e) {
  const el = $('error');
  el.textContent = e instanceof Error ? e.message : String(e);
  el.hidden = false;
}

export function clearError() {
  const el = $('error');
  el.textContent = '';
  el.hidden = true;
}

export function unitsSuffix() {
  const u = state.release && state.release.units;
  return u ? ` ${u}` : '';
}

// The coordinates' names: the release's covariate columns or its CRS's axes
// when it states them (with the CRS's unit), else x₁, x₂.
export function axisNames() {
  const r = state.release || {};
  const unit = r.crs && r.crs.unit ? ` [${r.crs.unit}]` : '';
  if (Array.isArray(r.axes) && r.axes.length === state.dim) return r.axes.map((a) => `${a}${unit}`);
  return state.dim === 2 ? [`x₁${unit}`, `x₂${unit}`] : [`x₁${unit}`];
}

// Axis titles of the map: the names, with the compass directions when the
// release names no coordinates (a CRS's easting/northing say it themselves).
export function axisTitles() {
  const r = state.release || {};
  const names = axisNames();
  if (state.dim === 2 && !(Array.isArray(r.axes) && r.axes.length === 2)) {
    return [`${names[0]} (east →)`, `${names[1]} (north →)`];
  }
  return names;
}
