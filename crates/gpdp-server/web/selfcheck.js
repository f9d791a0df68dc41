// Checks this viewer's colour and tick functions against the values the
// library computed (palette.js's SAMPLES): the list of disagreements, empty
// when the viewer and the PNG/SVG figures agree. Used by the browser test.

import { SAMPLES } from './palette.js';
import { colour, colourRange } from './colour.js';
import { linearTicks, niceStep, tickDecimals } from './ticks.js';

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

export function selfCheck() {
  const bad = [];
  for (const s of SAMPLES.colours) {
    const got = colour(s.palette, s.t);
    if (!same(got, s.rgb)) bad.push(`colour(${s.palette}, ${s.t}) = ${got}, library ${s.rgb}`);
  }
  for (const s of SAMPLES.ranges) {
    const got = colourRange(s.palette, s.min, s.max);
    if (!same(got, s.range)) bad.push(`colourRange(${s.palette}, ${s.min}, ${s.max}) = ${got}, library ${s.range}`);
  }
  for (const s of SAMPLES.ticks) {
    const step = niceStep(s.span, s.target);
    const ticks = linearTicks(s.lo, s.lo + s.span, step);
    const decimals = tickDecimals(step);
    if (step !== s.step || !same(ticks, s.ticks) || decimals !== s.decimals) {
      bad.push(`ticks(${s.lo}, +${s.span}, ${s.target}) = ${step} ${ticks} ${decimals}, library ${s.step} ${s.ticks} ${s.decimals}`);
    }
  }
  return bad;
}
