#!/bin/sh
# The experiment of the gpdp thompson example: the response of a trial at
# dose $1 in [0, 1] (a smooth bump at 0.7 on a slope, in [0, 1]), with
# measurement noise from awk's generator seeded by the dose. Replace it by
# the real experiment: it receives the point's coordinates as arguments and
# prints the observed value on its first line.
awk -v x="$1" 'BEGIN {
  srand(int(x * 1000003) % 32749 + 1);
  u1 = rand(); u2 = rand(); if (u1 < 1e-12) u1 = 1e-12;
  noise = sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
  f = 0.25 + 0.35 * x + 0.4 * exp(-((x - 0.7) / 0.08) ^ 2);
  printf "%.6f\n", f + 0.03 * noise
}'
