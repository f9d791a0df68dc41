// The map: layout, domain ↔ pixel conversion, the heat image, axes, marks
// and the colour bar. Colours and ticks are the library's (colour.js,
// ticks.js), as in the PNG/SVG figures.

import { $, FONT, MARGIN, axisTitles, clamp, state, unitsSuffix } from './state.js';
import { colour, colourOfValue, colourRange, rgb } from './colour.js';
import { formatValue, niceTicks } from './ticks.js';

// The map's palette (a name of palette.js's PALETTES).
export const PALETTE = 'viridis';

// The colour of value v on the current grid's colour range (null without a grid).
export function mapColour(v) {
  if (!state.grid) return null;
  const [lo, hi] = colourRange(PALETTE, state.grid.min, state.grid.max);
  return colourOfValue(PALETTE, v, lo, hi);
}

export function aspectRatio() {
  const r = state.release;
  return clamp((r.upper[1] - r.lower[1]) / (r.upper[0] - r.lower[0]), 0.3, 1.6);
}

export function computeLayout() {
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
export function xToPx(x) {
  const { plot } = state.layout;
  const r = state.release;
  return plot.left + ((x - r.lower[0]) / (r.upper[0] - r.lower[0])) * plot.width;
}
export function x2ToPx(y) {
  const { plot } = state.layout;
  const r = state.release;
  return plot.top + ((r.upper[1] - y) / (r.upper[1] - r.lower[1])) * plot.height;
}

export function pixelToDomain(px, py) {
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
export function snapPoint(p) {
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

export function renderHeat(W, H) {
  const g = state.grid;
  const [nx, ny] = g.counts;
  const vals = g.values;
  const img = new ImageData(W, H);
  const d = img.data;
  const [lo, hi] = colourRange(PALETTE, g.min, g.max);
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
      const c = colourOfValue(PALETTE, v, lo, hi);
      d[o] = c[0];
      d[o + 1] = c[1];
      d[o + 2] = c[2];
      d[o + 3] = 255;
    }
  }
  const off = document.createElement('canvas');
  off.width = W;
  off.height = H;
  off.getContext('2d').putImageData(img, 0, 0);
  return off;
}

export function drawAxisX(ctx, plot, lo, hi, title) {
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

export function drawAxisY(ctx, plot, lo, hi, title) {
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

export function drawMarker(ctx, x, y, latest) {
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

export function drawLabel(ctx, plot, x, y, text) {
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

export function drawCursor(ctx, x, y) {
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

export function draw() {
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

export function draw2d(ctx, L) {
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
  const [titleX, titleY] = axisTitles();
  drawAxisX(ctx, plot, r.lower[0], r.upper[0], titleX);
  drawAxisY(ctx, plot, r.lower[1], r.upper[1], titleY);
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

export function yRange1d() {
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

export function draw1d(ctx, L) {
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
  ctx.strokeStyle = rgb(colour(PALETTE, 0.25));
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
  const [titleX] = axisTitles();
  drawAxisX(ctx, plot, r.lower[0], r.upper[0], titleX);
  drawAxisY(ctx, plot, ylo, yhi, `f(${titleX.split(' [')[0]})${r.units ? ` [${r.units}]` : ''}`);
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

export function drawColourbar() {
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
  const [lo, hi] = colourRange(PALETTE, state.grid.min, state.grid.max);
  const top = 9;
  const h = 14;
  for (let x = 0; x < plot.width; x++) {
    ctx.fillStyle = rgb(colour(PALETTE, x / Math.max(1, plot.width - 1)));
    ctx.fillRect(plot.left + x, top, 1.5, h);
  }
  ctx.strokeStyle = '#1d1f23';
  ctx.lineWidth = 1;
  ctx.strokeRect(plot.left - 0.5, top - 0.5, plot.width + 1, h + 1);
  ctx.font = FONT;
  ctx.fillStyle = '#1d1f23';
  ctx.textBaseline = 'top';
  const at = (v) => plot.left + ((v - lo) / (hi - lo)) * plot.width;
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
  {
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

