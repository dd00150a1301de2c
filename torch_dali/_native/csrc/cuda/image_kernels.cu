// CUDA kernels for the fused image ops: one launch per batch, one thread per output pixel
// producing all channels; threads run along output rows so stores are coalesced.
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <torch/library.h>

#include <atomic>

#include "../include/image_ops.h"

namespace torch_dali {
namespace {

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;
constexpr unsigned kMaxGridZ = 65535;

// Pixel `pix` of sample `s`, normalized, into an NCHW or NHWC output.
template <typename OutT, int C, bool NCHW>
__device__ __forceinline__ void store_normalized(OutT* __restrict__ out, int s, int64_t plane, int64_t pix,
                                                 const float (&v)[C], const NormParams& norm) {
  OutT* o = NCHW ? out + static_cast<int64_t>(s) * C * plane + pix : out + (static_cast<int64_t>(s) * plane + pix) * C;
  const int64_t step = NCHW ? plane : 1;
#pragma unroll
  for (int c = 0; c < C; ++c) o[c * step] = cast_out<OutT>((v[c] - norm.mean[c]) * norm.inv_std[c]);
}

// Fused crop(-of-resize)-mirror-normalize; `interp` and `round_resized` are uniform per launch.
template <typename OutT, int C, bool NCHW>
__global__ void rcmn_kernel(const SampleDesc* __restrict__ descs, int n, NormParams norm,
                            OutT* __restrict__ out, int out_h, int out_w, bool antialias, int interp,
                            bool round_resized) {
  const int ox = blockIdx.x * blockDim.x + threadIdx.x;
  const int oy = blockIdx.y * blockDim.y + threadIdx.y;
  if (ox >= out_w || oy >= out_h) return;
  const int64_t plane = static_cast<int64_t>(out_h) * out_w;
  for (int s = blockIdx.z; s < n; s += gridDim.z) {
    const SampleDesc d = descs[s];
    float v[C];
    fused_pixel<C>(d, oy, ox, out_w, interp, antialias, round_resized, v);
    store_normalized<OutT, C, NCHW>(out, s, plane, static_cast<int64_t>(oy) * out_w + ox, v, norm);
  }
}

// Linear rcmn with each block's taps worked out once: a block covers 32 columns x 8 rows of
// one sample, whose columns share their x taps down the rows and rows their y taps along the
// columns, so the weights (and clamped source indices) go to shared memory instead of being
// recomputed for every pixel and every tap row (the per-pixel kernel spends most of its time
// there). The sums are the per-pixel kernel's, term by term, so the outputs are bit-identical.
constexpr int kMaxTaps = 16;  // antialiased shrinking up to 8x; wider filters take the per-pixel path

struct TapTables {
  float xw[kMaxTaps][kBlockX];
  int xi[kMaxTaps][kBlockX];
  float xinv[kBlockX];
  float yw[kMaxTaps][kBlockY];
  int yi[kMaxTaps][kBlockY];
  float yinv[kBlockY];
  int xcount, ycount;
};

template <int W>
__device__ __forceinline__ void store_taps(const Taps& t, int lane, float (*w)[W], int (*idx)[W], float* inv) {
  if (t.count <= kMaxTaps)
    for (int k = 0; k < t.count; ++k) {
      w[k][lane] = tap_weight(t, k);
      idx[k][lane] = tap_index(t, k);
    }
  inv[lane] = t.inv_total;
}

template <typename OutT, int C, bool NCHW>
__global__ void rcmn_linear_kernel(const SampleDesc* __restrict__ descs, int n, NormParams norm,
                                   OutT* __restrict__ out, int out_h, int out_w, bool antialias,
                                   bool round_resized) {
  __shared__ TapTables tt;
  const int ox = blockIdx.x * blockDim.x + threadIdx.x;
  const int oy = blockIdx.y * blockDim.y + threadIdx.y;
  const bool inside = ox < out_w && oy < out_h;
  const int64_t plane = static_cast<int64_t>(out_h) * out_w;
  for (int s = blockIdx.z; s < n; s += gridDim.z) {
    const SampleDesc d = descs[s];
    __syncthreads();  // every thread is done with the previous sample's tables
    if (threadIdx.y == 0) {
      const int sx = (d.mirror ? out_w - 1 - ox : ox) + d.off_x;
      const Taps t = make_taps(sx, d.in_w, d.org_x, d.span_w, d.out_w, antialias);
      if (threadIdx.x == 0) tt.xcount = t.count;  // the same for every column of a sample
      store_taps(t, threadIdx.x, tt.xw, tt.xi, tt.xinv);
    } else if (threadIdx.y == 1 && threadIdx.x < kBlockY) {
      const int sy = blockIdx.y * blockDim.y + threadIdx.x + d.off_y;
      const Taps t = make_taps(sy, d.in_h, d.org_y, d.span_h, d.out_h, antialias);
      if (threadIdx.x == 0) tt.ycount = t.count;
      store_taps(t, threadIdx.x, tt.yw, tt.yi, tt.yinv);
    }
    __syncthreads();
    if (!inside) continue;
    float v[C];
    const int xc = tt.xcount, yc = tt.ycount;
    if (xc <= kMaxTaps && yc <= kMaxTaps) {
      const int col = threadIdx.x, row = threadIdx.y;
      const float xinv = tt.xinv[col];
      float acc[C];
#pragma unroll
      for (int c = 0; c < C; ++c) acc[c] = 0.f;
      for (int ky = 0; ky < yc; ++ky) {
        const float wy = tt.yw[ky][row];
        if (wy == 0.f) continue;
        const uint8_t* src = d.in + static_cast<int64_t>(tt.yi[ky][row]) * d.row_stride;
        float racc[C];
#pragma unroll
        for (int c = 0; c < C; ++c) racc[c] = 0.f;
        for (int kx = 0; kx < xc; ++kx) {
          const float wx = tt.xw[kx][col];
          const uint8_t* px = src + static_cast<int64_t>(tt.xi[kx][col]) * C;
#pragma unroll
          for (int c = 0; c < C; ++c) racc[c] += wx * static_cast<float>(__ldg(px + c));
        }
#pragma unroll
        for (int c = 0; c < C; ++c) acc[c] += wy * (racc[c] * xinv);
      }
      const float yinv = tt.yinv[row];
#pragma unroll
      for (int c = 0; c < C; ++c) v[c] = acc[c] * yinv;
      if (round_resized) {
#pragma unroll
        for (int c = 0; c < C; ++c) v[c] = static_cast<float>(cast_out<uint8_t>(v[c]));
      }
    } else {
      fused_pixel<C>(d, oy, ox, out_w, kLinear, antialias, round_resized, v);
    }
    store_normalized<OutT, C, NCHW>(out, s, plane, static_cast<int64_t>(oy) * out_w + ox, v, norm);
  }
}

template <int C>
__global__ void resize_kernel(const SampleDesc* __restrict__ descs, int n, int interp, bool antialias) {
  const int ox = blockIdx.x * blockDim.x + threadIdx.x;
  const int oy = blockIdx.y * blockDim.y + threadIdx.y;
  for (int s = blockIdx.z; s < n; s += gridDim.z) {
    const SampleDesc d = descs[s];
    if (ox >= d.out_w || oy >= d.out_h) continue;
    float v[C];
    fused_pixel<C>(d, oy, ox, d.out_w, interp, antialias, false, v);
    uint8_t* o = d.out + (static_cast<int64_t>(oy) * d.out_w + ox) * C;
#pragma unroll
    for (int c = 0; c < C; ++c) o[c] = cast_out<uint8_t>(v[c]);
  }
}

dim3 grid_for(int h, int w, size_t n) {
  return dim3((w + kBlockX - 1) / kBlockX, (h + kBlockY - 1) / kBlockY,
              static_cast<unsigned>(std::min<size_t>(n, kMaxGridZ)));
}

struct FusedArgs {
  int out_h, out_w;
  bool antialias, nchw, round_resized;
  int interp;
};

template <typename OutT, int C>
void launch_rcmn(const SampleDesc* descs, int n, const NormParams& norm, at::Tensor& out,
                 const FusedArgs& a, cudaStream_t stream) {
  const dim3 block(kBlockX, kBlockY);
  const dim3 grid = grid_for(a.out_h, a.out_w, n);
  OutT* o = reinterpret_cast<OutT*>(out.data_ptr());
  if (a.interp == kLinear && fused_tap_tables()) {
    if (a.nchw)
      rcmn_linear_kernel<OutT, C, true><<<grid, block, 0, stream>>>(descs, n, norm, o, a.out_h, a.out_w,
                                                                    a.antialias, a.round_resized);
    else
      rcmn_linear_kernel<OutT, C, false><<<grid, block, 0, stream>>>(descs, n, norm, o, a.out_h, a.out_w,
                                                                     a.antialias, a.round_resized);
    return;
  }
  if (a.nchw)
    rcmn_kernel<OutT, C, true><<<grid, block, 0, stream>>>(descs, n, norm, o, a.out_h, a.out_w,
                                                           a.antialias, a.interp, a.round_resized);
  else
    rcmn_kernel<OutT, C, false><<<grid, block, 0, stream>>>(descs, n, norm, o, a.out_h, a.out_w,
                                                            a.antialias, a.interp, a.round_resized);
}

template <typename OutT>
void launch_rcmn_c(int c, const SampleDesc* descs, int n, const NormParams& norm, at::Tensor& out,
                   const FusedArgs& a, cudaStream_t stream) {
  switch (c) {
    case 1: launch_rcmn<OutT, 1>(descs, n, norm, out, a, stream); break;
    case 3: launch_rcmn<OutT, 3>(descs, n, norm, out, a, stream); break;
    default: launch_rcmn<OutT, 4>(descs, n, norm, out, a, stream); break;
  }
}

// Runs a planned fused batch: allocates the dense output and launches on the current stream.
at::Tensor run_fused(BatchPlan& plan, const at::Tensor& mean, const at::Tensor& std, const FusedArgs& a,
                     at::ScalarType dtype, const char* op) {
  const NormParams norm = make_norm(mean, std, plan.channels);
  const auto device = plan.keep[0].device();
  TORCH_CHECK(device.is_cuda(), op, ": images must be CUDA tensors");
  c10::cuda::CUDAGuard guard(device);
  const int64_t n = static_cast<int64_t>(plan.descs.size());
  const int64_t c = plan.channels, oh = a.out_h, ow = a.out_w;
  auto out = at::empty(a.nchw ? at::IntArrayRef{n, c, oh, ow} : at::IntArrayRef{n, oh, ow, c},
                       plan.keep[0].options().dtype(dtype));
  auto descs_dev = upload_descs(plan.descs, device);
  const auto* descs = reinterpret_cast<const SampleDesc*>(descs_dev.data_ptr());
  cudaStream_t stream = at::cuda::getCurrentCUDAStream(device.index());
  const int ni = static_cast<int>(n);
  switch (dtype) {
    case at::kFloat: launch_rcmn_c<float>(plan.channels, descs, ni, norm, out, a, stream); break;
    case at::kHalf: launch_rcmn_c<c10::Half>(plan.channels, descs, ni, norm, out, a, stream); break;
    case at::kBFloat16: launch_rcmn_c<c10::BFloat16>(plan.channels, descs, ni, norm, out, a, stream); break;
    default: launch_rcmn_c<uint8_t>(plan.channels, descs, ni, norm, out, a, stream); break;
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

}  // namespace

namespace {
std::atomic<bool> g_fused_tap_tables{true};
}
bool fused_tap_tables() { return g_fused_tap_tables.load(std::memory_order_relaxed); }
void set_fused_tap_tables(bool on) { g_fused_tap_tables.store(on, std::memory_order_relaxed); }

at::Tensor rcmn_cuda(at::TensorList images, const at::Tensor& windows, const at::Tensor& mirror,
                     const at::Tensor& mean, const at::Tensor& std, int64_t out_h, int64_t out_w,
                     bool antialias, at::ScalarType dtype, bool nchw,
                    const std::optional<at::Tensor>& regions) {
  check_out_dtype(dtype);
  BatchPlan plan = plan_crop_resize(images.vec(), windows, mirror, out_h, out_w, antialias, regions);
  const FusedArgs a{static_cast<int>(out_h), static_cast<int>(out_w), antialias, nchw, false, kLinear};
  return run_fused(plan, mean, std, a, dtype, "torch_dali::resized_crop_mirror_normalize");
}

at::Tensor rscmn_cuda(at::TensorList images, const at::Tensor& resized, const at::Tensor& anchors,
                      const at::Tensor& mirror, const at::Tensor& mean, const at::Tensor& std,
                      int64_t out_h, int64_t out_w, int64_t interp, bool antialias, bool round_resized,
                      at::ScalarType dtype, bool nchw, const std::optional<at::Tensor>& source) {
  check_out_dtype(dtype);
  check_interp(interp);
  BatchPlan plan = plan_resize_crop(images.vec(), resized, anchors, mirror, out_h, out_w, source);
  const FusedArgs a{static_cast<int>(out_h), static_cast<int>(out_w), antialias, nchw, round_resized,
                    static_cast<int>(interp)};
  return run_fused(plan, mean, std, a, dtype, "torch_dali::resize_crop_mirror_normalize");
}

std::vector<at::Tensor> resize_batch_cuda(at::TensorList images, const at::Tensor& sizes, bool antialias,
                                          int64_t interp, const std::optional<at::Tensor>& source) {
  check_interp(interp);
  BatchPlan plan = plan_resize(images.vec(), sizes, source);
  const auto device = plan.keep[0].device();
  TORCH_CHECK(device.is_cuda(), "torch_dali::resize_batch: images must be CUDA tensors");
  c10::cuda::CUDAGuard guard(device);
  const int n = static_cast<int>(plan.descs.size());
  auto descs_dev = upload_descs(plan.descs, device);
  const auto* descs = reinterpret_cast<const SampleDesc*>(descs_dev.data_ptr());
  cudaStream_t stream = at::cuda::getCurrentCUDAStream(device.index());
  const dim3 block(kBlockX, kBlockY);
  const dim3 grid = grid_for(plan.max_out_h, plan.max_out_w, n);
  const int ip = static_cast<int>(interp);
  switch (plan.channels) {
    case 1: resize_kernel<1><<<grid, block, 0, stream>>>(descs, n, ip, antialias); break;
    case 3: resize_kernel<3><<<grid, block, 0, stream>>>(descs, n, ip, antialias); break;
    default: resize_kernel<4><<<grid, block, 0, stream>>>(descs, n, ip, antialias); break;
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return plan.outs;
}

}  // namespace torch_dali

TORCH_LIBRARY_IMPL(torch_dali, CUDA, m) {
  m.impl("resized_crop_mirror_normalize", &torch_dali::rcmn_cuda);
  m.impl("resize_batch", &torch_dali::resize_batch_cuda);
  m.impl("resize_crop_mirror_normalize", &torch_dali::rscmn_cuda);
}
