// Resampling math shared by the CUDA kernels and the CPU reference kernels.
// Weights follow torch's F.interpolate(mode="bilinear", align_corners=False[, antialias]):
// a triangle filter centred at scale*(i+0.5) whose support widens by `scale` when antialiasing
// a downscale; taps falling outside the input are dropped and the rest renormalised (this
// reproduces torch's border clamping for the plain bilinear case too).
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
  const uint8_t* in;     // top-left pixel of the source window (HWC uint8)
  int64_t row_stride;    // elements between input rows
  uint8_t* out;          // this sample's output (resize_batch; unused by the fused ops)
  int win_h, win_w;      // source window size in input pixels
  int out_h, out_w;      // size the window is resized to
  float scale_y, scale_x;  // win / out, computed in float like torch
  int mirror;            // flip the output horizontally
  int off_y, off_x;      // fused ops: the output is the crop of the resized window at this anchor
  int pad_;
};

// Per-batch normalisation, passed to kernels by value.
struct NormParams {
  float mean[4];
  float inv_std[4];
};

enum Interp : int { kNearest = 0, kLinear = 1, kNearestExact = 2 };

// Taps of one output coordinate along one axis.
struct Taps {
  int start;
  int count;
  float center;
  float invscale;
  float inv_total;
};

TD_HD float triangle(float x) {
  x = fabsf(x);
  return x < 1.f ? 1.f - x : 0.f;
}

TD_HD float tap_weight(const Taps& t, int j) {
  if (t.count == 1) return 1.f;
  return triangle((static_cast<float>(j) - t.center + 0.5f) * t.invscale);
}

TD_HD Taps make_taps(int out_idx, int in_size, float scale, bool antialias) {
  Taps t;
  if (scale == 1.f) {  // identity axis: torch's weights are (1, 0)
    t.start = out_idx; t.count = 1; t.center = 0.f; t.invscale = 1.f; t.inv_total = 1.f;
    return t;
  }
  const bool widen = antialias && scale >= 1.f;
  const float support = widen ? scale : 1.f;
  t.invscale = widen ? 1.f / scale : 1.f;
  t.center = scale * (static_cast<float>(out_idx) + 0.5f);
  // int conversion truncates toward zero, as torch does before clamping.
  int lo = static_cast<int>(t.center - support + 0.5f);
  int hi = static_cast<int>(t.center + support + 0.5f);
  lo = lo < 0 ? 0 : lo;
  hi = hi > in_size ? in_size : hi;
  if (hi <= lo) hi = lo + 1;  // unreachable for valid sizes; keeps reads in bounds
  if (lo >= in_size) { lo = in_size - 1; hi = in_size; }
  t.start = lo;
  t.count = hi - lo;
  float total = 0.f;
  for (int j = lo; j < hi; ++j) total += triangle((static_cast<float>(j) - t.center + 0.5f) * t.invscale);
  t.inv_total = total > 0.f ? 1.f / total : 0.f;
  if (t.count == 1) t.inv_total = 1.f;
  return t;
}

// torch "nearest": floor(i * scale); "nearest-exact": floor((i + 0.5) * scale); clamped.
TD_HD int nearest_index(int out_idx, int in_size, int out_size, float scale, int interp) {
  if (in_size == out_size) return out_idx;
  float s = interp == kNearestExact ? (static_cast<float>(out_idx) + 0.5f) * scale
                                    : static_cast<float>(out_idx) * scale;
  int i = static_cast<int>(floorf(s));
  return i < in_size - 1 ? i : in_size - 1;
}

// Separable weighted sum over the taps; `img` points at the window's top-left pixel.
template <int C>
TD_HD void resample_pixel(const uint8_t* img, int64_t row_stride, const Taps& ty, const Taps& tx,
                          float out[C]) {
  float acc[C];
TD_UNROLL
  for (int c = 0; c < C; ++c) acc[c] = 0.f;
  for (int y = ty.start; y < ty.start + ty.count; ++y) {
    const float wy = tap_weight(ty, y);
    const uint8_t* row = img + static_cast<int64_t>(y) * row_stride;
    float racc[C];
TD_UNROLL
    for (int c = 0; c < C; ++c) racc[c] = 0.f;
    for (int x = tx.start; x < tx.start + tx.count; ++x) {
      const float wx = tap_weight(tx, x);
      const uint8_t* px = row + static_cast<int64_t>(x) * C;
TD_UNROLL
      for (int c = 0; c < C; ++c) racc[c] += wx * static_cast<float>(TD_LDG(px + c));
    }
TD_UNROLL
    for (int c = 0; c < C; ++c) acc[c] += wy * racc[c];
  }
  const float norm = ty.inv_total * tx.inv_total;
TD_UNROLL
  for (int c = 0; c < C; ++c) out[c] = acc[c] * norm;
}

template <int C>
TD_HD void nearest_pixel(const uint8_t* img, int64_t row_stride, int sy, int sx, float out[C]) {
  const uint8_t* px = img + static_cast<int64_t>(sy) * row_stride + static_cast<int64_t>(sx) * C;
TD_UNROLL
  for (int c = 0; c < C; ++c) out[c] = static_cast<float>(TD_LDG(px + c));
}

// Output casts: uint8 rounds to nearest and saturates (NaN -> 0).
template <typename T>
TD_HD T cast_out(float v) { return static_cast<T>(v); }
template <>
TD_HD uint8_t cast_out<uint8_t>(float v) {
  return static_cast<uint8_t>(fminf(fmaxf(rintf(v), 0.f), 255.f));
}

// One output pixel of the fused ops: pixel (oy, ox) of the crop_w-wide crop at (off_y, off_x) of
// the source window resized to (out_h, out_w), read mirrored when asked. `round_resized` rounds
// to uint8 first, as a separate resize op would store its output, so the fused result equals
// resize followed by crop_mirror_normalize.
template <int C>
TD_HD void fused_pixel(const SampleDesc& d, int oy, int ox, int crop_w, int interp, bool antialias,
                       bool round_resized, float v[C]) {
  const int sy = oy + d.off_y;
  const int sx = (d.mirror ? crop_w - 1 - ox : ox) + d.off_x;
  if (interp == kLinear) {
    resample_pixel<C>(d.in, d.row_stride, make_taps(sy, d.win_h, d.scale_y, antialias),
                      make_taps(sx, d.win_w, d.scale_x, antialias), v);
  } else {
    nearest_pixel<C>(d.in, d.row_stride, nearest_index(sy, d.win_h, d.out_h, d.scale_y, interp),
                     nearest_index(sx, d.win_w, d.out_w, d.scale_x, interp), v);
  }
  if (round_resized) {
TD_UNROLL
    for (int c = 0; c < C; ++c) v[c] = static_cast<float>(cast_out<uint8_t>(v[c]));
  }
}

}  // namespace torch_dali
