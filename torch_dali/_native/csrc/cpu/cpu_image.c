/* CPU image kernels for the per-sample ops, each bit for bit what its pure-torch spec computes,
 * in one call that holds no Python lock (ctypes releases the GIL) (resize: cpu_resize.c):
 * - td_crop_mirror_normalize: functional/normalize.py's `_normalize_into` for a window inside
 *   the image.
 * The same float32 operations in the same order; build with -ffp-contract=off (no fused
 * multiply-add) so nothing rounds differently. The only vectorised loops run across independent
 * outputs, never across a sum. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* float32 -> float16 as functional/half.py's to_half (DALI 2.4's CPU conversion): to the nearest,
 * halfway cases away from zero (bit 12 of the mantissa is exactly the half-place bit); 65520 and
 * above overflow to inf; NaN as torch's conversion gives it (quiet bit set, the payload's top bits
 * kept). Every case is computed and one selected, so the loop vectorises. */
TD_AVX2_CLONE static void to_half_run(const uint32_t* src, int64_t n, uint16_t* out) {
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t f = src[i];
    const uint32_t sign = (f >> 16) & 0x8000u, mag = f & 0x7fffffffu;
    const uint32_t nan_h = sign | 0x7e00u | ((mag & 0x7fffffu) >> 13);
    const uint32_t inf_h = sign | 0x7c00u;
    const uint32_t normal_h = sign | (((mag - 0x38000000u) >> 13) + ((mag >> 12) & 1u));
    /* float16 subnormals: the value in units of 2**-24 is the full mantissa shifted right by
     * 126 - exponent (14..24 in this range; clamped so the shift stays defined elsewhere) */
    const int32_t e = (int32_t)(mag >> 23);
    const int32_t sh0 = 126 - e;
    const int32_t sh = sh0 < 1 ? 1 : (sh0 > 31 ? 31 : sh0);
    const uint32_t m = (mag & 0x7fffffu) | 0x800000u;
    const uint32_t sub_h = sign | ((m >> sh) + ((m >> (sh - 1)) & 1u));
    out[i] = (uint16_t)(mag > 0x7f800000u ? nan_h
                        : mag >= 0x477ff000u ? inf_h
                        : mag >= 0x38800000u ? normal_h
                        : mag >= 0x33000000u ? sub_h : sign);
  }
}

int td_to_half(const float* src, int64_t n, void* out) {
  if (!src || !out || n < 0) return -1;
  to_half_run((const uint32_t*)src, n, (uint16_t*)out);
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
