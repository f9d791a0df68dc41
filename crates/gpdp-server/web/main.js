// gpdp serve — viewer for a differentially private Gaussian-process release.
//
// ES modules, no dependencies, no bundler. It reads the release (GET
// /releases/{id}), draws a grid of the released sample path (GET
// /releases/{id}/grid) and evaluates the same path at clicked points (POST
// /releases/{id}/eval). All URLs are relative to the page, so the viewer also
// works when the service is mounted under a path prefix. This module holds
// the page text, the actions and the start-up; map.js draws.

import { $, GRID_TARGET_1D, GRID_TARGET_2D, axisNames, clamp, clearError, enc, showError, state, unitsSuffix } from './state.js';
import { ApiError, api } from './api.js';
import { formatCoord, formatValue } from './ticks.js';
import { aspectRatio, computeLayout, draw, mapColour, pixelToDomain, snapPoint } from './map.js';
import { selfCheck } from './selfcheck.js';

// ------------------------------------------------------------- page text

function setText(id, text) {
  $(id).textContent = text;
}

// ε and δ as shown to people: rounded up (never below the certified value),
// as the server's `display` gives them; the exact value in the tooltip.
function shownEpsilon(r) {
  return r.display && r.display.epsilon ? r.display.epsilon : String(r.epsilon);
}
function shownDelta(r) {
  return r.display && r.display.delta ? r.display.delta : String(r.delta);
}

// The statement in words: what (ε, δ) promise about one person's record.
function statementInWords(r) {
  const eps = Number(r.epsilon);
  const factor = Number.isFinite(eps) ? Math.exp(eps) : Infinity;
  const factorText = factor < 1000 ? factor.toPrecision(3) : factor.toExponential(2);
  const relation = String(r.neighbouring_relation || '');
  const whom = /change/.test(relation)
    ? 'one record’s response were changed (the record locations are public)'
    : 'one record were replaced by any other (its location and its response)';
  return (
    `In words: whatever anyone concludes from everything this release reveals, that conclusion would be ` +
    `at most e^ε ≈ ${factorText} times more (or less) likely if ${whom}, except with probability at most ` +
    `δ = ${shownDelta(r)}. Smaller ε and δ protect each record more; the map is one random draw, not the best estimate.`
  );
}

function renderFacts() {
  const r = state.release;
  const dl = $('facts');
  dl.textContent = '';
  const add = (k, v) => {
    const dt = document.createElement('dt');
    dt.textContent = k;
    const dd = document.createElement('dd');
    dd.textContent = v;
    dl.append(dt, dd);
    return dd;
  };
  add('Release', r.id);
  add('Status', r.status);
  add('ε (epsilon, rounded up)', shownEpsilon(r)).title = `certified ε = ${r.epsilon}`;
  add('δ (delta, rounded up)', shownDelta(r)).title = `certified δ = ${r.delta}`;
  if (r.crs && r.crs.label) add('Coordinates', r.crs.label);
  add('Sample paths released', String(r.draws));
  add('Units', r.units || 'not stated');
  axisNames().forEach((name, k) => add(`${name} extent`, `${r.lower[k]} to ${r.upper[k]}`));
  if (state.grid) {
    const g = state.grid;
    add('Map grid', `${g.counts.join(' × ')} revealed points (end points included)`);
    add('Value range on the grid', `${formatValue(g.min)} to ${formatValue(g.max)}${unitsSuffix()}`);
  }
  const dd = add('Points revealed by this path', '…');
  dd.id = 'facts-revealed';
  updateRevealed(Array.isArray(r.revealed) ? r.revealed[state.path] : undefined);
  $('report').textContent = JSON.stringify(r.report === undefined ? r : r.report, null, 2);
}

function updateRevealed(n) {
  const text = Number.isFinite(n) ? `${n} point${n === 1 ? '' : 's'} revealed so far by sample path ${state.path + 1}` : '';
  setText('revealed', text);
  const dd = $('facts-revealed');
  if (dd) dd.textContent = Number.isFinite(n) ? String(n) : 'unknown';
}

function renderRelease() {
  const r = state.release;
  setText('statement', r.statement || '(the release carries no statement)');
  setText('statement-words', r.statement ? statementInWords(r) : '');
  const warning = r.report && typeof r.report.warning === 'string' ? r.report.warning : '';
  $('warning').hidden = !warning;
  setText('warning', warning ? `Warning: ${warning}` : '');
  const active = r.status === 'active';
  $('status-note').hidden = active;
  setText('status-note', active ? '' : `This release's status is “${r.status}”: the server may refuse new evaluations.`);
  document.title = `${r.id} — gpdp differentially private release viewer`;

  // Path selector (only when there are several sample paths).
  const sel = $('path-select');
  sel.textContent = '';
  for (let l = 0; l < r.draws; l++) {
    const o = document.createElement('option');
    o.value = String(l);
    o.textContent = `path ${l + 1}`;
    sel.append(o);
  }
  sel.value = String(state.path);
  $('path-label').hidden = !(r.draws > 1);

  // Coordinate form.
  axisNames().forEach((name, k) => setText(`coord-${k}-name`, name));
  $('coord-1-label').hidden = state.dim !== 2;
  $('coord-1').disabled = state.dim !== 2;
  renderFacts();
}

function renderCaption() {
  const r = state.release;
  const g = state.grid;
  const ext = axisNames()
    .map((name, k) => `${name} from ${r.lower[k]} to ${r.upper[k]}`)
    .join(', ');
  const units = r.units ? `Values in ${r.units}.` : 'Units not stated.';
  const kind = state.dim === 2 ? 'Heat map (viridis; north up, east right)' : 'Line plot';
  setText(
    'caption',
    `${kind} of sample path ${state.path + 1} of release ${r.id}: ${ext}. ${units} ` +
      `Drawn from ${g.counts.join(' × ')} revealed grid points; click for the exact value at any point.`,
  );
  $('map').setAttribute(
    'aria-label',
    `${kind} of the released sample path over ${ext}; values ${formatValue(g.min)} to ${formatValue(g.max)}${unitsSuffix()}.`,
  );
}

function showValue(m) {
  const el = $('value');
  el.classList.remove('placeholder');
  const coords = m.point.map((x, k) => formatCoord(x, m.decimals ? m.decimals[k] : null)).join(', ');
  el.textContent = `f(${coords}) = ${formatValue(m.value)}${unitsSuffix()}`;
  el.title = `exact value: ${m.value}`;
}

// -------------------------------------------------------------- actions

function gridCounts() {
  if (state.dim === 1) return [state.gridOverride || GRID_TARGET_1D];
  const target = state.gridOverride || GRID_TARGET_2D;
  const ratio = aspectRatio(); // height / width
  const nx = Math.max(2, Math.round(target / Math.sqrt(ratio)));
  const ny = Math.max(2, Math.round(target * Math.sqrt(ratio)));
  return [nx, ny];
}

async function loadGrid() {
  const counts = gridCounts();
  const query =
    state.dim === 1 ? `n=${counts[0]}&path=${state.path}` : `nx=${counts[0]}&ny=${counts[1]}&path=${state.path}`;
  const body = await api(`releases/${enc(state.id)}/grid?${query}`);
  const c = body.counts;
  const expected = Array.isArray(c) ? c.reduce((a, b) => a * b, 1) : NaN;
  if (!Array.isArray(c) || c.length !== state.dim || !Array.isArray(body.values) || body.values.length !== expected) {
    throw new ApiError('The grid response is malformed (counts and values do not match).');
  }
  const values = Float64Array.from(body.values, (v) => (typeof v === 'number' && Number.isFinite(v) ? v : NaN));
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    if (Number.isNaN(v)) continue;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  if (!Number.isFinite(min)) throw new ApiError('The grid has no finite values to draw.');
  state.grid = { counts: c.slice(), lower: body.lower, upper: body.upper, values, min, max, query };
  state.heatKey = '';
}

async function refreshRevealed() {
  try {
    const r = await api(`releases/${enc(state.id)}`);
    if (Array.isArray(r.revealed)) {
      state.release.revealed = r.revealed;
      updateRevealed(r.revealed[state.path]);
    }
  } catch (_) {
    // Informational only.
  }
}

async function evaluate(point, decimals) {
  const seq = ++state.seq;
  const valueEl = $('value');
  valueEl.setAttribute('aria-busy', 'true');
  try {
    const body = await api(`releases/${enc(state.id)}/eval`, {
      method: 'POST',
      body: JSON.stringify({ points: [point], path: state.path }),
    });
    if (!Array.isArray(body.values) || body.values.length !== 1 || typeof body.values[0] !== 'number') {
      throw new ApiError('The evaluation response is malformed (expected one value).');
    }
    const m = { point, value: body.values[0], decimals, seq };
    state.marks.push(m);
    clearError();
    if (seq === state.seq) showValue(m);
    window.lastEval = {
      seq,
      release: state.id,
      path: state.path,
      point: point.slice(),
      value: m.value,
      revealed: body.revealed,
    };
    if (Number.isFinite(body.revealed)) {
      if (Array.isArray(state.release.revealed)) state.release.revealed[state.path] = body.revealed;
      updateRevealed(body.revealed);
    }
    draw();
  } catch (e) {
    showError(e);
  } finally {
    if (seq === state.seq) valueEl.removeAttribute('aria-busy');
  }
}

function onMapClick(ev) {
  if (!state.layout || !state.grid) return;
  const canvas = $('map');
  const rect = canvas.getBoundingClientRect();
  const x = (ev.clientX - rect.left) * (state.layout.cssW / rect.width);
  const y = (ev.clientY - rect.top) * (state.layout.cssH / rect.height);
  const p = pixelToDomain(x, y);
  if (!p) return; // on the axes, not the map
  const { point, decimals } = snapPoint(p);
  state.cursor = point.slice();
  state.cursorVisible = false;
  evaluate(point, decimals);
}

function onMapKey(ev) {
  if (!state.layout || !state.grid) return;
  const r = state.release;
  if (!state.cursor) {
    state.cursor = r.lower.map((lo, k) => (lo + r.upper[k]) / 2);
  }
  const stepPx = ev.shiftKey ? 25 : 5;
  const { plot } = state.layout;
  const dx = ((r.upper[0] - r.lower[0]) / plot.width) * stepPx;
  const dy = state.dim === 2 ? ((r.upper[1] - r.lower[1]) / plot.height) * stepPx : 0;
  const c = state.cursor;
  let handled = true;
  switch (ev.key) {
    case 'ArrowLeft': c[0] -= dx; break;
    case 'ArrowRight': c[0] += dx; break;
    case 'ArrowUp': if (state.dim === 2) c[1] += dy; break;
    case 'ArrowDown': if (state.dim === 2) c[1] -= dy; break;
    case 'Enter':
    case ' ': {
      const { point, decimals } = snapPoint(c);
      evaluate(point, decimals);
      break;
    }
    default: handled = false;
  }
  if (!handled) return;
  ev.preventDefault();
  state.cursorVisible = true;
  for (let k = 0; k < c.length; k++) c[k] = clamp(c[k], r.lower[k], r.upper[k]);
  draw();
}

function onFormSubmit(ev) {
  ev.preventDefault();
  if (!state.release) return;
  const r = state.release;
  const point = [];
  for (let k = 0; k < state.dim; k++) {
    const raw = $(`coord-${k}`).value.trim().replace(/\u2212/g, '-');
    const x = Number(raw);
    if (raw === '' || !Number.isFinite(x)) {
      showError(`Enter a number for ${axisNames()[k]}.`);
      $(`coord-${k}`).focus();
      return;
    }
    if (x < r.lower[k] || x > r.upper[k]) {
      showError(`${axisNames()[k]} = ${x} is outside the domain's bounding box (${r.lower[k]} to ${r.upper[k]}).`);
      $(`coord-${k}`).focus();
      return;
    }
    point.push(x);
  }
  state.cursor = point.slice();
  evaluate(point, null);
}

async function onPathChange() {
  const l = Number($('path-select').value);
  if (!Number.isInteger(l) || l === state.path) return;
  state.path = l;
  state.marks = [];
  state.cursor = null;
  const params = new URLSearchParams(location.search);
  params.set('release', state.id);
  params.set('path', String(l));
  history.replaceState(null, '', `?${params}`);
  document.body.dataset.ready = 'false';
  const el = $('value');
  el.classList.add('placeholder');
  el.textContent = 'Click a point on the map to evaluate the released function there.';
  try {
    await loadGrid();
    renderFacts();
    renderCaption();
    draw();
    clearError();
    document.body.dataset.ready = 'true';
    refreshRevealed();
  } catch (e) {
    showError(e);
    document.body.dataset.ready = 'error';
  }
}

function fillReleaseSelect(list, current) {
  const sel = $('release-select');
  sel.textContent = '';
  const items = list.slice();
  if (!items.some((r) => r.id === current)) items.unshift({ id: current, status: '?' });
  for (const r of items) {
    const o = document.createElement('option');
    o.value = r.id;
    o.textContent = `${r.id} (${r.status})`;
    sel.append(o);
  }
  sel.value = current;
  sel.disabled = items.length < 2;
}

// ------------------------------------------------------------------ init

async function init() {
  const params = new URLSearchParams(location.search);
  let id = params.get('release');
  const pathParam = Number(params.get('path') || 0);
  const gridParam = Number(params.get('grid'));
  if (Number.isInteger(gridParam) && gridParam >= 2) state.gridOverride = gridParam;

  $('map').addEventListener('click', onMapClick);
  $('map').addEventListener('keydown', onMapKey);
  $('map').addEventListener('focus', draw);
  $('map').addEventListener('blur', draw);
  $('eval-form').addEventListener('submit', onFormSubmit);
  $('path-select').addEventListener('change', onPathChange);
  $('release-select').addEventListener('change', () => {
    const v = $('release-select').value;
    if (v && v !== state.id) location.search = `?${new URLSearchParams({ release: v })}`;
  });

  try {
    // The list fills the release selector; without ?release= it also picks
    // the first active release.
    const listing = api('releases').then(
      (b) => (Array.isArray(b.releases) ? b.releases : []),
      (e) => e,
    );
    if (!id) {
      const list = await listing;
      if (list instanceof Error) throw list;
      const first = list.find((r) => r.status === 'active');
      if (!first) throw new ApiError('This server has no active release to show.');
      id = first.id;
    }
    state.id = id;
    listing.then((list) => {
      if (!(list instanceof Error)) fillReleaseSelect(list, id);
      else fillReleaseSelect([], id);
    });

    const r = await api(`releases/${enc(id)}`);
    if (!Array.isArray(r.lower) || !Array.isArray(r.upper) || r.lower.length !== r.upper.length) {
      throw new ApiError('The release has no usable domain bounding box (lower/upper).');
    }
    state.dim = r.lower.length;
    if (state.dim !== 1 && state.dim !== 2) {
      throw new ApiError(`This viewer draws 1- and 2-dimensional releases; this one has dimension ${state.dim}.`);
    }
    if (!Number.isInteger(r.draws) || r.draws < 1) r.draws = 1;
    state.release = r;
    state.path = Number.isInteger(pathParam) && pathParam >= 0 && pathParam < r.draws ? pathParam : 0;
    renderRelease();
    await loadGrid();
    renderFacts();
    renderCaption();
    draw();
    $('eval-button').disabled = false;
    document.body.dataset.ready = 'true';
    refreshRevealed();
  } catch (e) {
    showError(e);
    if (!state.release) setText('statement', 'The release could not be loaded.');
    setText('caption', 'The map could not be drawn.');
    document.body.dataset.ready = 'error';
  }

  let pending = 0;
  const onResize = () => {
    if (pending) return;
    pending = requestAnimationFrame(() => {
      pending = 0;
      if (!state.layout) return;
      const next = computeLayout();
      if (next.cssW !== state.layout.cssW || next.cssH !== state.layout.cssH || next.dpr !== state.layout.dpr) draw();
    });
  };
  window.addEventListener('resize', onResize);
  if (window.ResizeObserver) new ResizeObserver(onResize).observe($('map').parentElement);
}

// For tests and the curious: the geometry and colour scale in use.
window.gpdpViewer = {
  get releaseId() { return state.id; },
  get dim() { return state.dim; },
  get path() { return state.path; },
  get gridQuery() { return state.grid ? state.grid.query : null; },
  get gridCounts() { return state.grid ? state.grid.counts.slice() : null; },
  get range() { return state.grid ? [state.grid.min, state.grid.max] : null; },
  get dpr() { return state.layout ? state.layout.dpr : null; },
  // The plot area in CSS pixels relative to the canvas's layout box.
  get plotRect() { return state.layout ? { ...state.layout.plot, cssWidth: state.layout.cssW, cssHeight: state.layout.cssH } : null; },
  colourFor(v) { return mapColour(v); },
  // The viewer's colour and tick functions against the library's values: [] when they agree.
  selfCheck,
  evaluate(point) { return evaluate(point.slice(), null); },
};


if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
else init();
