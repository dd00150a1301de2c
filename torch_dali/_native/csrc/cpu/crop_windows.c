/* Random-resized-crop windows for a whole batch in one call: the same draws, bit for bit, as
 * torch_dali/functional/crop_window.py's random_crop_window over rng.py's SampleRNG.
 * Same libm (exp, log, sqrt) as Python's math module, half-even rounding as Python's round(),
 * and the same order of floating-point operations; build with -ffp-contract=off (no fused
 * multiply-add) so nothing is rounded differently. */
#include <math.h>
#include <stdint.h>

#include "sample_rng.h"

static int64_t round_even(double x) { return (int64_t)nearbyint(x); } /* Python's round() */

/* out[4*i..4*i+3] = (y, x, h, w) of sample i. Returns 0, or -1 for bad arguments. */
int td_crop_windows(uint64_t seed, uint64_t iteration, int n, const int64_t* heights, const int64_t* widths,
                    double area_lo, double area_hi, double ratio_lo, double ratio_hi, int attempts,
                    int64_t* out) {
  if (n < 0 || !(ratio_lo > 0.0) || !(ratio_hi > 0.0)) return -1;
  const uint64_t base = rng_base(seed, iteration);
  const double log_lo = log(ratio_lo), log_hi = log(ratio_hi);
  for (int i = 0; i < n; ++i) {
    const int64_t height = heights[i], width = widths[i];
    int64_t* o = out + 4 * (int64_t)i;
    if (height <= 0 || width <= 0) return -1;
    rng_t r = {mix(base ^ (uint64_t)i), 0};
    const double total = (double)(height * width);
    int done = 0;
    for (int k = 0; k < (attempts > 1 ? attempts : 1); ++k) {
      const double target = total * uniform(&r, area_lo, area_hi);
      const double ratio = exp(uniform(&r, log_lo, log_hi));
      const int64_t w = round_even(sqrt(target * ratio));
      const int64_t h = round_even(sqrt(target / ratio));
      if (0 < w && w <= width && 0 < h && h <= height) {
        o[0] = randint(&r, 0, height - h);
        o[1] = randint(&r, 0, width - w);
        o[2] = h;
        o[3] = w;
        done = 1;
        break;
      }
    }
    if (done) continue;
    const double ratio = (double)width / (double)height;
    int64_t w, h;
    if (ratio < ratio_lo) {
      w = width;
      h = round_even((double)w / ratio_lo);
    } else if (ratio > ratio_hi) {
      h = height;
      w = round_even((double)h * ratio_hi);
    } else {
      w = width;
      h = height;
    }
    h = h < height ? h : height;
    h = h > 1 ? h : 1;
    w = w < width ? w : width;
    w = w > 1 ? w : 1;
    o[0] = randint(&r, 0, height - h);
    o[1] = randint(&r, 0, width - w);
    o[2] = h;
    o[3] = w;
  }
  return 0;
}
