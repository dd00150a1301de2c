// CPU implementations of the fused image ops, built from the same per-pixel math as the CUDA
// kernels: they let the kernels' arithmetic be checked on machines without a GPU.
#include <ATen/Parallel.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include "../include/image_ops.h"

namespace torch_dali {
namespace {

template <typename OutT, int C>
void fused_rows(const BatchPlan& plan, const NormParams& norm, OutT* out, int out_h, int out_w,
                int interp, bool antialias, bool round_resized, bool nchw) {
  const int64_t n = static_cast<int64_t>(plan.descs.size());
  const int64_t plane = static_cast<int64_t>(out_h) * out_w;
  at::parallel_for(0, n * out_h, 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t s = r / out_h;
      const int oy = static_cast<int>(r % out_h);
      for (int ox = 0; ox < out_w; ++ox) {
        float v[C];
        fused_pixel<C>(plan.descs[s], oy, ox, out_w, interp, antialias, round_resized, v);
        const int64_t pix = static_cast<int64_t>(oy) * out_w + ox;
        for (int c = 0; c < C; ++c) {
          const OutT y = cast_out<OutT>((v[c] - norm.mean[c]) * norm.inv_std[c]);
          if (nchw)
            out[(s * C + c) * plane + pix] = y;
          else
            out[(s * plane + pix) * C + c] = y;
        }
      }
    }
  });
}

template <typename OutT>
void fused_c(const BatchPlan& plan, const NormParams& norm, OutT* out, int oh, int ow, int interp, bool aa,
             bool round_resized, bool nchw) {
  switch (plan.channels) {
    case 1: fused_rows<OutT, 1>(plan, norm, out, oh, ow, interp, aa, round_resized, nchw); break;
    case 3: fused_rows<OutT, 3>(plan, norm, out, oh, ow, interp, aa, round_resized, nchw); break;
    default: fused_rows<OutT, 4>(plan, norm, out, oh, ow, interp, aa, round_resized, nchw); break;
  }
}

template <int C>
void resize_rows(const BatchPlan& plan, int interp, bool antialias) {
  const int64_t n = static_cast<int64_t>(plan.descs.size());
  at::parallel_for(0, n, 1, [&](int64_t begin, int64_t end) {
    for (int64_t s = begin; s < end; ++s) {
      const SampleDesc& d = plan.descs[s];
      for (int oy = 0; oy < d.out_h; ++oy) {
        for (int ox = 0; ox < d.out_w; ++ox) {
          float v[C];
          fused_pixel<C>(d, oy, ox, d.out_w, interp, antialias, false, v);
          uint8_t* o = d.out + (static_cast<int64_t>(oy) * d.out_w + ox) * C;
          for (int c = 0; c < C; ++c) o[c] = cast_out<uint8_t>(v[c]);
        }
      }
    }
  });
}

}  // namespace

at::Tensor rcmn_cpu(at::TensorList images, const at::Tensor& windows, const at::Tensor& mirror,
                    const at::Tensor& mean, const at::Tensor& std, int64_t out_h, int64_t out_w,
                    bool antialias, at::ScalarType dtype, bool nchw,
                    const std::optional<at::Tensor>& regions) {
  check_out_dtype(dtype);
  BatchPlan plan = plan_crop_resize(images.vec(), windows, mirror, out_h, out_w, antialias, regions);
  const NormParams norm = make_norm(mean, std, plan.channels);
  const int64_t n = static_cast<int64_t>(plan.descs.size());
  const int64_t c = plan.channels;
  auto out = at::empty(nchw ? at::IntArrayRef{n, c, out_h, out_w} : at::IntArrayRef{n, out_h, out_w, c},
                       plan.keep[0].options().dtype(dtype));
  const int oh = static_cast<int>(out_h), ow = static_cast<int>(out_w);
  switch (dtype) {
    case at::kFloat: fused_c(plan, norm, out.data_ptr<float>(), oh, ow, kLinear, antialias, false, nchw); break;
    case at::kHalf: fused_c(plan, norm, out.data_ptr<c10::Half>(), oh, ow, kLinear, antialias, false, nchw); break;
    case at::kBFloat16:
      fused_c(plan, norm, out.data_ptr<c10::BFloat16>(), oh, ow, kLinear, antialias, false, nchw);
      break;
    default: fused_c(plan, norm, out.data_ptr<uint8_t>(), oh, ow, kLinear, antialias, false, nchw); break;
  }
  return out;
}

at::Tensor rscmn_cpu(at::TensorList images, const at::Tensor& resized, const at::Tensor& anchors,
                     const at::Tensor& mirror, const at::Tensor& mean, const at::Tensor& std,
                     int64_t out_h, int64_t out_w, int64_t interp, bool antialias, bool round_resized,
                     at::ScalarType dtype, bool nchw, const std::optional<at::Tensor>& source) {
  check_out_dtype(dtype);
  check_interp(interp);
  BatchPlan plan = plan_resize_crop(images.vec(), resized, anchors, mirror, out_h, out_w, source);
  const NormParams norm = make_norm(mean, std, plan.channels);
  const int64_t n = static_cast<int64_t>(plan.descs.size());
  const int64_t c = plan.channels;
  auto out = at::empty(nchw ? at::IntArrayRef{n, c, out_h, out_w} : at::IntArrayRef{n, out_h, out_w, c},
                       plan.keep[0].options().dtype(dtype));
  const int oh = static_cast<int>(out_h), ow = static_cast<int>(out_w), ip = static_cast<int>(interp);
  switch (dtype) {
    case at::kFloat: fused_c(plan, norm, out.data_ptr<float>(), oh, ow, ip, antialias, round_resized, nchw); break;
    case at::kHalf: fused_c(plan, norm, out.data_ptr<c10::Half>(), oh, ow, ip, antialias, round_resized, nchw); break;
    case at::kBFloat16:
      fused_c(plan, norm, out.data_ptr<c10::BFloat16>(), oh, ow, ip, antialias, round_resized, nchw);
      break;
    default: fused_c(plan, norm, out.data_ptr<uint8_t>(), oh, ow, ip, antialias, round_resized, nchw); break;
  }
  return out;
}

std::vector<at::Tensor> resize_batch_cpu(at::TensorList images, const at::Tensor& sizes, bool antialias,
                                         int64_t interp, const std::optional<at::Tensor>& source) {
  check_interp(interp);
  BatchPlan plan = plan_resize(images.vec(), sizes, source);
  const int ip = static_cast<int>(interp);
  switch (plan.channels) {
    case 1: resize_rows<1>(plan, ip, antialias); break;
    case 3: resize_rows<3>(plan, ip, antialias); break;
    default: resize_rows<4>(plan, ip, antialias); break;
  }
  return plan.outs;
}

}  // namespace torch_dali
