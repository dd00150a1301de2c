// Host-side planning shared by the CPU and CUDA implementations of the torch_dali image ops.
#pragma once
#include <ATen/ATen.h>

#include <vector>

#include "resample.h"

namespace torch_dali {

// Validated batch: per-sample descriptors plus the tensors they point into (kept alive).
struct BatchPlan {
  std::vector<at::Tensor> keep;
  std::vector<SampleDesc> descs;
  int channels = 0;
  int max_out_h = 0, max_out_w = 0;
  std::vector<at::Tensor> outs;  // resize_batch outputs, one allocation per sample
};

// resized_crop_mirror_normalize: checks images/windows/mirror and fills descriptors.
// `regions`: optional [N, 4] int64 (y, x, H, W): image i is the part at (y, x) of an H x W image
// and its window is in that image's coordinates (a decoder decoded only what the taps read).
BatchPlan plan_crop_resize(const std::vector<at::Tensor>& images, const at::Tensor& windows,
                           const at::Tensor& mirror, int64_t out_h, int64_t out_w, bool antialias,
                           const std::optional<at::Tensor>& regions = std::nullopt);
// resize_crop_mirror_normalize: each image resized to `resized` [N, 2], then the (out_h, out_w)
// window at `anchors` [N, 2] of that, optionally mirrored (descriptors carry the anchor).
BatchPlan plan_resize_crop(const std::vector<at::Tensor>& images, const at::Tensor& resized,
                           const at::Tensor& anchors, const at::Tensor& mirror, int64_t out_h,
                           int64_t out_w, const std::optional<at::Tensor>& source = std::nullopt);
// resize_batch: checks images/sizes, allocates the outputs and fills descriptors.
// `source`: optional [N, 4] float (y, x, h, w) windows read instead of the whole images.
BatchPlan plan_resize(const std::vector<at::Tensor>& images, const at::Tensor& sizes,
                      const std::optional<at::Tensor>& source = std::nullopt);
NormParams make_norm(const at::Tensor& mean, const at::Tensor& std, int channels);
void check_out_dtype(at::ScalarType dtype);
void check_interp(int64_t interp);
// Copies the descriptors to `device` (pinned staging + non_blocking copy on the current stream).
at::Tensor upload_descs(const std::vector<SampleDesc>& descs, const at::Device& device);

// Whether the linear fused kernels share each block's taps (default) or work them out per pixel
// (the earlier kernel, kept for measuring and to check the two agree bit for bit).
bool fused_tap_tables();
void set_fused_tap_tables(bool on);

// Device implementations (cuda/image_kernels.cu, cpu/image_kernels_cpu.cpp).
at::Tensor rcmn_cuda(at::TensorList images, const at::Tensor& windows, const at::Tensor& mirror,
                     const at::Tensor& mean, const at::Tensor& std, int64_t out_h, int64_t out_w,
                     bool antialias, at::ScalarType dtype, bool nchw,
                    const std::optional<at::Tensor>& regions);
std::vector<at::Tensor> resize_batch_cuda(at::TensorList images, const at::Tensor& sizes,
                                          bool antialias, int64_t interp, const std::optional<at::Tensor>& source);
at::Tensor rscmn_cuda(at::TensorList images, const at::Tensor& resized, const at::Tensor& anchors,
                      const at::Tensor& mirror, const at::Tensor& mean, const at::Tensor& std,
                      int64_t out_h, int64_t out_w, int64_t interp, bool antialias, bool round_resized,
                      at::ScalarType dtype, bool nchw, const std::optional<at::Tensor>& source);
at::Tensor rscmn_cpu(at::TensorList images, const at::Tensor& resized, const at::Tensor& anchors,
                     const at::Tensor& mirror, const at::Tensor& mean, const at::Tensor& std,
                     int64_t out_h, int64_t out_w, int64_t interp, bool antialias, bool round_resized,
                     at::ScalarType dtype, bool nchw, const std::optional<at::Tensor>& source);
at::Tensor rcmn_cpu(at::TensorList images, const at::Tensor& windows, const at::Tensor& mirror,
                    const at::Tensor& mean, const at::Tensor& std, int64_t out_h, int64_t out_w,
                    bool antialias, at::ScalarType dtype, bool nchw,
                    const std::optional<at::Tensor>& regions);
std::vector<at::Tensor> resize_batch_cpu(at::TensorList images, const at::Tensor& sizes,
                                         bool antialias, int64_t interp, const std::optional<at::Tensor>& source);


}  // namespace torch_dali
