// gpdp serve — viewer for a differentially private Gaussian-process release.
//
// Plain ES2020, no dependencies. It reads the release (GET /releases/{id}),
// draws a grid of the released sample path (GET /releases/{id}/grid) and
// evaluates the same path at clicked points (POST /releases/{id}/eval).
// All URLs are relative to the page, so the viewer also works when the
// service is mounted under a path prefix.
'use strict';

(() => {
  // ---------------------------------------------------------------- colours

  // matplotlib's viridis (perceptually uniform): every 8th of its 256
  // entries plus the last one, as [index, r, g, b]; interpolated linearly.
  const VIRIDIS_KEYS = [
    [0, 0.267004, 0.004874, 0.329415], [8, 0.277018, 0.050344, 0.375715],
    [16, 0.282327, 0.094955, 0.417331], [24, 0.282884, 0.135920, 0.453427],
    [32, 0.278826, 0.175490, 0.483397], [40, 0.270595, 0.214069, 0.507052],
    [48, 0.258965, 0.251537, 0.524736], [56, 0.244972, 0.287675, 0.537260],
    [64, 0.229739, 0.322361, 0.545706], [72, 0.214298, 0.355619, 0.551184],
    [80, 0.199430, 0.387607, 0.554642], [88, 0.185556, 0.418570, 0.556753],
    [96, 0.172719, 0.448791, 0.557885], [104, 0.160665, 0.478540, 0.558115],
    [112, 0.149039, 0.508051, 0.557250], [120, 0.137770, 0.537492, 0.554906],
    [128, 0.127568, 0.566949, 0.550556], [136, 0.120565, 0.596422, 0.543611],
    [144, 0.120638, 0.625828, 0.533488], [152, 0.132268, 0.655014, 0.519661],
    [160, 0.157851, 0.683765, 0.501686], [168, 0.196571, 0.711827, 0.479221],
    [176, 0.246070, 0.738910, 0.452024], [184, 0.304148, 0.764704, 0.419943],
    [192, 0.369214, 0.788888, 0.382914], [200, 0.440137, 0.811138, 0.340967],
    [208, 0.515992, 0.831158, 0.294279], [216, 0.595839, 0.848717, 0.243329],
    [224, 0.678489, 0.863742, 0.189503], [232, 0.762373, 0.876424, 0.137064],
    [240, 0.845561, 0.887322, 0.099702], [248, 0.926106, 0.897330, 0.104071],
    [255, 0.993248, 0.906157, 0.143936],
  ];

  const LUT = (() => {
    const lut = new Uint8ClampedArray(256 * 3);
    let k = 0;
    for (let i = 0; i < 256; i++) {
      while (k < VIRIDIS_KEYS.length - 2 && VIRIDIS_KEYS[k + 1][0] < i) k++;
      const a = VIRIDIS_KEYS[k];
      const b = VIRIDIS_KEYS[k + 1];
      const t = (i - a[0]) / (b[0] - a[0]);
      for (let c = 0; c < 3; c++) lut[3 * i + c] = Math.round(255 * (a[c + 1] + (b[c + 1] - a[c + 1]) * t));
    }
    return lut;
  })();

  function colourIndex(v, lo, hi) {
    if (!(hi > lo)) return 128;
    const t = (v - lo) / (hi - lo);
    return Math.max(0, Math.min(255, Math.round(t * 255)));
  }

  function colourFor(v, lo, hi) {
    const i = 3 * colourIndex(v, lo, hi);
    return [LUT[i], LUT[i + 1], LUT[i + 2]];
  }

  const rgb = (c) => `rgb(${c[0]}, ${c[1]}, ${c[2]})`;

  // ----------------------------------------------------------------- state

  const MARGIN = { left: 78, right: 36, top: 14, bottom: 48 };
  const GRID_TARGET_2D = 40; // ≈ 40 × 40 revealed points for the map
  const GRID_TARGET_1D = 64;
  const FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif';

  const state = {
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

  const $ = (id) => document.getElementById(id);
  const enc = encodeURIComponent;
  const clamp = (x, lo, hi) => Math.min(hi, Math.max(lo, x));

  // ------------------------------------------------------------------- API

  class ApiError extends Error {}

  async function api(path, options = {}) {
    const url = new URL(path, document.baseURI);
    const method = options.method || 'GET';
    const headers = { Accept: 'application/json' };
    if (options.body !== undefined) headers['Content-Type'] = 'application/json';
    let res;
    try {
      res = await fetch(url, { method, headers, body: options.body, cache: 'no-store' });
    } catch (e) {
      throw new ApiError(`${method} ${url.pathname}: the server could not be reached (${e.message}).`);
    }
    const text = await res.text();
    let body = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch (_) {
      body = null;
    }
    if (!res.ok) {
      const msg = body && typeof body.error === 'string' ? body.error : text.trim().slice(0, 300) || res.statusText;
      throw new ApiError(`${method} ${url.pathname} failed (HTTP ${res.status}): ${msg}`);
    }
    if (body === null || typeof body !== 'object') {
      throw new ApiError(`${method} ${url.pathname}: the response is not a JSON object.`);
    }
    return body;
  }

  // -------------------------------------------------------------- messages

  function showError(e) {
    const el = $('error');
    el.textContent = e instanceof Error ? e.message : String(e);
    el.hidden = false;
  }

  function clearError() {
    const el = $('error');
    el.textContent = '';
    el.hidden = true;
  }

  // ---------------------------------------------------------- number format

  function formatValue(v) {
    if (!Number.isFinite(v)) return String(v);
    const a = Math.abs(v);
    if (a === 0) return '0';
    if (a >= 1e6 || a < 1e-3) return v.toExponential(3);
    const decimals = Math.max(0, 3 - Math.floor(Math.log10(a)));
    return v.toFixed(decimals);
  }

  function formatCoord(x, decimals) {
    return decimals === null || decimals === undefined ? String(x) : x.toFixed(decimals);
  }

  function unitsSuffix() {
    const u = state.release && state.release.units;
    return u ? ` ${u}` : '';
  }

  function niceTicks(lo, hi, count) {
    if (!(hi > lo) || !Number.isFinite(lo) || !Number.isFinite(hi)) return { ticks: [lo], decimals: 0 };
    const raw = (hi - lo) / Math.max(1, count);
    const p = 10 ** Math.floor(Math.log10(raw));
    const f = raw / p;
    const step = (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * p;
    const first = Math.ceil(lo / step - 1e-9);
    const ticks = [];
    for (let i = first; i * step <= hi + step * 1e-9 && ticks.length < 50; i++) {
      const t = i * step;
      ticks.push(Math.abs(t) < step * 1e-9 ? 0 : t);
    }
    const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
    return { ticks, decimals };
  }

  // ---------------------------------------------------------------- layout

  function aspectRatio() {
    const r = state.release;
    return clamp((r.upper[1] - r.lower[1]) / (r.upper[0] - r.lower[0]), 0.3, 1.6);
  }

  function computeLayout() {
    const canvas = $('map');
    const avail = clamp(canvas.parentElement.clientWidth || 900, 300, 900);
    let plotW = avail - MARGIN.left - MARGIN.right;
    let plotH;
    if (state.dim === 2) {
      const ratio = aspectRatio();
      plotH = plotW * ratio;
      const maxH = Math.max(240, (window.innerHeight || 800) * 0.72);
      if (plotH > maxH) {
        plotH = maxH;
        plotW = plotH / ratio;
      }
    } else {
      plotH = clamp(plotW * 0.5, 180, 380);
    }
    plotW = Math.round(plotW);
    plotH = Math.round(plotH);
    return {
      cssW: plotW + MARGIN.left + MARGIN.right,
      cssH: plotH + MARGIN.top + MARGIN.bottom,
      dpr: Math.max(1, Math.round(window.devicePixelRatio || 1)),
      plot: { left: MARGIN.left, top: MARGIN.top, width: plotW, height: plotH },
    };
  }

  // Domain → CSS pixel (relative to the canvas) and back. For dim 2, x1 runs
  // east (left → right) and x2 north (bottom → top).
  function xToPx(x) {
    const { plot } = state.layout;
    const r = state.release;
    return plot.left + ((x - r.lower[0]) / (r.upper[0] - r.lower[0])) * plot.width;
  }
  function x2ToPx(y) {
    const { plot } = state.layout;
    const r = state.release;
    return plot.top + ((r.upper[1] - y) / (r.upper[1] - r.lower[1])) * plot.height;
  }

  function pixelToDomain(px, py) {
    const { plot } = state.layout;
    const r = state.release;
    const slack = 0.5;
    if (px < plot.left - slack || px > plot.left + plot.width + slack) return null;
    if (py < plot.top - slack || py > plot.top + plot.height + slack) return null;
    const u = clamp((px - plot.left) / plot.width, 0, 1);
    const x1 = r.lower[0] + u * (r.upper[0] - r.lower[0]);
    if (state.dim === 1) return [x1];
    const v = clamp((py - plot.top) / plot.height, 0, 1);
    return [x1, r.upper[1] - v * (r.upper[1] - r.lower[1])];
  }

  // Rounds a clicked point to about a tenth of a pixel, so that the
  // coordinates shown are exactly the ones evaluated.
  function snapPoint(p) {
    const { plot } = state.layout;
    const r = state.release;
    const point = [];
    const decimals = [];
    for (let k = 0; k < p.length; k++) {
      const span = r.upper[k] - r.lower[k];
      const perPx = span / (k === 0 ? plot.width : plot.height);
      let d = clamp(1 - Math.floor(Math.log10(perPx)), 0, 15);
      let q = Number(p[k].toFixed(d));
      while ((q < r.lower[k] || q > r.upper[k]) && d < 15) {
        d++;
        q = Number(p[k].toFixed(d));
      }
      point.push(clamp(q, r.lower[k], r.upper[k]));
      decimals.push(d);
    }
    return { point, decimals };
  }

  // ----------------------------------------------------------------- drawing

  function renderHeat(W, H) {
    const g = state.grid;
    const [nx, ny] = g.counts;
    const vals = g.values;
    const img = new ImageData(W, H);
    const d = img.data;
    const lo = g.min;
    const hi = g.max;
    const scale = hi > lo ? 255 / (hi - lo) : 0;
    const cols = new Int32Array(W);
    const txs = new Float64Array(W);
    for (let px = 0; px < W; px++) {
      const fi = ((px + 0.5) / W) * (nx - 1);
      const i0 = clamp(Math.floor(fi), 0, Math.max(0, nx - 2));
      cols[px] = i0;
      txs[px] = nx > 1 ? fi - i0 : 0;
    }
    for (let py = 0; py < H; py++) {
      // Row 0 of the image is the north edge (x2 = upper).
      const fj = (1 - (py + 0.5) / H) * (ny - 1);
      const j0 = clamp(Math.floor(fj), 0, Math.max(0, ny - 2));
      const ty = ny > 1 ? fj - j0 : 0;
      const j1 = Math.min(ny - 1, j0 + 1);
      for (let px = 0; px < W; px++) {
        const i0 = cols[px];
        const i1 = Math.min(nx - 1, i0 + 1);
        const tx = txs[px];
        const v00 = vals[i0 + nx * j0];
        const v10 = vals[i1 + nx * j0];
        const v01 = vals[i0 + nx * j1];
        const v11 = vals[i1 + nx * j1];
        let v = (v00 * (1 - tx) + v10 * tx) * (1 - ty) + (v01 * (1 - tx) + v11 * tx) * ty;
        if (Number.isNaN(v)) {
          // Outside a non-box domain: nearest revealed node, else transparent.
          const ni = tx < 0.5 ? i0 : i1;
          const nj = ty < 0.5 ? j0 : j1;
          v = vals[ni + nx * nj];
        }
        const o = 4 * (px + W * py);
        if (Number.isNaN(v)) {
          d[o + 3] = 0;
          continue;
        }
        const ci = 3 * Math.max(0, Math.min(255, Math.round((v - lo) * scale) || (scale ? 0 : 128)));
        d[o] = LUT[ci];
        d[o + 1] = LUT[ci + 1];
        d[o + 2] = LUT[ci + 2];
        d[o + 3] = 255;
      }
    }
    const off = document.createElement('canvas');
    off.width = W;
    off.height = H;
    off.getContext('2d').putImageData(img, 0, 0);
    return off;
  }

  function drawAxisX(ctx, plot, lo, hi, title) {
    const { ticks, decimals } = niceTicks(lo, hi, Math.max(2, Math.floor(plot.width / 110)));
    ctx.fillStyle = '#1d1f23';
    ctx.strokeStyle = '#1d1f23';
    ctx.lineWidth = 1;
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    const y0 = plot.top + plot.height;
    for (const t of ticks) {
      const x = Math.round(plot.left + ((t - lo) / (hi - lo)) * plot.width) + 0.5;
      ctx.beginPath();
      ctx.moveTo(x, y0);
      ctx.lineTo(x, y0 + 5);
      ctx.stroke();
      ctx.fillText(t.toFixed(decimals), x, y0 + 7);
    }
    ctx.font = `600 ${FONT}`;
    ctx.fillText(title, plot.left + plot.width / 2, y0 + 27);
    ctx.font = FONT;
  }

  function drawAxisY(ctx, plot, lo, hi, title) {
    const { ticks, decimals } = niceTicks(lo, hi, Math.max(2, Math.floor(plot.height / 60)));
    ctx.fillStyle = '#1d1f23';
    ctx.strokeStyle = '#1d1f23';
    ctx.lineWidth = 1;
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    for (const t of ticks) {
      const y = Math.round(plot.top + ((hi - t) / (hi - lo)) * plot.height) + 0.5;
      ctx.beginPath();
      ctx.moveTo(plot.left - 5, y);
      ctx.lineTo(plot.left, y);
      ctx.stroke();
      ctx.fillText(t.toFixed(decimals), plot.left - 7, y);
    }
    ctx.save();
    ctx.translate(14, plot.top + plot.height / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.textAlign = 'center';
    ctx.textBaseline = 'middle';
    ctx.font = `600 ${FONT}`;
    ctx.fillText(title, 0, 0);
    ctx.restore();
  }

  function drawMarker(ctx, x, y, latest) {
    const r = latest ? 7 : 4.5;
    ctx.lineWidth = latest ? 3.5 : 3;
    ctx.strokeStyle = '#000';
    ctx.beginPath();
    ctx.arc(x, y, r, 0, 2 * Math.PI);
    ctx.stroke();
    ctx.lineWidth = latest ? 2 : 1.5;
    ctx.strokeStyle = '#fff';
    ctx.beginPath();
    ctx.arc(x, y, r, 0, 2 * Math.PI);
    ctx.stroke();
    if (latest) {
      ctx.lineWidth = 1.5;
      for (const [dx, dy] of [[1, 0], [-1, 0], [0, 1], [0, -1]]) {
        ctx.strokeStyle = '#000';
        ctx.lineWidth = 3;
        ctx.beginPath();
        ctx.moveTo(x + dx * (r + 2), y + dy * (r + 2));
        ctx.lineTo(x + dx * (r + 8), y + dy * (r + 8));
        ctx.stroke();
        ctx.strokeStyle = '#fff';
        ctx.lineWidth = 1.5;
        ctx.stroke();
      }
    }
  }

  function drawLabel(ctx, plot, x, y, text) {
    ctx.font = `600 ${FONT}`;
    const w = ctx.measureText(text).width + 10;
    const h = 20;
    let bx = x + 14;
    if (bx + w > plot.left + plot.width) bx = x - 14 - w;
    let by = y - h - 8;
    if (by < plot.top) by = y + 10;
    ctx.fillStyle = 'rgba(255, 255, 255, 0.92)';
    ctx.strokeStyle = '#333';
    ctx.lineWidth = 1;
    ctx.fillRect(bx, by, w, h);
    ctx.strokeRect(bx + 0.5, by + 0.5, w - 1, h - 1);
    ctx.fillStyle = '#111';
    ctx.textAlign = 'left';
    ctx.textBaseline = 'middle';
    ctx.fillText(text, bx + 5, by + h / 2 + 0.5);
    ctx.font = FONT;
  }

  function drawCursor(ctx, x, y) {
    ctx.save();
    ctx.setLineDash([3, 3]);
    ctx.lineWidth = 1.5;
    ctx.strokeStyle = '#fff';
    ctx.beginPath();
    ctx.arc(x, y, 10, 0, 2 * Math.PI);
    ctx.stroke();
    ctx.lineDashOffset = 3;
    ctx.strokeStyle = '#000';
    ctx.stroke();
    ctx.restore();
  }

  function draw() {
    if (!state.release || !state.grid) return;
    const L = (state.layout = computeLayout());
    const canvas = $('map');
    canvas.hidden = false;
    const devW = Math.round(L.cssW * L.dpr);
    const devH = Math.round(L.cssH * L.dpr);
    if (canvas.width !== devW) canvas.width = devW;
    if (canvas.height !== devH) canvas.height = devH;
    canvas.style.width = `${L.cssW}px`;
    canvas.style.height = 'auto';
    const ctx = canvas.getContext('2d');
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, devW, devH);
    ctx.setTransform(L.dpr, 0, 0, L.dpr, 0, 0);
    ctx.font = FONT;
    if (state.dim === 2) draw2d(ctx, L);
    else draw1d(ctx, L);
    drawColourbar();
  }

  function draw2d(ctx, L) {
    const { plot, dpr } = L;
    const r = state.release;
    const W = Math.round(plot.width * dpr);
    const H = Math.round(plot.height * dpr);
    const key = `${W}x${H}:${state.grid.query}`;
    if (state.heatKey !== key) {
      state.heat = renderHeat(W, H);
      state.heatKey = key;
    }
    // Checkerboard behind the heat map so that points outside a non-box
    // domain read as "no value" rather than as a colour.
    ctx.fillStyle = '#e9ebee';
    ctx.fillRect(plot.left, plot.top, plot.width, plot.height);
    ctx.save();
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(state.heat, Math.round(plot.left * dpr), Math.round(plot.top * dpr));
    ctx.restore();
    ctx.strokeStyle = '#1d1f23';
    ctx.lineWidth = 1;
    ctx.strokeRect(plot.left - 0.5, plot.top - 0.5, plot.width + 1, plot.height + 1);
    drawAxisX(ctx, plot, r.lower[0], r.upper[0], 'x₁ (east →)');
    drawAxisY(ctx, plot, r.lower[1], r.upper[1], 'x₂ (north →)');
    const last = state.marks[state.marks.length - 1];
    for (const m of state.marks) {
      if (m !== last) drawMarker(ctx, xToPx(m.point[0]), x2ToPx(m.point[1]), false);
    }
    if (last) {
      const x = xToPx(last.point[0]);
      const y = x2ToPx(last.point[1]);
      drawMarker(ctx, x, y, true);
      drawLabel(ctx, plot, x, y, `${formatValue(last.value)}${unitsSuffix()}`);
    }
    if (state.cursor && state.cursorVisible && document.activeElement === $('map')) {
      drawCursor(ctx, xToPx(state.cursor[0]), x2ToPx(state.cursor[1]));
    }
  }

  function yRange1d() {
    let lo = state.grid.min;
    let hi = state.grid.max;
    for (const m of state.marks) {
      lo = Math.min(lo, m.value);
      hi = Math.max(hi, m.value);
    }
    if (!(hi > lo)) {
      const d = Math.abs(lo) * 0.05 || 0.5;
      lo -= d;
      hi += d;
    }
    const pad = (hi - lo) * 0.06;
    return [lo - pad, hi + pad];
  }

  function draw1d(ctx, L) {
    const { plot } = L;
    const r = state.release;
    const g = state.grid;
    const [ylo, yhi] = yRange1d();
    const yPx = (v) => plot.top + ((yhi - v) / (yhi - ylo)) * plot.height;
    ctx.strokeStyle = '#1d1f23';
    ctx.lineWidth = 1;
    ctx.strokeRect(plot.left - 0.5, plot.top - 0.5, plot.width + 1, plot.height + 1);
    // Light horizontal grid lines at the value ticks.
    const { ticks } = niceTicks(ylo, yhi, Math.max(2, Math.floor(plot.height / 60)));
    ctx.strokeStyle = '#e3e6ea';
    for (const t of ticks) {
      const y = Math.round(yPx(t)) + 0.5;
      ctx.beginPath();
      ctx.moveTo(plot.left, y);
      ctx.lineTo(plot.left + plot.width, y);
      ctx.stroke();
    }
    const n = g.counts[0];
    ctx.save();
    ctx.beginPath();
    ctx.rect(plot.left, plot.top, plot.width, plot.height);
    ctx.clip();
    ctx.strokeStyle = rgb(colourFor(0.25, 0, 1));
    ctx.lineWidth = 2;
    ctx.lineJoin = 'round';
    ctx.beginPath();
    let pen = false;
    for (let i = 0; i < n; i++) {
      const v = g.values[i];
      if (Number.isNaN(v)) {
        pen = false;
        continue;
      }
      const x = plot.left + (n > 1 ? i / (n - 1) : 0.5) * plot.width;
      if (pen) ctx.lineTo(x, yPx(v));
      else ctx.moveTo(x, yPx(v));
      pen = true;
    }
    ctx.stroke();
    ctx.restore();
    drawAxisX(ctx, plot, r.lower[0], r.upper[0], 'x₁');
    drawAxisY(ctx, plot, ylo, yhi, `f(x₁)${r.units ? ` [${r.units}]` : ''}`);
    const last = state.marks[state.marks.length - 1];
    for (const m of state.marks) {
      const x = xToPx(m.point[0]);
      const y = yPx(m.value);
      if (m === last) {
        ctx.save();
        ctx.setLineDash([4, 4]);
        ctx.strokeStyle = '#555';
        ctx.lineWidth = 1;
        ctx.beginPath();
        ctx.moveTo(Math.round(x) + 0.5, plot.top);
        ctx.lineTo(Math.round(x) + 0.5, plot.top + plot.height);
        ctx.stroke();
        ctx.restore();
      }
      drawMarker(ctx, x, y, m === last);
    }
    if (last) drawLabel(ctx, plot, xToPx(last.point[0]), yPx(last.value), `${formatValue(last.value)}${unitsSuffix()}`);
    if (state.cursor && state.cursorVisible && document.activeElement === $('map')) {
      drawCursor(ctx, xToPx(state.cursor[0]), plot.top + plot.height / 2);
    }
  }

  function drawColourbar() {
    const bar = $('colorbar');
    if (state.dim !== 2) {
      bar.hidden = true;
      return;
    }
    bar.hidden = false;
    const L = state.layout;
    const { plot, dpr } = L;
    const cssH = 62;
    bar.width = Math.round(L.cssW * dpr);
    bar.height = Math.round(cssH * dpr);
    bar.style.width = `${L.cssW}px`;
    bar.style.height = 'auto';
    const ctx = bar.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, L.cssW, cssH);
    const lo = state.grid.min;
    const hi = state.grid.max;
    const top = 9;
    const h = 14;
    for (let x = 0; x < plot.width; x++) {
      const c = 3 * Math.round((x / Math.max(1, plot.width - 1)) * 255);
      ctx.fillStyle = `rgb(${LUT[c]}, ${LUT[c + 1]}, ${LUT[c + 2]})`;
      ctx.fillRect(plot.left + x, top, 1.5, h);
    }
    ctx.strokeStyle = '#1d1f23';
    ctx.lineWidth = 1;
    ctx.strokeRect(plot.left - 0.5, top - 0.5, plot.width + 1, h + 1);
    ctx.font = FONT;
    ctx.fillStyle = '#1d1f23';
    ctx.textBaseline = 'top';
    const at = (v) => plot.left + (hi > lo ? ((v - lo) / (hi - lo)) * plot.width : plot.width / 2);
    const tick = (x) => {
      ctx.beginPath();
      ctx.moveTo(Math.round(x) + 0.5, top + h);
      ctx.lineTo(Math.round(x) + 0.5, top + h + 4);
      ctx.stroke();
    };
    // The range's ends, exactly, and round values in between.
    ctx.textAlign = 'left';
    tick(plot.left);
    ctx.fillText(formatValue(lo), plot.left, top + h + 6);
    ctx.textAlign = 'right';
    tick(plot.left + plot.width);
    ctx.fillText(formatValue(hi), plot.left + plot.width, top + h + 6);
    if (hi > lo) {
      const { ticks, decimals } = niceTicks(lo, hi, Math.max(2, Math.floor(plot.width / 120)));
      ctx.textAlign = 'center';
      for (const t of ticks) {
        const x = at(t);
        if (x - plot.left < 55 || plot.left + plot.width - x < 55) continue;
        tick(x);
        ctx.fillText(t.toFixed(decimals), x, top + h + 6);
      }
    }
    ctx.textAlign = 'center';
    ctx.font = `600 ${FONT}`;
    const units = state.release.units;
    ctx.fillText(`Released value${units ? ` (${units})` : ' (units not stated)'}`, plot.left + plot.width / 2, top + h + 24);
    const last = state.marks[state.marks.length - 1];
    if (last) {
      // The clicked value on the scale (clamped to its ends).
      const x = clamp(at(last.value), plot.left, plot.left + plot.width);
      ctx.fillStyle = '#111';
      ctx.beginPath();
      ctx.moveTo(x, top - 1);
      ctx.lineTo(x - 5, top - 9);
      ctx.lineTo(x + 5, top - 9);
      ctx.closePath();
      ctx.fill();
    }
    bar.setAttribute(
      'aria-label',
      `Colour scale (viridis): dark purple = ${formatValue(lo)}, yellow = ${formatValue(hi)}${unitsSuffix()}`,
    );
  }

  // ------------------------------------------------------------- page text

  function setText(id, text) {
    $(id).textContent = text;
  }

  function axisNames() {
    return state.dim === 2 ? ['x₁', 'x₂'] : ['x₁'];
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
    add('ε (epsilon)', String(r.epsilon));
    add('δ (delta)', String(r.delta));
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
    const text = Number.isFinite(n) ? `${n} point${n === 1 ? '' : 's'} revealed so far by sample path ${state.path}` : '';
    setText('revealed', text);
    const dd = $('facts-revealed');
    if (dd) dd.textContent = Number.isFinite(n) ? String(n) : 'unknown';
  }

  function renderRelease() {
    const r = state.release;
    setText('statement', r.statement || '(the release carries no statement)');
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
      o.textContent = `path ${l}`;
      sel.append(o);
    }
    sel.value = String(state.path);
    $('path-label').hidden = !(r.draws > 1);

    // Coordinate form.
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
      `${kind} of sample path ${state.path} of release ${r.id}: ${ext}. ${units} ` +
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
    colourFor(v) { return state.grid ? colourFor(v, state.grid.min, state.grid.max) : null; },
    evaluate(point) { return evaluate(point.slice(), null); },
  };

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
