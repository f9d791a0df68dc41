// End-to-end test of the `gpdp serve` viewer page in headless Chromium.
//
//   GPDP_SERVER_URL=http://127.0.0.1:8123 GPDP_RELEASE_ID=r1 node viewer.test.mjs
//
// Env: GPDP_SERVER_URL (required), GPDP_RELEASE_ID (optional: without it the
// page is loaded at `/` and must pick the server's first active release),
// GPDP_ARTIFACTS (screenshot folder, default ./artifacts), CHROMIUM (browser
// binary, default /usr/bin/chromium). Exits 0 with a one-line summary, or 1
// with the reason. The whole run is bounded to 55 s.
import { chromium } from 'playwright-core';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';

const TOTAL_MS = 55_000;
const started = Date.now();
const BASE = (process.env.GPDP_SERVER_URL || '').replace(/\/+$/, '');
const RELEASE_ENV = process.env.GPDP_RELEASE_ID || '';
const ARTIFACTS = path.resolve(process.env.GPDP_ARTIFACTS || 'artifacts');
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

let browser = null;
let finished = false;
const pageErrors = [];
const consoleErrors = [];
const failedRequests = [];

async function fail(message) {
  if (finished) return;
  finished = true;
  console.error(`viewer test FAILED: ${message}`);
  const extra = [
    ...pageErrors.map((e) => `  page error: ${e}`),
    ...consoleErrors.map((e) => `  console error: ${e}`),
    ...failedRequests.map((e) => `  HTTP: ${e}`),
  ];
  if (extra.length) console.error(extra.join('\n'));
  console.error(`  (after ${((Date.now() - started) / 1000).toFixed(1)} s; artifacts in ${ARTIFACTS})`);
  try {
    await Promise.race([browser ? browser.close() : null, new Promise((r) => setTimeout(r, 3000))]);
  } catch (_) {
    // closing is best effort
  }
  process.exit(1);
}

class Check extends Error {}
function check(cond, message) {
  if (!cond) throw new Check(message);
}

const watchdog = setTimeout(() => fail(`timed out: the whole test must finish within ${TOTAL_MS / 1000} s`), TOTAL_MS);

async function http(method, urlPath, body) {
  const url = `${BASE}${urlPath}`;
  let res;
  try {
    res = await fetch(url, {
      method,
      headers: body === undefined ? { Accept: 'application/json' } : { Accept: 'application/json', 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
  } catch (e) {
    throw new Check(`${method} ${url}: ${e.cause ? e.cause.message || e.cause.code : e.message} — is the server running at GPDP_SERVER_URL?`);
  }
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch (_) {
    throw new Check(`${method} ${url}: HTTP ${res.status}, response is not JSON: ${text.slice(0, 200)}`);
  }
  if (!res.ok) throw new Check(`${method} ${url}: HTTP ${res.status}: ${json && json.error ? json.error : text.slice(0, 200)}`);
  return json;
}

const NUMBER = String.raw`-?\d+(?:\.\d+)?(?:e[+-]?\d+)?`;
const VALUE_RE = new RegExp(String.raw`^f\((.*)\) = (${NUMBER})(?:\s+(.+))?$`, 'i');

// Reads the text of #value ("f(x1, x2) = v units") into numbers.
function parseValueText(text) {
  const m = VALUE_RE.exec(text.trim());
  if (!m) return null;
  const coords = m[1].split(',').map((s) => Number(s.trim()));
  return { coords, value: Number(m[2]), units: m[3] || null };
}

// Canvas pixels (device pixels) as an array of [r, g, b, a], read in the page.
async function readPixels(page, selector, points) {
  return page.evaluate(
    ({ selector, points }) => {
      const c = document.querySelector(selector);
      const ctx = c.getContext('2d');
      return points.map(([x, y]) => Array.from(ctx.getImageData(Math.floor(x), Math.floor(y), 1, 1).data));
    },
    { selector, points },
  );
}

async function distinctColours(page, selector, rect) {
  return page.evaluate(
    ({ selector, rect }) => {
      const c = document.querySelector(selector);
      if (!c || !c.width || !c.height) return { distinct: 0, opaque: 0, total: 0 };
      const x = Math.max(0, Math.floor(rect ? rect.left : 0));
      const y = Math.max(0, Math.floor(rect ? rect.top : 0));
      const w = Math.min(c.width - x, Math.floor(rect ? rect.width : c.width));
      const h = Math.min(c.height - y, Math.floor(rect ? rect.height : c.height));
      const d = c.getContext('2d').getImageData(x, y, w, h).data;
      const seen = new Set();
      let opaque = 0;
      for (let i = 0; i < d.length; i += 4) {
        if (d[i + 3] > 0) opaque++;
        seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
      }
      return { distinct: seen.size, opaque, total: w * h };
    },
    { selector, rect },
  );
}

async function regionSignature(page, cx, cy, half) {
  return page.evaluate(
    ({ cx, cy, half }) => {
      const c = document.getElementById('map');
      const d = c.getContext('2d').getImageData(Math.floor(cx - half), Math.floor(cy - half), 2 * half, 2 * half).data;
      return Array.from(d);
    },
    { cx, cy, half },
  );
}

async function run() {
  check(BASE, 'set GPDP_SERVER_URL (e.g. http://127.0.0.1:8123)');
  await mkdir(ARTIFACTS, { recursive: true });

  // ---- the server, directly
  let releaseId = RELEASE_ENV;
  if (!releaseId) {
    const list = await http('GET', '/releases');
    check(Array.isArray(list.releases), 'GET /releases: no "releases" array');
    const first = list.releases.find((r) => r.status === 'active');
    check(first, 'GET /releases lists no active release, and GPDP_RELEASE_ID is not set');
    releaseId = first.id;
  }
  const release = await http('GET', `/releases/${encodeURIComponent(releaseId)}`);
  const dim = release.lower.length;
  check(dim === 1 || dim === 2, `release ${releaseId} has dimension ${dim}; the viewer draws 1 or 2`);

  // ---- the page
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], timeout: 20_000 });
  const context = await browser.newContext({ viewport: { width: 1000, height: 900 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('response', (r) => {
    if (r.status() >= 400) failedRequests.push(`${r.request().method()} ${r.url()} → ${r.status()}`);
  });

  const pageUrl = RELEASE_ENV ? `${BASE}/?release=${encodeURIComponent(releaseId)}` : `${BASE}/`;
  const resp = await page.goto(pageUrl, { waitUntil: 'load', timeout: 15_000 });
  check(resp && resp.ok(), `GET ${pageUrl}: HTTP ${resp ? resp.status() : 'no response'}`);
  const ctype = resp.headers()['content-type'] || '';
  check(/^text\/html/i.test(ctype), `GET ${pageUrl}: content-type is "${ctype}", expected text/html`);

  await page.waitForSelector('body[data-ready="true"], body[data-ready="error"]', { timeout: 25_000 }).catch(async () => {
    const err = await page.textContent('#error').catch(() => '');
    throw new Check(`the page did not finish drawing within 25 s${err ? `; #error says: ${err}` : ''}`);
  });
  const ready = await page.getAttribute('body', 'data-ready');
  if (ready !== 'true') {
    const err = (await page.textContent('#error')) || '(empty)';
    throw new Check(`the page reported an error while loading: ${err}`);
  }
  check(pageErrors.length === 0, 'uncaught exception in the page');

  const viewer = await page.evaluate(() => ({
    releaseId: window.gpdpViewer.releaseId,
    dim: window.gpdpViewer.dim,
    path: window.gpdpViewer.path,
    gridQuery: window.gpdpViewer.gridQuery,
    gridCounts: window.gpdpViewer.gridCounts,
    range: window.gpdpViewer.range,
    dpr: window.gpdpViewer.dpr,
    plot: window.gpdpViewer.plotRect,
  }));
  // ---- one palette and one tick rule: the viewer's functions give the
  // library's values (the samples the server generated into palette.js), and
  // the map's range ends have viridis's end stops, as in the PNG figures.
  const mismatches = await page.evaluate(() => window.gpdpViewer.selfCheck());
  check(mismatches.length === 0, `the viewer disagrees with gpdp::postprocess::palette: ${mismatches.slice(0, 5).join('; ')}`);
  const ends = await page.evaluate(() => window.gpdpViewer.range.map((v) => window.gpdpViewer.colourFor(v)));
  check(
    viewer.range[1] > viewer.range[0] ? JSON.stringify(ends) === '[[68,1,84],[253,231,37]]' : true,
    `the map's range ends have colours ${JSON.stringify(ends)}, expected viridis's ends [68,1,84] and [253,231,37]`,
  );
  for (const mod of ['main.js', 'palette.js', 'colour.js', 'ticks.js', 'map.js', 'state.js', 'api.js', 'selfcheck.js']) {
    const res = await fetch(`${BASE}/${mod}`);
    const type = res.headers.get('content-type') || '';
    check(res.ok && type.startsWith('text/javascript'), `/${mod}: HTTP ${res.status}, Content-Type "${type}" (want text/javascript)`);
  }

  check(viewer.releaseId === releaseId, `the page shows release "${viewer.releaseId}", expected "${releaseId}"`);
  check(viewer.dim === dim, `the page thinks the release has dimension ${viewer.dim}, the server says ${dim}`);

  // ---- the guarantee and the explanations are visible
  const statement = ((await page.textContent('#statement')) || '').trim();
  check(await page.isVisible('#statement'), '#statement is not visible');
  check(/differentially private/.test(statement), `#statement does not say "differentially private": "${statement}"`);
  check(statement === release.statement, `#statement differs from the release's statement:\n  page:   ${statement}\n  server: ${release.statement}`);
  const bodyText = await page.innerText('body');
  check(/sample path/i.test(bodyText) && /not the posterior mean/i.test(bodyText), 'the page does not say the map is one sample path, not the mean');
  check(/no extra privacy cost/i.test(bodyText), 'the page does not say clicking has no extra privacy cost');
  if (release.units) check(bodyText.includes(release.units), `the units "${release.units}" are not shown`);
  for (let k = 0; k < dim; k++) {
    check(bodyText.includes(String(release.lower[k])) && bodyText.includes(String(release.upper[k])), `axis ${k + 1}'s extent is not shown`);
  }
  check(!(await page.isVisible('#error')), `#error is visible after loading: ${await page.textContent('#error')}`);

  // ---- the canvas is drawn: many colours in the plot area
  const dpr = viewer.dpr;
  const p = viewer.plot;
  const devPlot = { left: p.left * dpr, top: p.top * dpr, width: p.width * dpr, height: p.height * dpr };
  const mapStats = await distinctColours(page, '#map', devPlot);
  const minColours = dim === 2 ? 24 : 3;
  check(mapStats.distinct >= minColours, `#map looks blank: ${mapStats.distinct} distinct colours in the plot area (want ≥ ${minColours})`);
  check(mapStats.opaque > 0.9 * mapStats.total, `#map's plot area is mostly transparent (${mapStats.opaque}/${mapStats.total} opaque)`);

  let orientation = 'n/a (1-D)';
  if (dim === 2) {
    check(await page.isVisible('#colorbar'), '#colorbar is not visible');
    const barStats = await distinctColours(page, '#colorbar', null);
    check(barStats.distinct >= 24, `#colorbar looks blank (${barStats.distinct} distinct colours)`);

    // Orientation: fetch the same grid from the server and compare the
    // colour at the pixel where each node must be (x1 east, x2 north) with
    // the page's colour for that node's value.
    const grid = await http('GET', `/releases/${encodeURIComponent(releaseId)}/grid?${viewer.gridQuery}`);
    const [nx, ny] = grid.counts;
    check(grid.values.length === nx * ny, 'grid: values and counts do not match');
    const nodes = [
      [Math.round(nx * 0.2), Math.round(ny * 0.8)], // north-west
      [Math.round(nx * 0.8), Math.round(ny * 0.8)], // north-east
      [Math.round(nx * 0.2), Math.round(ny * 0.2)], // south-west
      [Math.round(nx * 0.8), Math.round(ny * 0.2)], // south-east
      [Math.round(nx * 0.5), Math.round(ny * 0.35)],
      [Math.round(nx * 0.35), Math.round(ny * 0.6)],
    ].filter(([i, j]) => Number.isFinite(grid.values[i + nx * j]) && Number.isFinite(grid.values[i + nx * (ny - 1 - j)]));
    check(nodes.length >= 3, 'grid: too few finite values near the sampled nodes to check the orientation');
    const pts = nodes.map(([i, j]) => [
      (p.left + (i / (nx - 1)) * p.width) * dpr,
      (p.top + (1 - j / (ny - 1)) * p.height) * dpr,
    ]);
    const got = await readPixels(page, '#map', pts);
    const want = await page.evaluate((vals) => vals.map((v) => window.gpdpViewer.colourFor(v)), nodes.map(([i, j]) => grid.values[i + nx * j]));
    const flipped = await page.evaluate((vals) => vals.map((v) => window.gpdpViewer.colourFor(v)), nodes.map(([i, j]) => grid.values[i + nx * (ny - 1 - j)]));
    const dist = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
    const errs = got.map((c, k) => dist(c, want[k]));
    const worst = Math.max(...errs);
    check(
      worst <= 40,
      `map colours do not match the grid at the expected pixels (north up, east right): worst RGB distance ${worst.toFixed(1)}; ` +
        nodes.map(([i, j], k) => `node (${i},${j}) got ${got[k].slice(0, 3)} want ${want[k]}`).join('; '),
    );
    const flipErr = got.reduce((s, c, k) => s + dist(c, flipped[k]), 0) / got.length;
    orientation = `north-up verified (mean RGB error ${(errs.reduce((a, b) => a + b, 0) / errs.length).toFixed(1)}, ${flipErr.toFixed(1)} if flipped)`;
  }

  await page.screenshot({ path: path.join(ARTIFACTS, 'viewer.png'), fullPage: true });

  // ---- click the canvas centre (scrolled into the viewport first: mouse clicks land on screen)
  await page.locator('#map').scrollIntoViewIfNeeded();
  const box = await page.locator('#map').boundingBox();
  check(box && box.width > 100 && box.height > 100, `#map is too small on screen: ${JSON.stringify(box)}`);
  const scale = box.width / p.cssWidth; // CSS layout px → on-screen px
  const before = await regionSignature(page, (box.width / 2 / scale) * dpr, (box.height / 2 / scale) * dpr, 12);

  async function clickAndRead(fx, fy, seq) {
    const x = box.width * fx;
    const y = box.height * fy;
    await page.mouse.click(box.x + x, box.y + y);
    await page
      .waitForFunction((s) => window.lastEval && window.lastEval.seq >= s, seq, { timeout: 15_000 })
      .catch(async () => {
        const err = await page.textContent('#error');
        throw new Check(`no value after clicking at (${x.toFixed(0)}, ${y.toFixed(0)}) px${err ? `; #error says: ${err}` : ''}`);
      });
    const last = await page.evaluate(() => window.lastEval);
    const text = ((await page.textContent('#value')) || '').trim();
    const parsed = parseValueText(text);
    check(parsed, `#value does not read "f(…) = number": "${text}"`);
    check(Number.isFinite(parsed.value), `#value shows no number: "${text}"`);
    check(
      parsed.coords.length === dim && parsed.coords.every((c, k) => c === last.point[k]),
      `#value shows coordinates (${parsed.coords}) but the page evaluated (${last.point})`,
    );
    check(
      Math.abs(parsed.value - last.value) <= 1e-3 * Math.abs(last.value) + 1e-9,
      `#value shows ${parsed.value} but the page received ${last.value}`,
    );
    if (release.units) check(parsed.units === release.units, `#value shows units "${parsed.units}", expected "${release.units}"`);

    // The pixel → domain conversion: the clicked CSS pixel, independently.
    const cssX = x / scale;
    const cssY = y / scale;
    const u = (cssX - p.left) / p.width;
    const expected = [release.lower[0] + u * (release.upper[0] - release.lower[0])];
    const tol = [((release.upper[0] - release.lower[0]) / p.width) * 1.5];
    if (dim === 2) {
      const v = (cssY - p.top) / p.height;
      expected.push(release.upper[1] - v * (release.upper[1] - release.lower[1]));
      tol.push(((release.upper[1] - release.lower[1]) / p.height) * 1.5);
    }
    for (let k = 0; k < dim; k++) {
      check(
        Math.abs(last.point[k] - expected[k]) <= tol[k],
        `clicked pixel maps to x${k + 1} = ${last.point[k]}, expected ≈ ${expected[k].toFixed(3)} (±${tol[k].toFixed(3)})`,
      );
      check(last.point[k] >= release.lower[k] && last.point[k] <= release.upper[k], `evaluated point ${last.point} is outside the domain's box`);
    }

    // Consistency: the server, asked directly, gives the identical value.
    const direct = await http('POST', `/releases/${encodeURIComponent(releaseId)}/eval`, { points: [last.point], path: last.path });
    check(Array.isArray(direct.values) && direct.values.length === 1, 'POST eval: expected one value');
    check(
      Object.is(direct.values[0], last.value),
      `inconsistent release: the page got f(${last.point}) = ${last.value}, a direct POST /eval gives ${direct.values[0]}`,
    );
    return { last, text, cssX, cssY };
  }

  const first = await clickAndRead(0.5, 0.5, 1);
  const after = await regionSignature(page, first.cssX * dpr, first.cssY * dpr, 12);
  check(after.some((v, i) => v !== before[i]), 'no marker was drawn at the clicked point');

  // ---- a second point
  const second = await clickAndRead(0.3, 0.3, 2);
  check(second.last.point.some((c, k) => c !== first.last.point[k]), 'the second click evaluated the same point as the first');
  // The first point again: the path is one fixed function.
  const again = await http('POST', `/releases/${encodeURIComponent(releaseId)}/eval`, { points: [first.last.point, second.last.point], path: first.last.path });
  check(
    Object.is(again.values[0], first.last.value) && Object.is(again.values[1], second.last.value),
    `re-evaluating gives different values: ${again.values} vs ${first.last.value}, ${second.last.value}`,
  );
  check(!(await page.isVisible('#error')), `#error is visible after clicking: ${await page.textContent('#error')}`);
  await page.screenshot({ path: path.join(ARTIFACTS, 'viewer-clicked.png'), fullPage: true });

  check(pageErrors.length === 0, 'uncaught exception in the page');
  check(consoleErrors.length === 0, 'errors in the browser console');
  check(failedRequests.length === 0, 'the page made failing requests');

  await browser.close();
  browser = null;
  finished = true;
  clearTimeout(watchdog);
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  console.log(
    `viewer test passed: release ${releaseId} (dim ${dim}, grid ${viewer.gridCounts.join('×')}), ${orientation}, ` +
      `clicks "${first.text}" and "${second.text}" match direct POST /eval, screenshots in ${ARTIFACTS} (${secs} s)`,
  );
}

run().catch((e) => fail(e instanceof Check ? e.message : e && e.stack ? e.stack : String(e)));
