/* random_bbox_crop's window search for a whole batch in one call: the same draws and the same
 * windows, bit for bit, as torch_dali/functional/bbox_crop.py's find_crop over rng.py's SampleRNG
 * (same float64 operations in the same order as NumPy's elementwise ones; build with
 * -ffp-contract=off so no product is fused into an add). The Python spec stays the definition;
 * tests/test_bbox_crop_native.py holds this file to it. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "sample_rng.h"

typedef struct {
  int ndim, n_thr, overlap, n_aspect, allow_no_crop, num_attempts, total_attempts, all_boxes, has_prune;
  int64_t max_attempts;
  const double *thr, *aspect;
  double scale_lo, scale_hi, prune;
} params_t;

typedef struct {
  double lo[3], hi[3]; /* the window, relative */
  double anchor[3], shape[3]; /* what the op outputs (before float32) */
} window_t;

/* one random window; 0 when its aspect ratio is out of range (the spec's None) */
static int candidate(rng_t* r, const params_t* p, const double* cs, const double* is, window_t* w) {
  const int n = p->ndim;
  if (cs) {
    for (int d = 0; d < n; ++d) {
      const int64_t room = (int64_t)(is[d] - cs[d]); /* int(): toward zero, as C's cast */
      w->anchor[d] = (double)randint(r, room < 0 ? room : 0, room > 0 ? room : 0);
    }
    for (int d = 0; d < n; ++d) {
      w->lo[d] = w->anchor[d] / is[d];
      w->hi[d] = w->lo[d] + cs[d] / is[d];
      w->shape[d] = cs[d];
    }
    return 1;
  }
  double unit[3] = {1.0, 1.0, 1.0}, shape[3], ab[3];
  if (is)
    for (int d = 0; d < n; ++d) unit[d] = is[d];
  for (int d = 0; d < n; ++d) shape[d] = uniform(r, p->scale_lo, p->scale_hi);
  /* fixed aspect ratios (min == max), applied in a random dimension order */
  double fixed[3][3];
  memset(fixed, 0, sizeof fixed);
  int any = 0, k = 0;
  for (int d0 = 0; d0 < n; ++d0)
    for (int d1 = d0 + 1; d1 < n; ++d1) {
      const double lo = p->aspect[2 * k], hi = p->aspect[2 * k + 1];
      if (lo == hi) {
        fixed[d0][d1] = lo;
        fixed[d1][d0] = 1.0 / lo;
        any = 1;
      }
      k = (k + 1) % p->n_aspect;
    }
  if (any) {
    int order[3] = {0, 1, 2};
    for (int i = n - 1; i > 0; --i) {
      const int j = (int)randint(r, 0, i), t = order[i];
      order[i] = order[j];
      order[j] = t;
    }
    double longest = -INFINITY, top = -INFINITY;
    for (int d = 0; d < n; ++d) {
      ab[d] = shape[d] * unit[d];
      longest = ab[d] > longest ? ab[d] : longest;
    }
    for (int i0 = 0; i0 < n; ++i0)
      for (int i1 = i0 + 1; i1 < n; ++i1) {
        const int d0 = order[i0], d1 = order[i1];
        if (ab[d0] != ab[d1] && fixed[d0][d1] > 0) ab[d0] = ab[d1] * fixed[d0][d1];
      }
    for (int d = 0; d < n; ++d) top = ab[d] > top ? ab[d] : top;
    const double s = longest / top;
    for (int d = 0; d < n; ++d) shape[d] = (ab[d] * s) / unit[d];
  }
  for (int d = 0; d < n; ++d) ab[d] = shape[d] * unit[d];
  k = 0;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      const double lo = p->aspect[2 * k], hi = p->aspect[2 * k + 1];
      const double q = ab[j] > 0 ? ab[i] / ab[j] : INFINITY;
      const double tol = lo == hi ? 1e-5 * lo : 0.0;
      if (!(lo - tol <= q && q <= hi + tol)) return 0;
      k = (k + 1) % p->n_aspect;
    }
  for (int d = 0; d < n; ++d) {
    w->anchor[d] = uniform(r, 0.0, 1.0 - shape[d]);
    w->lo[d] = w->anchor[d];
    w->hi[d] = w->anchor[d] + shape[d];
    w->shape[d] = w->hi[d] - w->lo[d];
  }
  return 1;
}

static double prod(const double* e, int n) {
  double v = e[0];
  for (int d = 1; d < n; ++d) v = v * e[d];
  return v;
}

/* the box's intersection volume with the window, and the box's own volume */
static double intersection(const double* lo, const double* hi, const window_t* w, int n, double* vol) {
  double ext[3] = {0}, own[3] = {0};
  int pos = 1;
  for (int d = 0; d < n; ++d) {
    const double a = hi[d] < w->hi[d] ? hi[d] : w->hi[d];
    const double b = lo[d] > w->lo[d] ? lo[d] : w->lo[d];
    ext[d] = a - b;
    pos &= ext[d] > 0;
    ext[d] = ext[d] > 0 ? ext[d] : 0.0;
    own[d] = hi[d] - lo[d];
  }
  *vol = prod(own, n);
  return pos ? prod(ext, n) : 0.0;
}

static int keeps(const double* lo, const double* hi, const window_t* w, const params_t* p) {
  const int n = p->ndim;
  if (!p->has_prune) {
    for (int d = 0; d < n; ++d) {
      const double c = (lo[d] + hi[d]) * 0.5;
      if (!(c >= w->lo[d] && c <= w->hi[d])) return 0;
    }
    return 1;
  }
  double vol;
  const double inter = intersection(lo, hi, w, n, &vol);
  const double frac = vol > 0 ? inter / vol : 0.0;
  return inter > 0 && frac >= p->prune;
}

/* the min (or max) of the boxes' IoU (or overlap) with the window; *kept: whether any box is kept */
static double metric(const double* lo, const double* hi, int64_t nb, const window_t* w, const params_t* p,
                     int* kept) {
  const int n = p->ndim;
  double ext[3];
  for (int d = 0; d < n; ++d) ext[d] = w->hi[d] - w->lo[d];
  const double vc = prod(ext, n);
  double best = 0.0;
  *kept = 0;
  for (int64_t b = 0; b < nb; ++b) {
    double vb;
    const double inter = intersection(lo + b * n, hi + b * n, w, n, &vb);
    double m;
    if (p->overlap) {
      m = vb > 0 ? inter / vb : 0.0;
    } else {
      const double uni = vb + vc - inter;
      m = uni > 0 ? inter / uni : 0.0;
    }
    if (b == 0 || (p->all_boxes ? m < best : m > best)) best = m;
    if (!*kept) *kept = keeps(lo + b * n, hi + b * n, w, p);
  }
  return best;
}

static void full(window_t* w, int n) {
  for (int d = 0; d < n; ++d) {
    w->lo[d] = w->anchor[d] = 0.0;
    w->hi[d] = w->shape[d] = 1.0;
  }
}

/* 0: *w found (*keep_all: the whole image, every box kept); 1: the search gave up */
static int search(rng_t* r, const params_t* p, const double* lo, const double* hi, int64_t nb, const double* cs,
                  const double* is, window_t* w, int* keep_all, int* exhausted, double* best_metric) {
  const int n_opt = p->n_thr + (p->allow_no_crop && !cs);
  int64_t count = 0;
  int have_best = 0;
  double best_m = -1.0;
  window_t best;
  *keep_all = *exhausted = 0;
  for (;;) {
    const int64_t pick = randint(r, 0, n_opt - 1);
    if (pick == p->n_thr) {
      full(w, p->ndim);
      *keep_all = 1;
      return 0;
    }
    const double threshold = p->thr[pick];
    for (int a = 0; a < p->num_attempts; ++a) {
      if (0 < p->total_attempts && p->total_attempts <= count) {
        if (have_best) {
          *w = best;
        } else {
          full(w, p->ndim);
          *keep_all = 1;
        }
        *exhausted = 1;
        *best_metric = best_m > 0.0 ? best_m : 0.0;
        return 0;
      }
      if (++count > p->max_attempts) return 1;
      window_t c;
      if (!candidate(r, p, cs, is, &c)) continue;
      if (nb == 0) {
        *w = c;
        return 0;
      }
      int kept;
      const double m = metric(lo, hi, nb, &c, p, &kept);
      if (m >= threshold && kept) {
        *w = c;
        return 0;
      }
      if (m > best_m) {
        best = c;
        best_m = m;
        have_best = 1;
      }
    }
  }
}

/* Sample s (RNG index ids[s]) owns boxes [offsets[s], offsets[s+1]) of lo/hi ((boxes, ndim) float64).
 * Per sample: anchor, shape (float32), the window rel_lo/rel_hi (float64), exhausted and best_metric;
 * per box: keep. Returns -1 when done, the first sample whose search gave up after max_attempts
 * windows, or -2 for arguments it does not take. */
int td_bbox_crop(uint64_t seed, uint64_t iteration, int n, const int64_t* ids, int ndim, const double* lo,
                 const double* hi, const int64_t* offsets, const double* thresholds, int n_thr, int overlap,
                 const double* aspect, int n_aspect, double scale_lo, double scale_hi, int allow_no_crop,
                 int num_attempts, int total_attempts, int all_boxes, int has_prune, double prune,
                 const double* crop_shape, const double* input_shape, int64_t max_attempts, float* anchor,
                 float* shape, double* rel_lo, double* rel_hi, uint8_t* keep, uint8_t* exhausted,
                 double* best_metric) {
  if (ndim < 1 || ndim > 3 || n_thr < 1 || n_aspect < 1 || num_attempts < 1 || (crop_shape && !input_shape))
    return -2;
  const params_t p = {ndim, n_thr, overlap, n_aspect, allow_no_crop, num_attempts, total_attempts, all_boxes,
                      has_prune, max_attempts, thresholds, aspect, scale_lo, scale_hi, prune};
  const uint64_t base = rng_base(seed, iteration);
  for (int s = 0; s < n; ++s) {
    rng_t r = {mix(base ^ (uint64_t)ids[s]), 0};
    const int64_t b0 = offsets[s], nb = offsets[s + 1] - offsets[s];
    const double* cs = crop_shape ? crop_shape + (int64_t)s * ndim : 0;
    const double* is = input_shape ? input_shape + (int64_t)s * ndim : 0;
    window_t w;
    int keep_all, ex;
    best_metric[s] = 0.0;
    if (search(&r, &p, lo + b0 * ndim, hi + b0 * ndim, nb, cs, is, &w, &keep_all, &ex, best_metric + s)) return s;
    exhausted[s] = (uint8_t)ex;
    for (int d = 0; d < ndim; ++d) {
      anchor[s * ndim + d] = (float)w.anchor[d];
      shape[s * ndim + d] = (float)w.shape[d];
      rel_lo[s * ndim + d] = w.lo[d];
      rel_hi[s * ndim + d] = w.hi[d];
    }
    for (int64_t b = 0; b < nb; ++b)
      keep[b0 + b] = (uint8_t)(keep_all || keeps(lo + (b0 + b) * ndim, hi + (b0 + b) * ndim, &w, &p));
  }
  return -1;
}

/* The kept boxes of a batch in their windows' coordinates, as the op's float32 NumPy remap:
 * boxes `b` (rows of ndim starts then ndim ends, or extents with `extents`: end = start + extent),
 * windows cast to float32, each kept box clipped to its window, (v - lo) / (hi - lo) clipped to
 * [0, 1], written as starts then ends (or extents: end - start). Also each kept box's row and
 * index in its sample, and each sample's count. Returns the kept boxes' number, or -1 (nothing
 * written that counts) where NumPy's handling of signed zeros or NaN could differ: a -0.0 or NaN
 * coordinate or window value, or a window of no extent. */
int64_t td_bbox_remap(int n, int ndim, const float* b, int extents, const int64_t* offsets, const double* rel_lo,
                      const double* rel_hi, const uint8_t* keep, float* out, int64_t* rows, int32_t* local,
                      int64_t* counts) {
  int64_t k = 0;
  for (int s = 0; s < n; ++s) {
    float c_lo[3], c_hi[3], ext[3];
    for (int d = 0; d < ndim; ++d) {
      c_lo[d] = (float)rel_lo[s * ndim + d];
      c_hi[d] = (float)rel_hi[s * ndim + d];
      ext[d] = c_hi[d] - c_lo[d];
      if (!(ext[d] > 0.0f) || signbit(c_lo[d]) || signbit(c_hi[d]) || isnan(c_lo[d]) || isnan(c_hi[d])) return -1;
    }
    counts[s] = 0;
    for (int64_t i = offsets[s]; i < offsets[s + 1]; ++i) {
      if (!keep[i]) continue;
      const float* v = b + i * 2 * ndim;
      float* o = out + k * 2 * ndim;
      for (int d = 0; d < ndim; ++d) {
        const float lo = v[d], hi = extents ? v[d] + v[ndim + d] : v[ndim + d];
        if (signbit(lo) || signbit(hi) || isnan(lo) || isnan(hi)) return -1;
        float a = ((lo > c_lo[d] ? lo : c_lo[d]) - c_lo[d]) / ext[d];
        float e = ((hi < c_hi[d] ? hi : c_hi[d]) - c_lo[d]) / ext[d];
        a = a > 0.0f ? (a < 1.0f ? a : 1.0f) : 0.0f;
        e = e > 0.0f ? (e < 1.0f ? e : 1.0f) : 0.0f;
        o[d] = a;
        o[ndim + d] = extents ? e - a : e;
      }
      rows[k] = i;
      local[k] = (int32_t)(i - offsets[s]);
      ++k;
      ++counts[s];
    }
  }
  return k;
}
