// Resampling math shared by the CUDA kernels and the CPU reference kernels, following DALI 2.4's
// resize (the pure-torch spec, torch_dali/functional/resize.py, is held to DALI's CPU output):
// output i of an axis is centred on source origin + (i + 0.5) * span / out - 0.5; its `taps`
// source samples start at ceil(that - anchor) and are clamped to the image (borders repeat,
// nothing is renormalised away); weights are a triangle of radius 1, widened to radius
// span / out when antialiasing a shrinking axis, read as DALI reads its filter table (linear
// interpolation of [0, 1, 0]) in float32, and normalised by their sum. Nearest-neighbour takes
// floor(origin + (i + 0.5) * span / out) (rows stepped as DALI steps them). The spec runs the axes as two passes; these kernels sum
// both at once, so a value can differ from it in the last float bit (a rounding tie, rarely).
#pragma once
#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define TD_HD __host__ __device__ __forceinline__
#else
#define TD_HD inline
#endif

#if defined(__CUDA_ARCH__)  // device pass only: the host compiler does not know the pragma
#define TD_UNROLL _Pragma("unroll")
#else
#define TD_UNROLL
#endif

#if defined(__CUDA_ARCH__)
#define TD_LDG(p) __ldg(p)
#else
#define TD_LDG(p) (*(p))
#endif

namespace torch_dali {

// One sample of a batch; built on the host and uploaded as raw bytes (must stay POD).
struct SampleDesc {
  const uint8_t* in;       // top-left pixel of the region taps may read (HWC uint8)
  int64_t row_stride;      // elements between input rows
  uint8_t* out;            // this sample's output (resize_batch; unused by the fused ops)
  int in_h, in_w;          // the readable region: taps beyond it read its border
  int out_h, out_w;        // size the source window is resized to
  float org_y, org_x;      // the source window's origin in the region
  float span_h, span_w;    // the source window's size
  int mirror;              // flip the output horizontally
  int off_y, off_x;        // fused ops: the output is the crop of the resized window at this anchor
};

// Per-batch normalisation, passed to kernels by value.
struct NormParams {
  float mean[4];
  float inv_std[4];
};

// 0 is torch's "nearest" (kept for old callers: floor(i * span / out)); DALI's NN is 2.
enum Interp : int { kNearest = 0, kLinear = 1, kNearestExact = 2 };

// The taps of one output coordinate along one axis.
struct Taps {
  int first;        // source index of tap 0 (before clamping)
  int count;
  int limit;        // clamp indices to [0, limit]
  float frac;       // tap k sits (frac + k) * units into the filter table
  float units;
  float inv_total;  // 1 / sum of the weights (0 when they sum to 0)
};

// DALI's filter table for the triangle, [0, 1, 0], read with linear interpolation at `pos`.
TD_HD float triangle_table(float pos) {
  if (!(pos > -1.f && pos < 3.f)) return 0.f;
  const float lo = floorf(pos);
  const float d = pos - lo;
  const int i = static_cast<int>(lo);
  const float f0 = i == 1 ? 1.f : 0.f;
  const float f1 = i + 1 == 1 ? 1.f : 0.f;
  return f0 + d * (f1 - f0);
}

TD_HD float tap_weight(const Taps& t, int k) {
  if (t.count == 1) return 1.f;
  return triangle_table((t.frac + static_cast<float>(k)) * t.units);
}

TD_HD int tap_index(const Taps& t, int k) {
  const int j = t.first + k;
  return j < 0 ? 0 : (j > t.limit ? t.limit : j);
}

// Taps of output `out_idx` of an axis resizing [origin, origin + span) of an `in_size` region to
// `out_size` samples (linear / triangular filter).
TD_HD Taps make_taps(int out_idx, int in_size, float origin, float span, int out_size, bool antialias) {
  Taps t;
  t.limit = in_size - 1;
  const float fout = static_cast<float>(out_size);
  if (origin == 0.f && span == static_cast<float>(in_size) && in_size == out_size) {
    t.first = out_idx; t.count = 1; t.frac = 0.f; t.units = 1.f; t.inv_total = 1.f;  // a copy
    return t;
  }
  const float ratio = span / fout;
  const bool shrink = antialias && fout < span;
  const float width = fmaxf(1.f, 2.f * (shrink ? ratio : 1.f));
  t.units = 2.f / width;
  const float anchor = 1.f / t.units;
  t.count = static_cast<int>(ceilf(2.f / t.units));
  const float start = origin + ((0.5f * ratio) - 0.5f) - anchor;
  const float left = static_cast<float>(out_idx) * ratio + start;
  const float first = ceilf(left);
  t.frac = first - left;
  t.first = static_cast<int>(first);
  float total = 0.f;
  for (int k = 0; k < t.count; ++k) total += tap_weight(t, k);
  t.inv_total = total != 0.f ? 1.f / total : 0.f;
  return t;
}

// Nearest-neighbour source index: floor(origin + (i + 0.5) * span / out), clamped; kNearest is
// torch's floor(i * span / out).
TD_HD int nearest_index(int out_idx, int in_size, float origin, float span, int out_size, int interp) {
  const float scale = span / static_cast<float>(out_size);
  const float s = interp == kNearestExact ? origin + (static_cast<float>(out_idx) + 0.5f) * scale
                                          : origin + static_cast<float>(out_idx) * scale;
  const int i = static_cast<int>(floorf(s));
  return i < 0 ? 0 : (i < in_size - 1 ? i : in_size - 1);
}

// DALI's nearest-neighbour row: its row positions are stepped by repeated float32 additions of
// the scale (so a tie can land a row lower than the closed form); summed here the same way.
TD_HD int nearest_row(int out_idx, int in_size, float origin, float span, int out_size) {
  const float scale = span / static_cast<float>(out_size);
  float s = origin + 0.5f * scale;
  for (int i = 0; i < out_idx; ++i) s += scale;
  const int r = static_cast<int>(floorf(s));
  return r < 0 ? 0 : (r < in_size - 1 ? r : in_size - 1);
}

// Separable weighted sum over the taps (rows of column sums), normalised per axis.
template <int C>
TD_HD void resample_pixel(const uint8_t* img, int64_t row_stride, const Taps& ty, const Taps& tx,
                          float out[C]) {
  float acc[C];
TD_UNROLL
  for (int c = 0; c < C; ++c) acc[c] = 0.f;
  for (int ky = 0; ky < ty.count; ++ky) {
    const float wy = tap_weight(ty, ky);
    if (wy == 0.f) continue;
    const uint8_t* row = img + static_cast<int64_t>(tap_index(ty, ky)) * row_stride;
    float racc[C];
TD_UNROLL
    for (int c = 0; c < C; ++c) racc[c] = 0.f;
    for (int kx = 0; kx < tx.count; ++kx) {
      const float wx = tap_weight(tx, kx);
      const uint8_t* px = row + static_cast<int64_t>(tap_index(tx, kx)) * C;
TD_UNROLL
      for (int c = 0; c < C; ++c) racc[c] += wx * static_cast<float>(TD_LDG(px + c));
    }
TD_UNROLL
    for (int c = 0; c < C; ++c) acc[c] += wy * (racc[c] * tx.inv_total);
  }
TD_UNROLL
  for (int c = 0; c < C; ++c) out[c] = acc[c] * ty.inv_total;
}

template <int C>
TD_HD void nearest_pixel(const uint8_t* img, int64_t row_stride, int sy, int sx, float out[C]) {
  const uint8_t* px = img + static_cast<int64_t>(sy) * row_stride + static_cast<int64_t>(sx) * C;
TD_UNROLL
  for (int c = 0; c < C; ++c) out[c] = static_cast<float>(TD_LDG(px + c));
}

// Output casts: uint8 rounds to nearest (ties to even) and saturates (NaN -> 0).
template <typename T>
TD_HD T cast_out(float v) { return static_cast<T>(v); }
template <>
TD_HD uint8_t cast_out<uint8_t>(float v) {
  return static_cast<uint8_t>(fminf(fmaxf(rintf(v), 0.f), 255.f));
}

// One output pixel: pixel (oy, ox) of the crop_w-wide crop at (off_y, off_x) of the source window
// resized to (out_h, out_w), read mirrored when asked. `round_resized` rounds to uint8 first, as
// a separate resize op would store its output, so the fused result equals resize followed by
// crop_mirror_normalize.
template <int C>
TD_HD void fused_pixel(const SampleDesc& d, int oy, int ox, int crop_w, int interp, bool antialias,
                       bool round_resized, float v[C]) {
  const int sy = oy + d.off_y;
  const int sx = (d.mirror ? crop_w - 1 - ox : ox) + d.off_x;
  if (interp == kLinear) {
    resample_pixel<C>(d.in, d.row_stride, make_taps(sy, d.in_h, d.org_y, d.span_h, d.out_h, antialias),
                      make_taps(sx, d.in_w, d.org_x, d.span_w, d.out_w, antialias), v);
  } else {
    const int ry = interp == kNearestExact ? nearest_row(sy, d.in_h, d.org_y, d.span_h, d.out_h)
                                           : nearest_index(sy, d.in_h, d.org_y, d.span_h, d.out_h, interp);
    nearest_pixel<C>(d.in, d.row_stride, ry, nearest_index(sx, d.in_w, d.org_x, d.span_w, d.out_w, interp), v);
  }
  if (round_resized) {
TD_UNROLL
    for (int c = 0; c < C; ++c) v[c] = static_cast<float>(cast_out<uint8_t>(v[c]));
  }
}

}  // namespace torch_dali
