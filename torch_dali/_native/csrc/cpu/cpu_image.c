/* CPU image kernels for the per-sample ops, each bit for bit what its pure-torch spec computes,
 * in one call that holds no Python lock (ctypes releases the GIL):
 * - td_resize_linear: one uint8 HWC image (or a window of it) resized with DALI's
 *   linear / triangular filter to uint8 or float32 HWC, as torch_dali/functional/resize.py does
 *   for those filters (its `_filter`, `_reach`, `_weights`, pass order, tap-by-tap float32 sums and
 *   half-even rounding, half up in the last row % 16 values of a uint8 row, as DALI stores them);
 * - td_crop_mirror_normalize: functional/normalize.py's `_normalize_into` for a window inside
 *   the image.
 * The same float32 operations in the same order; build with -ffp-contract=off (no fused
 * multiply-add) so nothing rounds differently. The only vectorised loops run across independent
 * outputs, never across a sum. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* DALI's triangle table (resize.py's _tables()["triangle"]) */
static const float TRIANGLE[3] = {0.0f, 1.0f, 0.0f};

typedef struct {
  int64_t n_in; /* image extent on this axis */
  int n_out;
  float origin, span, end; /* the source window on this axis, in float32 as resize.py's Axis */
  float units, anchor;
  int taps;
  int64_t lo, ext; /* what the pass reads (resize.py's _reach) */
  int copy;        /* the identity: no pass (resize.py's _exact_copy) */
} axis_t;

/* resize.py's _filter for "linear" / "triangular"; 0 when the filter would be wider than 2**24
 * taps (a window millions of times its output: the caller declines, the spec decides) */
static int filter_params(axis_t* a, int antialias) {
  const int shrink = antialias && (float)a->n_out < a->span;
  const float ratio = a->span / (float)a->n_out;
  const float wide = 2.0f * (shrink ? ratio : 1.0f);
  const float width = wide > 1.0f ? wide : 1.0f;
  a->units = 2.0f / width;
  a->anchor = 1.0f / a->units;
  const double taps = ceil((double)(2.0f / a->units));
  if (!(taps <= 16777216.0)) return 0;
  a->taps = (int)taps;
  return 1;
}

/* resize.py's _reach, in float32 as it computes it */
static void reach(axis_t* a) {
  int64_t lo = (int64_t)floorf(a->origin - a->anchor);
  int64_t hi = (int64_t)floorf((a->end - a->anchor) + (float)a->taps);
  lo = lo < 0 ? 0 : (lo > a->n_in ? a->n_in : lo);
  hi = hi < 0 ? 0 : (hi > a->n_in ? a->n_in : hi);
  a->lo = lo;
  a->ext = hi - lo;
  a->copy = a->n_in == a->n_out && a->origin == 0.0f && a->span == (float)a->n_in;
}

/* resize.py's _weights: idx[i * taps + k] (source index, clamped) and w[i * taps + k] */
static void weights(const axis_t* a, int64_t shift, int64_t* idx, float* w) {
  const int taps = a->taps;
  const float o = a->origin - (float)shift;
  const float scale = a->span / (float)a->n_out;
  const float start = o + (((0.5f * scale) - 0.5f) - a->anchor);
  for (int i = 0; i < a->n_out; ++i) {
    const float left = (float)i * scale + start;
    const float first = ceilf(left);
    const float frac = first - left;
    float* wi = w + (int64_t)i * taps;
    float total = 0.0f;
    for (int k = 0; k < taps; ++k) {
      const float pos = (frac + (float)k) * a->units;
      const float lo = floorf(pos);
      const float d = pos - lo;
      const int64_t li = (int64_t)lo;
      const float f0 = li >= 0 ? TRIANGLE[li > 2 ? 2 : li] : 0.0f;
      const float f1 = li + 1 < 3 ? TRIANGLE[li + 1 < 0 ? 0 : li + 1] : 0.0f;
      float c = f0 + d * (f1 - f0);
      if (!(pos > -1.0f && pos < 3.0f)) c = 0.0f;
      wi[k] = c;
      total = k == 0 ? c : total + c;
    }
    if (total != 0.0f)
      for (int k = 0; k < taps; ++k) wi[k] = wi[k] / total;
    const int64_t f = (int64_t)first;
    for (int k = 0; k < taps; ++k) {
      const int64_t s = f + k + shift;
      idx[(int64_t)i * taps + k] = s < 0 ? 0 : (s > a->n_in - 1 ? a->n_in - 1 : s);
    }
  }
}

/* Where a pass's result goes: float32 (an intermediate or the float output) or uint8 (rounded
 * half to even and saturated, as torch.round(y).clamp_(0, 255).to(uint8)). */
static inline uint8_t to_u8(float v) {
  if (!(v > 0.0f)) return 0;
  if (v >= 255.0f) return 255;
  /* 0 < v < 255: adding 2^23 leaves no fraction bits, so the sum rounds v half to even (the
   * default rounding mode), as rintf would, without a library call per value */
  const float r = (v + 8388608.0f) - 8388608.0f;
  return (uint8_t)r;
}

/* to_u8 of value `pos` of an output row of `row` values: DALI 2.4's CPU resize stores a row 16
 * values at a time (half to even) and its last row % 16 values one by one, rounding half away
 * from zero (an exact x.5 goes up there). */
static inline uint8_t to_u8_at(float v, int64_t pos, int64_t row) {
  if (pos < row - row % 16 || !(v > 0.0f) || v >= 255.0f) return to_u8(v);
  const float t = truncf(v);
  return (uint8_t)(v - t == 0.5f ? t + 1.0f : (v + 8388608.0f) - 8388608.0f);
}

/* Rows pass: out row i (ncols values) = sum over k of src row idx[i][k] * w[i][k], tap after tap.
 * src rows start `col0` values in and are `stride` values apart. */
#define ROWS_PASS(NAME, SRC_T)                                                                        \
  static int NAME(const SRC_T* src, int64_t stride, int64_t col0, int64_t ncols, int n_out, int taps,  \
                  const int64_t* idx, const float* w, float* out, uint8_t* out8) {                   \
    float* acc = out8 ? (float*)malloc(sizeof(float) * (size_t)ncols) : NULL;                         \
    if (out8 && !acc) return -1;                                                                      \
    for (int i = 0; i < n_out; ++i) {                                                                 \
      float* o = out8 ? acc : out + (int64_t)i * ncols;                                               \
      const int64_t* ix = idx + (int64_t)i * taps;                                                    \
      const float* wi = w + (int64_t)i * taps;                                                        \
      const SRC_T* s = src + ix[0] * stride + col0;                                                   \
      const float w0 = wi[0];                                                                         \
      for (int64_t j = 0; j < ncols; ++j) o[j] = (float)s[j] * w0;                                    \
      for (int k = 1; k < taps; ++k) {                                                                \
        const SRC_T* sk = src + ix[k] * stride + col0;                                                \
        const float wk = wi[k];                                                                       \
        for (int64_t j = 0; j < ncols; ++j) o[j] = o[j] + (float)sk[j] * wk;                          \
      }                                                                                               \
      if (out8) {                                                                                     \
        uint8_t* o8 = out8 + (int64_t)i * ncols;                                                      \
        for (int64_t j = 0; j < ncols; ++j) o8[j] = to_u8_at(acc[j], j, ncols);                       \
      }                                                                                               \
    }                                                                                                 \
    free(acc);                                                                                        \
    return 0;                                                                                         \
  }

/* Columns pass: out (nrows, n_out, ch): pixel x = sum over k of src pixel idx[x][k] - pix0 of the
 * same row and channel, times w[x][k], tap after tap. src rows are `stride` values apart. One
 * channel: COLS_BODY with CH = 1; 3 and 4: COLS_VEC below; any other count: 16 channels at a time. */
#define COLS_BODY(SRC_T, CH)                                                                         \
  for (int64_t r = 0; r < nrows; ++r) {                                                              \
    const SRC_T* s = src + r * stride - pix0 * (CH);                                                 \
    const int64_t row_at = r * (int64_t)n_out * (CH);                                                \
    for (int x = 0; x < n_out; ++x) {                                                                \
      const int64_t* ix = idx + (int64_t)x * taps;                                                   \
      const float* wx = w + (int64_t)x * taps;                                                       \
      float acc[16];                                                                                 \
      const SRC_T* p = s + ix[0] * (CH);                                                             \
      for (int c = 0; c < (CH); ++c) acc[c] = (float)p[c] * wx[0];                                   \
      for (int k = 1; k < taps; ++k) {                                                               \
        const SRC_T* q = s + ix[k] * (CH);                                                           \
        const float wk = wx[k];                                                                      \
        for (int c = 0; c < (CH); ++c) acc[c] = acc[c] + (float)q[c] * wk;                           \
      }                                                                                              \
      const int64_t at = row_at + (int64_t)x * (CH);                                                 \
      if (out8)                                                                                      \
        for (int c = 0; c < (CH); ++c) out8[at + c] = to_u8_at(acc[c], at - row_at + c, n_out * (CH)); \
      else                                                                                           \
        for (int c = 0; c < (CH); ++c) out[at + c] = acc[c];                                         \
    }                                                                                                \
  }

/* 3 or 4 channels: one 4-lane vector per pixel, so each tap is one multiply and one add for all
 * channels (each lane still sums its own channel tap after tap; a fourth lane of 3-channel data
 * is a neighbour's value or 0, computed and dropped). */
typedef float v4f __attribute__((vector_size(16)));

static inline v4f pixel_u8(const uint8_t* p, int ch) {
  return (v4f){(float)p[0], (float)p[1], (float)p[2], ch == 4 ? (float)p[3] : 0.0f};
}

static inline v4f pixel_f32(const float* p, int ch) {
  v4f v;
  memcpy(&v, p, 16); /* the intermediate buffer has one float of padding at its end */
  (void)ch;
  return v;
}

#define COLS_VEC(LOAD, CH)                                                                           \
  for (int64_t r = 0; r < nrows; ++r) {                                                              \
    const __typeof__(src) s = src + r * stride - pix0 * (CH);                                        \
    const int64_t row_at = r * (int64_t)n_out * (CH);                                               \
    for (int x = 0; x < n_out; ++x) {                                                                \
      const int64_t* ix = idx + (int64_t)x * taps;                                                   \
      const float* wx = w + (int64_t)x * taps;                                                       \
      v4f acc = LOAD(s + ix[0] * (CH), CH) * wx[0];                                                  \
      for (int k = 1; k < taps; ++k) acc = acc + LOAD(s + ix[k] * (CH), CH) * wx[k];                 \
      const int64_t at = row_at + (int64_t)x * (CH);                                                 \
      if (out8)                                                                                      \
        for (int c = 0; c < (CH); ++c) out8[at + c] = to_u8_at(acc[c], at - row_at + c, n_out * (CH)); \
      else                                                                                           \
        for (int c = 0; c < (CH); ++c) out[at + c] = acc[c];                                         \
    }                                                                                                \
  }

#define COLS_PASS(NAME, SRC_T, LOAD)                                                                     \
  static void NAME##_ch(const SRC_T* src, int64_t stride, int64_t pix0, int64_t nrows, int ch,       \
                        int n_out, int taps, const int64_t* idx, const float* w, float* out,         \
                        uint8_t* out8) {                                                             \
    for (int c0 = 0; c0 < ch; c0 += 16) { /* any channel count: 16 at a time */                      \
      const int cn = ch - c0 < 16 ? ch - c0 : 16;                                                    \
      for (int64_t r = 0; r < nrows; ++r) {                                                          \
        const SRC_T* s = src + r * stride - pix0 * ch + c0;                                          \
        for (int x = 0; x < n_out; ++x) {                                                            \
          const int64_t* ix = idx + (int64_t)x * taps;                                               \
          const float* wx = w + (int64_t)x * taps;                                                   \
          float acc[16];                                                                             \
          for (int c = 0; c < cn; ++c) acc[c] = (float)s[ix[0] * ch + c] * wx[0];                    \
          for (int k = 1; k < taps; ++k)                                                             \
            for (int c = 0; c < cn; ++c) acc[c] = acc[c] + (float)s[ix[k] * ch + c] * wx[k];         \
          const int64_t at = (r * (int64_t)n_out + x) * ch + c0;                                     \
          for (int c = 0; c < cn; ++c) {                                                             \
            if (out8)                                                                                \
              out8[at + c] = to_u8_at(acc[c], (int64_t)x * ch + c0 + c, (int64_t)n_out * ch);       \
            else                                                                                     \
              out[at + c] = acc[c];                                                                  \
          }                                                                                          \
        }                                                                                            \
      }                                                                                              \
    }                                                                                                \
  }                                                                                                  \
  static void NAME##_1(const SRC_T* src, int64_t stride, int64_t pix0, int64_t nrows, int n_out,     \
                       int taps, const int64_t* idx, const float* w, float* out, uint8_t* out8) {    \
    COLS_BODY(SRC_T, 1)                                                                              \
  }                                                                                                  \
  static void NAME##_3(const SRC_T* src, int64_t stride, int64_t pix0, int64_t nrows, int n_out,     \
                       int taps, const int64_t* idx, const float* w, float* out, uint8_t* out8) {    \
    COLS_VEC(LOAD, 3)                                                                                \
  }                                                                                                  \
  static void NAME##_4(const SRC_T* src, int64_t stride, int64_t pix0, int64_t nrows, int n_out,     \
                       int taps, const int64_t* idx, const float* w, float* out, uint8_t* out8) {    \
    COLS_VEC(LOAD, 4)                                                                                \
  }                                                                                                  \
  static void NAME(const SRC_T* src, int64_t stride, int64_t pix0, int64_t nrows, int ch, int n_out, \
                   int taps, const int64_t* idx, const float* w, float* out, uint8_t* out8) {        \
    if (ch == 3)                                                                                     \
      NAME##_3(src, stride, pix0, nrows, n_out, taps, idx, w, out, out8);                            \
    else if (ch == 1)                                                                                \
      NAME##_1(src, stride, pix0, nrows, n_out, taps, idx, w, out, out8);                            \
    else if (ch == 4)                                                                                \
      NAME##_4(src, stride, pix0, nrows, n_out, taps, idx, w, out, out8);                            \
    else                                                                                             \
      NAME##_ch(src, stride, pix0, nrows, ch, n_out, taps, idx, w, out, out8);                       \
  }

ROWS_PASS(rows_u8, uint8_t)
ROWS_PASS(rows_f32, float)
COLS_PASS(cols_u8, uint8_t, pixel_u8)
COLS_PASS(cols_f32, float, pixel_f32)

/* Columns pass over uint8 rows with 3 or 4 channels: each row's reached pixels [p0, p1) converted
 * to float once (a source pixel feeds several outputs), then the float pass. */
static int cols_from_u8(const uint8_t* src, int64_t stride, int64_t nrows, int ch, int n_out, int taps,
                        const int64_t* idx, const float* w, int64_t p0, int64_t p1, float* out, uint8_t* out8) {
  if (ch != 3 && ch != 4) {
    cols_u8(src, stride, 0, nrows, ch, n_out, taps, idx, w, out, out8);
    return 0;
  }
  const int64_t len = (p1 - p0) * ch;
  float* buf = (float*)malloc(sizeof(float) * (size_t)(len + 1));
  if (!buf) return -1;
  buf[len] = 0.0f; /* pixel_f32's padding */
  const int64_t row_out = (int64_t)n_out * ch;
  for (int64_t r = 0; r < nrows; ++r) {
    const uint8_t* s = src + r * stride + p0 * ch;
    for (int64_t j = 0; j < len; ++j) buf[j] = (float)s[j];
    cols_f32(buf, 0, p0, 1, ch, n_out, taps, idx, w, out ? out + r * row_out : NULL, out8 ? out8 + r * row_out : NULL);
  }
  free(buf);
  return 0;
}

static int64_t min_of(const int64_t* v, int64_t n) {
  int64_t m = v[0];
  for (int64_t i = 1; i < n; ++i) m = v[i] < m ? v[i] : m;
  return m;
}

static int64_t max_of(const int64_t* v, int64_t n) {
  int64_t m = v[0];
  for (int64_t i = 1; i < n; ++i) m = v[i] > m ? v[i] : m;
  return m;
}

/* src: uint8 (in_h, in_w, ch), rows `row_stride` bytes apart, pixels packed. The source window
 * per axis as resize.py's Axis holds it, each value rounded to float32 here: its origin, span and
 * end (a region of interest (y, x, h, w) has end = y + h in float32; a window (y0, y1) has span =
 * y1 - y0 in float32 and end y1). Output (out_h, out_w, ch) contiguous: uint8 when out_float is
 * 0, else float32. Returns 0 when done; 1 when nothing needs filtering (both axes the identity:
 * the caller copies); -1 for bad arguments or no memory. */
int td_resize_linear(const uint8_t* src, int64_t in_h, int64_t in_w, int ch, int64_t row_stride,
                     double org_y, double span_y, double end_y, double org_x, double span_x, double end_x,
                     int out_h, int out_w, int antialias, int out_float, void* out) {
  /* forward (positive span) and within 2**30 of 0 (source positions fit in an int64 with room),
   * else the spec decides (it refuses zero and non-finite spans and reads negative ones backwards) */
  const float oy = (float)org_y, ox = (float)org_x, sy = (float)span_y, sx = (float)span_x;
  const float ey = (float)end_y, ex = (float)end_x;
  const float far = 1073741824.0f;
  if (!src || !out || in_h <= 0 || in_w <= 0 || ch <= 0 || out_h <= 0 || out_w <= 0 || !(sy > 0.0f) ||
      !(sx > 0.0f) || !(fabsf(oy) + sy < far) || !(fabsf(ox) + sx < far) || !(fabsf(ey) < far) ||
      !(fabsf(ex) < far) || row_stride < in_w * ch)
    return -1;
  axis_t ay = {in_h, out_h, oy, sy, ey, 0, 0, 0, 0, 0, 0};
  axis_t ax = {in_w, out_w, ox, sx, ex, 0, 0, 0, 0, 0, 0};
  if (!filter_params(&ay, antialias) || !filter_params(&ax, antialias)) return -1;
  reach(&ay);
  reach(&ax);
  if (ay.copy && ax.copy) return 1;
  /* DALI's pass order (resize.py: its cost estimate) */
  const int64_t vert = ax.ext * out_h, horz = (int64_t)out_w * ay.ext, area = (int64_t)out_h * out_w;
  const int vert_first = 3 * vert + vert * ay.taps + area * ax.taps < 3 * horz + horz * ax.taps + area * ay.taps;
  int64_t* iy = (int64_t*)malloc(sizeof(int64_t) * (size_t)out_h * (size_t)ay.taps);
  int64_t* ix = (int64_t*)malloc(sizeof(int64_t) * (size_t)out_w * (size_t)ax.taps);
  float* wy = (float*)malloc(sizeof(float) * (size_t)out_h * (size_t)ay.taps);
  float* wx = (float*)malloc(sizeof(float) * (size_t)out_w * (size_t)ax.taps);
  float* mid = NULL;
  int rc = -1;
  if (!iy || !ix || !wy || !wx) goto done;
  /* the first pass reads from the image's start, the second from its axis's region start */
  weights(&ay, vert_first ? 0 : ay.lo, iy, wy);
  weights(&ax, vert_first ? ax.lo : 0, ix, wx);
  float* outf = out_float ? (float*)out : NULL;
  uint8_t* out8 = out_float ? NULL : (uint8_t*)out;
  const int64_t ny = (int64_t)out_h * ay.taps, nx = (int64_t)out_w * ax.taps;
  if (ay.copy) { /* columns only, every row */
    if (cols_from_u8(src, row_stride, in_h, ch, out_w, ax.taps, ix, wx, min_of(ix, nx), max_of(ix, nx) + 1, outf,
                     out8))
      goto done;
  } else if (ax.copy) { /* rows only, every column */
    if (rows_u8(src, row_stride, 0, in_w * ch, out_h, ay.taps, iy, wy, outf, out8)) goto done;
  } else if (vert_first) { /* rows over the columns the second pass reads, then columns */
    const int64_t x0 = min_of(ix, nx), x1 = max_of(ix, nx) + 1;
    const int64_t ncols = (x1 - x0) * ch;
    mid = (float*)malloc(sizeof(float) * ((size_t)out_h * (size_t)ncols + 1)); /* + 1: pixel_f32 */
    if (!mid) goto done;
    if (rows_u8(src, row_stride, x0 * ch, ncols, out_h, ay.taps, iy, wy, mid, NULL)) goto done;
    cols_f32(mid, ncols, x0, out_h, ch, out_w, ax.taps, ix, wx, outf, out8);
  } else { /* columns over the rows the second pass reads, then rows */
    const int64_t y0 = min_of(iy, ny), y1 = max_of(iy, ny) + 1;
    const int64_t row_mid = (int64_t)out_w * ch;
    mid = (float*)malloc(sizeof(float) * (size_t)(y1 - y0) * (size_t)row_mid);
    if (!mid) goto done;
    if (cols_from_u8(src + y0 * row_stride, row_stride, y1 - y0, ch, out_w, ax.taps, ix, wx, min_of(ix, nx),
                     max_of(ix, nx) + 1, mid, NULL))
      goto done;
    for (int64_t k = 0; k < ny; ++k) iy[k] -= y0;
    if (rows_f32(mid, row_mid, 0, row_mid, out_h, ay.taps, iy, wy, outf, out8)) goto done;
  }
  rc = 0;
done:
  free(iy);
  free(ix);
  free(wy);
  free(wx);
  free(mid);
  return rc;
}

/* crop_mirror_normalize of one uint8 HWC image into float32: the window (y, x, h, w), which lies
 * inside the image, mirrored left-right when `mirror`, out = ((float)v - mean[c]) * rstd[c] (two
 * float32 roundings, as functional/normalize.py's in-place sub_ then mul_), CHW when `chw` else
 * HWC, contiguous. rstd is the caller's float32 reciprocal of std. Returns 0, or -1 for bad
 * arguments. */
int td_crop_mirror_normalize(const uint8_t* src, int64_t in_h, int64_t in_w, int ch, int64_t row_stride,
                             int64_t y, int64_t x, int64_t h, int64_t w, int mirror, const float* mean,
                             const float* rstd, int chw, float* out) {
  if (!src || !out || !mean || !rstd || ch <= 0 || h <= 0 || w <= 0 || y < 0 || x < 0 || y + h > in_h ||
      x + w > in_w || row_stride < in_w * ch)
    return -1;
  for (int64_t r = 0; r < h; ++r) {
    const uint8_t* row = src + (y + r) * row_stride + x * ch;
    for (int c = 0; c < ch; ++c) {
      const float m = mean[c], s = rstd[c];
      /* CHW: one contiguous output row per channel; HWC: the channel's values `ch` apart */
      float* o = chw ? out + ((int64_t)c * h + r) * w : out + r * w * ch + c;
      const int64_t step = chw ? 1 : ch;
      if (mirror) {
        for (int64_t j = 0; j < w; ++j) o[j * step] = ((float)row[(w - 1 - j) * ch + c] - m) * s;
      } else {
        for (int64_t j = 0; j < w; ++j) o[j * step] = ((float)row[j * ch + c] - m) * s;
      }
    }
  }
  return 0;
}

/* out[i] = table[src[i]] for n uint8 values; the table holds 256 entries of `size` bytes (1, 2, 4
 * or 8): any per-value function of a uint8 image (brightness_contrast's), worked out once for
 * the 256 values by the caller. Returns 0, or -1 for bad arguments. */
int td_table_u8(const uint8_t* src, int64_t n, const void* table, int size, void* out) {
  if (!src || !table || !out || n < 0) return -1;
#define TD_TABLE(T)                                                                                 \
  for (int64_t i = 0; i < n; ++i) ((T*)out)[i] = ((const T*)table)[src[i]];                          \
  return 0;
  switch (size) {
  case 1: TD_TABLE(uint8_t)
  case 2: TD_TABLE(uint16_t)
  case 4: TD_TABLE(uint32_t)
  case 8: TD_TABLE(uint64_t)
  default:
    return -1;
  }
#undef TD_TABLE
}

/* functional/histogram.py's equalize_planes for `count` blocks of `pixels` pixels of `ch`
 * interleaved uint8 channels (each block's channels equalized apart): OpenCV's equalizeHist,
 * value v -> round((cdf(v) - hist(lo)) * (255 / (n - hist(lo)))) in float32, halves to even, 0
 * below the first occupied bin lo; a plane of one value unchanged. src and out contiguous (they
 * may be the same). Returns 0, or -1 for bad arguments. */
int td_equalize_u8(const uint8_t* src, int64_t count, int64_t pixels, int ch, uint8_t* out) {
  if (!src || !out || count < 0 || pixels < 0 || ch < 1 || ch > 64) return -1;
  int64_t hist[256];
  uint8_t table[64][256];
  for (int64_t b = 0; b < count; ++b) {
    const uint8_t* s = src + b * pixels * ch;
    uint8_t* o = out + b * pixels * ch;
    for (int c = 0; c < ch; ++c) {
      memset(hist, 0, sizeof(hist));
      for (int64_t i = 0; i < pixels; ++i) hist[s[i * ch + c]]++;
      int lo = 0;
      while (lo < 255 && hist[lo] == 0) ++lo;
      const int64_t h_lo = hist[lo];
      const float denom = (float)(pixels - h_lo);
      uint8_t* t = table[c];
      if (!(denom > 0.0f)) { /* one value (or none): unchanged */
        for (int v = 0; v < 256; ++v) t[v] = (uint8_t)v;
        continue;
      }
      const float scale = 255.0f / denom;
      int64_t cdf = 0;
      for (int v = 0; v < 256; ++v) {
        cdf += hist[v];
        if (v < lo) {
          t[v] = 0;
          continue;
        }
        const float x = (float)(cdf - h_lo) * scale;
        const float r = (x + 8388608.0f) - 8388608.0f; /* half to even: 0 <= x <= 255 (+ rounding) */
        t[v] = r <= 0.0f ? 0 : (r >= 255.0f ? 255 : (uint8_t)r);
      }
    }
    if (ch == 1) {
      for (int64_t i = 0; i < pixels; ++i) o[i] = table[0][s[i]];
    } else if (ch == 3) {
      for (int64_t i = 0; i < pixels; ++i) {
        o[3 * i] = table[0][s[3 * i]];
        o[3 * i + 1] = table[1][s[3 * i + 1]];
        o[3 * i + 2] = table[2][s[3 * i + 2]];
      }
    } else {
      for (int64_t i = 0; i < pixels; ++i)
        for (int c = 0; c < ch; ++c) o[i * ch + c] = table[c][s[i * ch + c]];
    }
  }
  return 0;
}

/* functional/crop.py's convert from float32 to an integer type (0 uint8, 1 int8, 2 int16, 3
 * uint16, 4 int32): round half away from zero (|x| + 0.5 in float32, as torch's sign(x) *
 * floor(|x| + 0.5); int32 in float64), saturate; NaN gives what torch's conversion gives (0;
 * int32: INT32_MIN). Below 2**23 truncating |x| + 0.5 is its floor; past the small types'
 * ranges the clamp decides alone. Returns 0, or -1 for bad arguments. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TD_AVX2_CLONE __attribute__((target_clones("avx2", "default")))
#else
#define TD_AVX2_CLONE
#endif

/* td_convert_f32's loops, its arguments checked */
TD_AVX2_CLONE static void convert_run(const float* src, int64_t n, int out_type, void* out) {
/* clamped first, then rounded (the same values: the bounds are integers), without branches so
 * the loop vectorises whatever the data (random signs made the branches mispredict) */
#define TD_SMALL(T, LO, HI)                                                                        \
  for (int64_t i = 0; i < n; ++i) {                                                                \
    const float v = src[i];                                                                        \
    const float z = v != v ? 0.0f : v;                                                             \
    const float c0 = z < (LO) ? (LO) : z;                                                          \
    const float c = c0 > (HI) ? (HI) : c0;                                                         \
    const int32_t t = (int32_t)(fabsf(c) + 0.5f);                                                  \
    ((T*)out)[i] = (T)(c < 0.0f ? -t : t);                                                         \
  }                                                                                                \
  return;
/* unsigned types: `v > 0` is false for NaN, negatives and -0.0, which all give 0; no sign left */
#define TD_UNSIGNED(T, HI)                                                                         \
  for (int64_t i = 0; i < n; ++i) {                                                                \
    const float v = src[i];                                                                        \
    const float c0 = v > 0.0f ? v : 0.0f;                                                          \
    const float c = c0 < (HI) ? c0 : (HI);                                                         \
    ((T*)out)[i] = (T)(int32_t)(c + 0.5f);                                                         \
  }                                                                                                \
  return;
  switch (out_type) {
  case 0: TD_UNSIGNED(uint8_t, 255.0f)
  case 1: TD_SMALL(int8_t, -128.0f, 127.0f)
  case 2: TD_SMALL(int16_t, -32768.0f, 32767.0f)
  case 3: TD_UNSIGNED(uint16_t, 65535.0f)
  default:
    for (int64_t i = 0; i < n; ++i) {
      const float v = src[i];
      if (v != v) {
        ((int32_t*)out)[i] = INT32_MIN;
        continue;
      }
      const double d = copysign(floor(fabs((double)v) + 0.5), (double)v);
      ((int32_t*)out)[i] = d <= -2147483648.0 ? INT32_MIN : (d >= 2147483647.0 ? INT32_MAX : (int32_t)d);
    }
    return;
  }
#undef TD_SMALL
#undef TD_UNSIGNED
}

int td_convert_f32(const float* src, int64_t n, int out_type, void* out) {
  if (!src || !out || n < 0 || out_type < 0 || out_type > 4) return -1;
  convert_run(src, n, out_type, out);
  return 0;
}

/* crop.convert of one float32 value to a small integer type within [lo, hi], as td_convert_f32 */
static inline int32_t convert_small(float v, float lo, float hi) {
  const float z = v != v ? 0.0f : v;
  const float c0 = z < lo ? lo : z;
  const float c = c0 > hi ? hi : c0;
  const int32_t t = (int32_t)(fabsf(c) + 0.5f);
  return c < 0.0f ? -t : t;
}

/* functional/color.py's apply_color_matrix for `n` pixels of 3 interleaved uint8 channels (hsv,
 * color_twist, and color_space_conversion's rows to YCbCr): channel k of a pixel is
 * ((m[3k] * c0 + m[3k+1] * c1) + m[3k+2] * c2) + off[k] in float32, each product and sum rounded
 * as torch's are, (c0, c1, c2) the pixel's channels, reversed when `bgr` (a BGR pixel read as
 * RGB); written as out_type 0 float32, 1 uint8 or 2 int16 (crop.convert's rounding, as
 * td_convert_f32). Blocks of pixels are split into planes first so the arithmetic and the
 * rounding vectorise. Returns 0, or -1 for bad arguments. */
#define TD_CM_BLOCK 256
int td_color_matrix_u8(const uint8_t* src, int64_t n, int bgr, const float* m, const float* off, int out_type,
                       void* out) {
  if (!src || !m || !off || !out || n < 0 || out_type < 0 || out_type > 2) return -1;
  const int i0 = bgr ? 2 : 0, i2 = bgr ? 0 : 2;
  float c[3][TD_CM_BLOCK], y[3][TD_CM_BLOCK];
  int32_t t[3][TD_CM_BLOCK];
  const float lo = out_type == 1 ? 0.0f : -32768.0f, hi = out_type == 1 ? 255.0f : 32767.0f;
  for (int64_t b0 = 0; b0 < n; b0 += TD_CM_BLOCK) {
    const int len = (int)(n - b0 < TD_CM_BLOCK ? n - b0 : TD_CM_BLOCK);
    const uint8_t* p = src + 3 * b0;
    for (int j = 0; j < len; ++j) {
      c[0][j] = (float)p[3 * j + i0];
      c[1][j] = (float)p[3 * j + 1];
      c[2][j] = (float)p[3 * j + i2];
    }
    for (int k = 0; k < 3; ++k) {
      const float a = m[3 * k], b = m[3 * k + 1], d = m[3 * k + 2], o = off[k];
      float* yk = y[k];
      for (int j = 0; j < len; ++j) yk[j] = ((a * c[0][j] + b * c[1][j]) + d * c[2][j]) + o;
    }
    if (out_type == 0) {
      float* q = (float*)out + 3 * b0;
      for (int j = 0; j < len; ++j) {
        q[3 * j] = y[0][j];
        q[3 * j + 1] = y[1][j];
        q[3 * j + 2] = y[2][j];
      }
      continue;
    }
    for (int k = 0; k < 3; ++k)
      for (int j = 0; j < len; ++j) t[k][j] = convert_small(y[k][j], lo, hi);
    if (out_type == 1) {
      uint8_t* q = (uint8_t*)out + 3 * b0;
      for (int j = 0; j < len; ++j) {
        q[3 * j] = (uint8_t)t[0][j];
        q[3 * j + 1] = (uint8_t)t[1][j];
        q[3 * j + 2] = (uint8_t)t[2][j];
      }
    } else {
      int16_t* q = (int16_t*)out + 3 * b0;
      for (int j = 0; j < len; ++j) {
        q[3 * j] = (int16_t)t[0][j];
        q[3 * j + 1] = (int16_t)t[1][j];
        q[3 * j + 2] = (int16_t)t[2][j];
      }
    }
  }
  return 0;
}
#undef TD_CM_BLOCK

/* functional/color.py's brightness_contrast of `n` uint8 values: (float)v * mul + add in float32
 * (two roundings, as torch's), written as out_type 0 float32, 1 uint8 or 2 int16 (crop.convert's
 * rounding, as td_convert_f32). In blocks, each step a loop of one width, so all three vectorise.
 * Returns 0, or -1 for bad arguments. */
#define TD_AF_BLOCK 512
int td_affine_u8(const uint8_t* src, int64_t n, float mul, float add, int out_type, void* out) {
  if (!src || !out || n < 0 || out_type < 0 || out_type > 2) return -1;
  if (out_type == 0) {
    float* o = (float*)out;
    for (int64_t i = 0; i < n; ++i) o[i] = (float)src[i] * mul + add;
    return 0;
  }
  const float lo = out_type == 1 ? 0.0f : -32768.0f, hi = out_type == 1 ? 255.0f : 32767.0f;
  float y[TD_AF_BLOCK];
  int32_t t[TD_AF_BLOCK];
  for (int64_t b0 = 0; b0 < n; b0 += TD_AF_BLOCK) {
    const int len = (int)(n - b0 < TD_AF_BLOCK ? n - b0 : TD_AF_BLOCK);
    const uint8_t* p = src + b0;
    for (int j = 0; j < len; ++j) y[j] = (float)p[j] * mul + add;
    for (int j = 0; j < len; ++j) t[j] = convert_small(y[j], lo, hi);
    if (out_type == 1) {
      uint8_t* o = (uint8_t*)out + b0;
      for (int j = 0; j < len; ++j) o[j] = (uint8_t)t[j];
    } else {
      int16_t* o = (int16_t*)out + b0;
      for (int j = 0; j < len; ++j) o[j] = (int16_t)t[j];
    }
  }
  return 0;
}
#undef TD_AF_BLOCK

/* floorf, exact (-0.0 kept), without the libm call x86-64's baseline makes for it */
static inline float floor_fast(float x) {
  if (!(fabsf(x) < 8388608.0f)) return floorf(x); /* already integral, infinite or NaN */
  const float t = (float)(int32_t)x;
  return t > x ? t - 1.0f : copysignf(t, x);
}

/* functional/distort.py's grid_mask for `n` samples of h x w pixels of `ch` interleaved channels
 * (uint8 when is_float is 0, else float32): pixel (y, x) of sample s is kept where
 * fx - floor(fx) >= r[s] or fy - floor(fy) >= r[s], fx = (-sx + y * -sa) + x * ca and
 * fy = (-sy + y * ca) + x * sa in float32 (each product and sum rounded as torch's), and otherwise
 * multiplied by 0 (for floats: x * 0.0, as the spec's product). Returns 0, or -1 for bad arguments. */
int td_grid_mask(const void* src, int64_t n, int64_t h, int64_t w, int64_t ch, int is_float, const float* ca,
                 const float* sa, const float* sx, const float* sy, const float* r, void* out) {
  if (!src || !out || !ca || !sa || !sx || !sy || !r || n < 0 || h < 0 || w < 0 || ch < 1) return -1;
  for (int64_t s = 0; s < n; ++s) {
    const float c = ca[s], sn = sa[s], nsa = -sa[s], nsx = -sx[s], nsy = -sy[s], ratio = r[s];
    for (int64_t y = 0; y < h; ++y) {
      const float yf = (float)y;
      const float bx = nsx + yf * nsa, by = nsy + yf * c;
      const int64_t base = ((s * h + y) * w) * ch;
      for (int64_t x = 0; x < w; ++x) {
        const float xf = (float)x;
        const float fx = bx + xf * c, fy = by + xf * sn;
        const int keep = (fx - floor_fast(fx) >= ratio) | (fy - floor_fast(fy) >= ratio);
        const int64_t at = base + x * ch;
        if (is_float) {
          const float k = keep ? 1.0f : 0.0f;
          for (int64_t q = 0; q < ch; ++q) ((float*)out)[at + q] = ((const float*)src)[at + q] * k;
        } else {
          for (int64_t q = 0; q < ch; ++q) ((uint8_t*)out)[at + q] = keep ? ((const uint8_t*)src)[at + q] : 0;
        }
      }
    }
  }
  return 0;
}

/* fn.experimental.filter of one sample (functional/filters.py's filter_sample): the correlation of
 * two adjacent axes (outer, h, w, inner) of an input of type in_type (0 uint8, 1 int8, 2 int16, 3
 * uint16, 4 int32, 5 float32), taken to float32, with a (kh, kw) kernel, its taps summed in the
 * spec's order (row-major; the first a product, each next one a product rounded then added), then
 * converted to out_type (0-4 as td_convert_f32, 5 float32); `fused`: filter_row_fused, and
 * integer outputs round half to even first. The border is given as the source row
 * of each of the hp padded rows and the source column of each of the wp padded columns (-1: `fill`),
 * so every border mode is the spec's own index map. Padded rows are built into a ring of kh rows
 * once each; the output row is summed in blocks of 32 values held in registers across the taps.
 * Returns 0, -1 for bad arguments, -2 when memory runs out. */
typedef float td_v8 __attribute__((vector_size(32), aligned(4))); /* aligned(4): unaligned access */

TD_AVX2_CLONE static void filter_row(const float* const* taps, const float* w, int64_t nt, int64_t run, float* orow) {
  int64_t k = 0;
  for (; k + 32 <= run; k += 32) {
    const float* s = taps[0] + k;
    const float w0 = w[0];
    td_v8 a0 = *(const td_v8*)s * w0, a1 = *(const td_v8*)(s + 8) * w0;
    td_v8 a2 = *(const td_v8*)(s + 16) * w0, a3 = *(const td_v8*)(s + 24) * w0;
    for (int64_t t = 1; t < nt; ++t) {
      const float wt = w[t];
      s = taps[t] + k;
      a0 = a0 + *(const td_v8*)s * wt;
      a1 = a1 + *(const td_v8*)(s + 8) * wt;
      a2 = a2 + *(const td_v8*)(s + 16) * wt;
      a3 = a3 + *(const td_v8*)(s + 24) * wt;
    }
    *(td_v8*)(orow + k) = a0;
    *(td_v8*)(orow + k + 8) = a1;
    *(td_v8*)(orow + k + 16) = a2;
    *(td_v8*)(orow + k + 24) = a3;
  }
  for (; k + 8 <= run; k += 8) {
    td_v8 a = *(const td_v8*)(taps[0] + k) * w[0];
    for (int64_t t = 1; t < nt; ++t) a = a + *(const td_v8*)(taps[t] + k) * w[t];
    *(td_v8*)(orow + k) = a;
  }
  for (; k < run; ++k) {
    float a = taps[0][k] * w[0];
    for (int64_t t = 1; t < nt; ++t) a = a + taps[t][k] * w[t];
    orow[k] = a;
  }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TD_FMA_CLONE __attribute__((target_clones("fma", "default"))) /* by feature: "arch=" clones test the CPU model */
#else
#define TD_FMA_CLONE
#endif

/* filter_row as OpenCV's filter2D to the input's own type (its AVX2 path): the row's first
 * run / 8 * 8 values with each tap after the first a fused multiply-add, the rest (its scalar
 * tail) plain products and sums. fmaf is exact on every CPU; where the CPU has FMA the same
 * operations run as vector instructions, 32 sums held across the taps as filter_row holds them. */
static void filter_row_fused_any(const float* const* taps, const float* w, int64_t nt, int64_t run, float* orow) {
  const int64_t nv = run / 8 * 8;
  for (int64_t k = 0; k < run; ++k) orow[k] = taps[0][k] * w[0];
  for (int64_t t = 1; t < nt; ++t)
    for (int64_t k = 0; k < run; ++k) orow[k] = k < nv ? fmaf(taps[t][k], w[t], orow[k]) : orow[k] + taps[t][k] * w[t];
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define TD_HAVE_FMA_ROW 1
__attribute__((target("avx,fma"))) static void filter_row_fused_fma(const float* const* taps, const float* w,
                                                                     int64_t nt, int64_t run, float* orow) {
  const int64_t nv = run / 8 * 8;
  int64_t k = 0;
  for (; k + 32 <= nv; k += 32) {
    const float* s = taps[0] + k;
    const __m256 w0 = _mm256_set1_ps(w[0]);
    __m256 a0 = _mm256_mul_ps(_mm256_loadu_ps(s), w0), a1 = _mm256_mul_ps(_mm256_loadu_ps(s + 8), w0);
    __m256 a2 = _mm256_mul_ps(_mm256_loadu_ps(s + 16), w0), a3 = _mm256_mul_ps(_mm256_loadu_ps(s + 24), w0);
    for (int64_t t = 1; t < nt; ++t) {
      const __m256 wt = _mm256_set1_ps(w[t]);
      s = taps[t] + k;
      a0 = _mm256_fmadd_ps(_mm256_loadu_ps(s), wt, a0);
      a1 = _mm256_fmadd_ps(_mm256_loadu_ps(s + 8), wt, a1);
      a2 = _mm256_fmadd_ps(_mm256_loadu_ps(s + 16), wt, a2);
      a3 = _mm256_fmadd_ps(_mm256_loadu_ps(s + 24), wt, a3);
    }
    _mm256_storeu_ps(orow + k, a0);
    _mm256_storeu_ps(orow + k + 8, a1);
    _mm256_storeu_ps(orow + k + 16, a2);
    _mm256_storeu_ps(orow + k + 24, a3);
  }
  for (; k < nv; k += 8) {
    __m256 a = _mm256_mul_ps(_mm256_loadu_ps(taps[0] + k), _mm256_set1_ps(w[0]));
    for (int64_t t = 1; t < nt; ++t) a = _mm256_fmadd_ps(_mm256_loadu_ps(taps[t] + k), _mm256_set1_ps(w[t]), a);
    _mm256_storeu_ps(orow + k, a);
  }
  for (; k < run; ++k) {
    float a = taps[0][k] * w[0];
    for (int64_t t = 1; t < nt; ++t) a = a + taps[t][k] * w[t];
    orow[k] = a;
  }
}
#endif

static void filter_row_fused(const float* const* taps, const float* w, int64_t nt, int64_t run, float* orow) {
#ifdef TD_HAVE_FMA_ROW
  if (__builtin_cpu_supports("fma") && __builtin_cpu_supports("avx")) {
    filter_row_fused_fma(taps, w, nt, run, orow);
    return;
  }
#endif
  filter_row_fused_any(taps, w, nt, run, orow);
}

/* v rounded half to even in place (rintf in the default rounding mode; one instruction a vector
 * where the CPU has SSE4.1, which the fma clone implies, instead of a libm call a value) */
TD_FMA_CLONE static void round_even(float* v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) v[i] = rintf(v[i]);
}

/* padded row `r` of one (h, w, inner) plane into `dst` (wp * inner floats); padded columns
 * [j0, j0 + n) read the source columns from cols[j0] on in order (the image's inside: one straight
 * conversion), the others through the map */
static void filter_pad_row(const void* plane, int in_type, int64_t w, int64_t inner, int64_t r, const int64_t* cols,
                           int64_t wp, int64_t j0, int64_t n, float fill, float* dst) {
  if (r < 0) {
    for (int64_t i = 0; i < wp * inner; ++i) dst[i] = fill;
    return;
  }
#define TD_PAD(T)                                                                                  \
  {                                                                                                \
    const T* row = (const T*)plane + r * w * inner;                                                \
    for (int64_t j = 0; j < wp; ++j) {                                                             \
      float* d = dst + j * inner;                                                                  \
      if (j == j0 && n > 0) {                                                                      \
        const T* p = row + cols[j0] * inner;                                                       \
        for (int64_t i = 0; i < n * inner; ++i) d[i] = (float)p[i];                                \
        j += n - 1;                                                                                \
      } else if (cols[j] < 0) {                                                                    \
        for (int64_t c = 0; c < inner; ++c) d[c] = fill;                                           \
      } else {                                                                                     \
        const T* p = row + cols[j] * inner;                                                        \
        for (int64_t c = 0; c < inner; ++c) d[c] = (float)p[c];                                    \
      }                                                                                            \
    }                                                                                              \
    return;                                                                                        \
  }
  switch (in_type) {
  case 0: TD_PAD(uint8_t)
  case 1: TD_PAD(int8_t)
  case 2: TD_PAD(int16_t)
  case 3: TD_PAD(uint16_t)
  case 4: TD_PAD(int32_t)
  default: TD_PAD(float)
  }
#undef TD_PAD
}

int td_filter2d(const void* src, int in_type, int64_t outer, int64_t h, int64_t w, int64_t inner,
                const int64_t* rows, int64_t hp, const int64_t* cols, int64_t wp, float fill, const float* kernel,
                int64_t kh, int64_t kw, int out_type, int fused, void* out) {
  static const int64_t size_of[6] = {1, 1, 2, 2, 4, 4};
  if (!src || !rows || !cols || !kernel || !out || in_type < 0 || in_type > 5 || out_type < 0 || out_type > 5 ||
      outer < 0 || h < 1 || w < 1 || inner < 1 || kh < 1 || kw < 1 || kh > hp || kw > wp ||
      kh * kw > (int64_t)1 << 20)
    return -1;
  for (int64_t i = 0; i < hp; ++i)
    if (rows[i] < -1 || rows[i] >= h) return -1;
  for (int64_t j = 0; j < wp; ++j)
    if (cols[j] < -1 || cols[j] >= w) return -1;
  const int64_t oh = hp - kh + 1, ow = wp - kw + 1, run = ow * inner, prow = wp * inner, nt = kh * kw;
  int64_t j0 = 0, n = 0; /* the longest run of padded columns reading consecutive source columns */
  for (int64_t j = 0, len = 0; j < wp; ++j) {
    len = cols[j] >= 0 && j > 0 && len > 0 && cols[j] == cols[j - 1] + 1 ? len + 1 : (cols[j] >= 0);
    if (len > n) {
      n = len;
      j0 = j - len + 1;
    }
  }
  float* ring = (float*)malloc(sizeof(float) * (size_t)(kh * prow + run));
  const float** taps = (const float**)malloc(sizeof(float*) * (size_t)nt);
  if (!ring || !taps) {
    free(ring);
    free(taps);
    return -2;
  }
  float* orow = ring + kh * prow;
  for (int64_t b = 0; b < outer; ++b) {
    const void* plane = (const char*)src + b * h * w * inner * size_of[in_type];
    char* oplane = (char*)out + b * oh * run * size_of[out_type];
    for (int64_t r = 0; r < kh - 1; ++r) filter_pad_row(plane, in_type, w, inner, rows[r], cols, wp, j0, n, fill, ring + r * prow);
    for (int64_t y = 0; y < oh; ++y) {
      const int64_t last = y + kh - 1;
      filter_pad_row(plane, in_type, w, inner, rows[last], cols, wp, j0, n, fill, ring + (last % kh) * prow);
      for (int64_t r = 0; r < kh; ++r)
        for (int64_t c = 0; c < kw; ++c) taps[r * kw + c] = ring + ((y + r) % kh) * prow + c * inner;
      float* dst = out_type == 5 ? (float*)oplane + y * run : orow;
      if (fused) {
        filter_row_fused(taps, kernel, nt, run, dst);
      } else {
        filter_row(taps, kernel, nt, run, dst);
      }
      if (out_type != 5) {
        if (fused) /* half to even first (the default rounding mode); convert_run keeps integers */
          round_even(orow, run);
        convert_run(orow, run, out_type, oplane + y * run * size_of[out_type]);
      }
    }
  }
  free(ring);
  free(taps);
  return 0;
}
