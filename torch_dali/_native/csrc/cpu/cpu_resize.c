/* CPU resize of one HWC image (uint8, int16, uint16 or float32; or a window of it) to its own type
 * or float32 with DALI's filters (linear / triangular, cubic, Lanczos-3, Gaussian), bit for bit
 * what torch_dali/functional/resize.py computes for them: its `_filter`, `_reach`, `_weights`, pass
 * order, tap-by-tap float32 sums, half-even rounding (half away from zero where DALI rounds one
 * value at a time: resize_store.h). One call holds no Python lock (ctypes releases the GIL).
 * The same float32 operations in the same order; build with -ffp-contract=off (no fused
 * multiply-add) so nothing rounds differently. The only vectorised loops run across independent
 * outputs, never across a sum. The filter tables come from the caller (resize.py's, built with
 * the C library's sinf / expf: a compiler folding them here could round them differently). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* filter kinds, indexing the caller's tables: resize.py's names */
enum { K_LINEAR = 0, K_CUBIC = 1, K_LANCZOS3 = 2, K_GAUSSIAN = 3, N_KINDS = 4 };

typedef struct {
  int64_t n_in; /* image extent on this axis */
  int n_out;
  float origin, span, end; /* the source window on this axis, in float32 as resize.py's Axis */
  int kind;
  const float* table;
  int n_table;
  float units, anchor;
  int taps;
  int64_t lo, ext; /* what the pass reads (resize.py's _reach) */
  int copy;        /* the identity: no pass (resize.py's _exact_copy) */
} axis_t;

static inline float max_f(float a, float b) { return a > b ? a : b; }

/* resize.py's _filter (its float32 steps in its order); 0 when the filter would be wider than
 * 2**24 taps (a window millions of times its output: the caller declines, the spec decides) */
static int filter_params(axis_t* a, int antialias) {
  const float n_in = a->span, n_out = (float)a->n_out;
  const int shrink = antialias && (double)a->n_out < (double)a->span;
  float width;
  if (a->kind == K_LINEAR) { /* the triangle of radius 1; antialias widens it */
    width = max_f(1.0f, 2.0f * (shrink ? n_in / n_out : 1.0f));
  } else if (a->kind == K_GAUSSIAN) { /* sigma = radius / (2 sqrt 2) in double, width 4 sqrt 2 sigma */
    const float radius = shrink ? n_in / n_out : 1.0f;
    const float sigma = (float)((double)(radius * 0.5f) / sqrt(2.0));
    width = max_f(1.0f, (float)(4.0 * sqrt(2.0)) * sigma);
  } else { /* cubic (support 2) and Lanczos-3 (support 3), widened by in / out */
    const float support = a->kind == K_CUBIC ? 2.0f : 3.0f;
    const float radius = shrink ? (support * n_in) / n_out : support;
    width = 2.0f * max_f(support, radius);
  }
  const float last = (float)(a->n_table - 1);
  a->units = last / width;
  a->anchor = (last * 0.5f) / a->units;
  const double taps = ceil((double)(last / a->units));
  if (!(taps >= 1.0 && taps <= 16777216.0)) return 0;
  a->taps = (int)taps;
  return 1;
}

/* resize.py's _reach, in float32 as it computes it, and _exact_copy */
static void reach(axis_t* a) {
  int64_t lo = (int64_t)floorf(a->origin - a->anchor);
  int64_t hi = (int64_t)ceilf((a->end - a->anchor) + (float)a->taps); /* DALI 2.4 rounds the end up */
  lo = lo < 0 ? 0 : (lo > a->n_in ? a->n_in : lo);
  hi = hi < 0 ? 0 : (hi > a->n_in ? a->n_in : hi);
  a->lo = lo;
  a->ext = hi - lo;
  a->copy = a->n_in == a->n_out && a->origin == 0.0f && (double)a->span == (double)a->n_in &&
            (a->kind == K_LINEAR || a->kind == K_CUBIC);
}

/* resize.py's _weights: idx[i * taps + k] (source index, clamped) and w[i * taps + k] */
static void weights(const axis_t* a, int64_t shift, int64_t* idx, float* w) {
  const int taps = a->taps, n = a->n_table;
  const float* table = a->table;
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
      float c = 0.0f;
      if (pos > -1.0f && pos < (float)n) { /* the table read with linear interpolation */
        const float lo = floorf(pos);
        const float d = pos - lo;
        const int64_t li = (int64_t)lo;
        const float f0 = li >= 0 ? table[li > n - 1 ? n - 1 : li] : 0.0f;
        const float f1 = li + 1 < n ? table[li + 1 < 0 ? 0 : li + 1] : 0.0f;
        c = f0 + d * (f1 - f0);
      }
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
ROWS_PASS(rows_i16, int16_t)
ROWS_PASS(rows_u16, uint16_t)
ROWS_PASS(rows_f32, float)
COLS_PASS(cols_u8, uint8_t, pixel_u8)
COLS_PASS(cols_f32, float, pixel_f32)

/* element types of the source and the output (resize takes these four) */
enum { T_U8 = 0, T_I16 = 1, T_U16 = 2, T_F32 = 3 };

static size_t type_size(int type) { return type == T_U8 ? 1 : (type == T_F32 ? 4 : 2); }

/* `src` advanced by `n` elements of `type` */
static const void* skip(const void* src, int type, int64_t n) { return (const char*)src + n * (int64_t)type_size(type); }

/* Rows pass reading the source in its own type (each value converted to float as it is read) */
static int rows_any(const void* src, int type, int64_t stride, int64_t col0, int64_t ncols, int n_out, int taps,
                    const int64_t* idx, const float* w, float* out, uint8_t* out8) {
  switch (type) {
    case T_U8: return rows_u8((const uint8_t*)src, stride, col0, ncols, n_out, taps, idx, w, out, out8);
    case T_I16: return rows_i16((const int16_t*)src, stride, col0, ncols, n_out, taps, idx, w, out, out8);
    case T_U16: return rows_u16((const uint16_t*)src, stride, col0, ncols, n_out, taps, idx, w, out, out8);
    default: return rows_f32((const float*)src, stride, col0, ncols, n_out, taps, idx, w, out, out8);
  }
}

/* Columns pass over source rows: each row's reached pixels [p0, p1) converted to float once (a
 * source pixel feeds several outputs; the buffer also gives pixel_f32 its padding), then the float
 * pass; uint8 rows of other than 3 or 4 channels are read in place. */
static int cols_from(const void* src, int type, int64_t stride, int64_t nrows, int ch, int n_out, int taps,
                     const int64_t* idx, const float* w, int64_t p0, int64_t p1, float* out, uint8_t* out8) {
  if (type == T_U8 && ch != 3 && ch != 4) {
    cols_u8((const uint8_t*)src, stride, 0, nrows, ch, n_out, taps, idx, w, out, out8);
    return 0;
  }
  const int64_t len = (p1 - p0) * ch;
  float* buf = (float*)malloc(sizeof(float) * (size_t)(len + 1));
  if (!buf) return -1;
  buf[len] = 0.0f; /* pixel_f32's padding */
  const int64_t row_out = (int64_t)n_out * ch;
  for (int64_t r = 0; r < nrows; ++r) {
    const void* s = skip(src, type, r * stride + p0 * ch);
    if (type == T_U8)
      for (int64_t j = 0; j < len; ++j) buf[j] = (float)((const uint8_t*)s)[j];
    else if (type == T_I16)
      for (int64_t j = 0; j < len; ++j) buf[j] = (float)((const int16_t*)s)[j];
    else if (type == T_U16)
      for (int64_t j = 0; j < len; ++j) buf[j] = (float)((const uint16_t*)s)[j];
    else
      memcpy(buf, s, sizeof(float) * (size_t)len);
    cols_f32(buf, 0, p0, 1, ch, n_out, taps, idx, w, out ? out + r * row_out : NULL, out8 ? out8 + r * row_out : NULL);
  }
  free(buf);
  return 0;
}

#include "resize_store.h"

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

/* src: (in_h, in_w, ch) of `in_type` (T_*), rows `row_stride` elements apart, pixels packed. The
 * source window per axis as resize.py's Axis holds it, each value rounded to float32 here: its
 * origin, span and end (a region of interest (y, x, h, w) has end = y + h in float32; a window
 * (y0, y1) has span = y1 - y0 in float32 and end y1). An axis whose output is smaller than its
 * window's span filters with `min_kind`, else `mag_kind` (K_*); tables[kind] holds sizes[kind]
 * values. Output (out_h, out_w, ch) contiguous, of `out_type` (the input's or T_F32); a uint8
 * output rounds by memory rows interleaving `row_ch` values (to_u8_rows; ch: all). Returns 0
 * when done; 1 when nothing needs filtering (both axes the identity: the caller copies); -1 for
 * bad arguments or no memory. */
int td_resize(const void* src, int in_type, int64_t in_h, int64_t in_w, int ch, int64_t row_stride, double org_y,
              double span_y, double end_y, double org_x, double span_x, double end_x, int out_h, int out_w,
              int antialias, int min_kind, int mag_kind, const float* const* tables, const int* sizes,
              int out_type, int row_ch, void* out) {
  /* forward (positive span) and within 2**30 of 0 (source positions fit in an int64 with room),
   * else the spec decides (it refuses zero and non-finite spans and reads negative ones backwards) */
  const float oy = (float)org_y, ox = (float)org_x, sy = (float)span_y, sx = (float)span_x;
  const float ey = (float)end_y, ex = (float)end_x;
  const float far = 1073741824.0f;
  if (!src || !out || !tables || !sizes || in_h <= 0 || in_w <= 0 || ch <= 0 || out_h <= 0 || out_w <= 0 ||
      !(sy > 0.0f) || !(sx > 0.0f) || !(fabsf(oy) + sy < far) || !(fabsf(ox) + sx < far) || !(fabsf(ey) < far) ||
      !(fabsf(ex) < far) || row_stride < in_w * ch || min_kind < 0 || min_kind >= N_KINDS || mag_kind < 0 ||
      mag_kind >= N_KINDS || in_type < T_U8 || in_type > T_F32 || (out_type != in_type && out_type != T_F32))
    return -1;
  axis_t ay = {in_h, out_h, oy, sy, ey, 0, NULL, 0, 0, 0, 0, 0, 0, 0};
  axis_t ax = {in_w, out_w, ox, sx, ex, 0, NULL, 0, 0, 0, 0, 0, 0, 0};
  axis_t* both[2] = {&ay, &ax};
  for (int i = 0; i < 2; ++i) {
    axis_t* a = both[i];
    a->kind = (double)a->n_out < (double)a->span ? min_kind : mag_kind;
    a->table = tables[a->kind];
    a->n_table = sizes[a->kind];
    if (!a->table || a->n_table < 2 || !filter_params(a, antialias)) return -1;
    reach(a);
  }
  if (ay.copy && ax.copy) return 1;
  /* DALI's pass order (resize.py: its cost estimate) */
  const int64_t vert = ax.ext * out_h, horz = (int64_t)out_w * ay.ext, area = (int64_t)out_h * out_w;
  const int64_t col = 15 + 5 * (int64_t)ay.taps, row = 15 + 7 * (int64_t)ax.taps; /* x5: 3 + taps, 3 + 1.4 taps */
  const int64_t cost_v = vert * col + area * row, cost_h = horz * row + area * col;
  const int vert_first = cost_v < cost_h || (cost_v == cost_h && (double)out_h < (double)sy);
  int64_t* iy = (int64_t*)malloc(sizeof(int64_t) * (size_t)out_h * (size_t)ay.taps);
  int64_t* ix = (int64_t*)malloc(sizeof(int64_t) * (size_t)out_w * (size_t)ax.taps);
  float* wy = (float*)malloc(sizeof(float) * (size_t)out_h * (size_t)ay.taps);
  float* wx = (float*)malloc(sizeof(float) * (size_t)out_w * (size_t)ax.taps);
  float* mid = NULL;
  float* res = NULL;
  uint8_t* vec = NULL;
  int rc = -1;
  if (!iy || !ix || !wy || !wx) goto done;
  /* the first pass reads from the image's start, the second from its axis's region start */
  weights(&ay, vert_first ? 0 : ay.lo, iy, wy);
  weights(&ax, vert_first ? ax.lo : 0, ix, wx);
  /* int16 / uint16 results, and uint8 rows of other than ch values: the last pass into float,
   * converted at the end */
  const int64_t n_res = (int64_t)out_h * out_w * ch;
  /* uint8 after a last pass along the rows (vert_first): rounded by columns at the end */
  const int later = out_type == T_I16 || out_type == T_U16 || (out_type == T_U8 && (row_ch != ch || vert_first));
  res = later ? (float*)malloc(sizeof(float) * (size_t)n_res) : NULL;
  if (later && !res) goto done;
  float* outf = res ? res : (out_type == T_F32 ? (float*)out : NULL);
  uint8_t* out8 = out_type == T_U8 && !res ? (uint8_t*)out : NULL;
  const int64_t ny = (int64_t)out_h * ay.taps, nx = (int64_t)out_w * ax.taps;
  if (ay.copy) { /* columns only, every row */
    if (cols_from(src, in_type, row_stride, in_h, ch, out_w, ax.taps, ix, wx, min_of(ix, nx), max_of(ix, nx) + 1,
                  outf, out8))
      goto done;
  } else if (ax.copy) { /* rows only, every column */
    if (rows_any(src, in_type, row_stride, 0, in_w * ch, out_h, ay.taps, iy, wy, outf, out8)) goto done;
  } else if (vert_first) { /* rows over the columns the second pass reads, then columns */
    const int64_t x0 = min_of(ix, nx), x1 = max_of(ix, nx) + 1;
    const int64_t ncols = (x1 - x0) * ch;
    mid = (float*)malloc(sizeof(float) * ((size_t)out_h * (size_t)ncols + 1)); /* + 1: pixel_f32 */
    if (!mid) goto done;
    if (rows_any(src, in_type, row_stride, x0 * ch, ncols, out_h, ay.taps, iy, wy, mid, NULL)) goto done;
    cols_f32(mid, ncols, x0, out_h, ch, out_w, ax.taps, ix, wx, outf, out8);
  } else { /* columns over the rows the second pass reads, then rows */
    const int64_t y0 = min_of(iy, ny), y1 = max_of(iy, ny) + 1;
    const int64_t row_mid = (int64_t)out_w * ch;
    mid = (float*)malloc(sizeof(float) * (size_t)(y1 - y0) * (size_t)row_mid);
    if (!mid) goto done;
    if (cols_from(skip(src, in_type, y0 * row_stride), in_type, row_stride, y1 - y0, ch, out_w, ax.taps, ix, wx,
                  min_of(ix, nx), max_of(ix, nx) + 1, mid, NULL))
      goto done;
    for (int64_t k = 0; k < ny; ++k) iy[k] -= y0;
    if (rows_f32(mid, row_mid, 0, row_mid, out_h, ay.taps, iy, wy, outf, out8)) goto done;
  }
  if (res && vert_first) { /* last pass along the rows: rounded by columns */
    vec = (uint8_t*)malloc((size_t)out_w);
    if (!vec) goto done;
    vector_cols(&ax, ax.lo, ax.ext, out_type == T_U8 ? 16 : 8, vec);
  }
  if (res && out_type == T_U8 && vert_first)
    to_u8_cols(res, out_h, out_w, ch, vec, (uint8_t*)out);
  else if (res && out_type == T_U8)
    to_u8_rows(res, out_h, out_w, ch, row_ch, (uint8_t*)out);
  else if (res)
    to_16(res, out_h, out_w, ch, row_ch, vec, out_type, out);
  rc = 0;
done:
  free(iy);
  free(ix);
  free(wy);
  free(wx);
  free(mid);
  free(res);
  free(vec);
  return rc;
}

