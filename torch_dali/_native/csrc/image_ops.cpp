// Validation, descriptor building and op registration for the fused image ops.
#include "include/image_ops.h"

#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace torch_dali {
namespace {

constexpr int64_t kMaxDim = 1 << 30;  // keeps int pixel indices in range

// Returns an HWC uint8 image whose pixels are densely packed within a row (rows may be strided).
at::Tensor checked_image(const at::Tensor& img, size_t i, const at::Device& device, int channels) {
  TORCH_CHECK(img.defined(), "torch_dali: image ", i, " is undefined");
  TORCH_CHECK(img.scalar_type() == at::kByte, "torch_dali: image ", i, " must be uint8, got ",
              img.scalar_type());
  TORCH_CHECK(img.dim() == 3, "torch_dali: image ", i, " must be HWC (3-D), got ", img.dim(), "-D");
  TORCH_CHECK(img.device() == device, "torch_dali: image ", i, " is on ", img.device(),
              " but image 0 is on ", device);
  TORCH_CHECK(img.size(2) == channels, "torch_dali: image ", i, " has ", img.size(2),
              " channels but image 0 has ", channels);
  TORCH_CHECK(img.size(0) > 0 && img.size(1) > 0, "torch_dali: image ", i, " is empty (",
              img.size(0), "x", img.size(1), ")");
  TORCH_CHECK(img.size(0) < kMaxDim && img.size(1) < kMaxDim, "torch_dali: image ", i, " too large");
  if (img.stride(2) == 1 && img.stride(1) == channels && img.stride(0) >= img.size(1) * channels)
    return img;
  return img.contiguous();
}

void check_batch(const std::vector<at::Tensor>& images, const char* op) {
  TORCH_CHECK(!images.empty(), "torch_dali::", op, ": `images` is empty");
  const auto& first = images[0];
  TORCH_CHECK(first.defined() && first.dim() == 3, "torch_dali::", op,
              ": images must be HWC uint8 tensors");
  const int64_t c = first.size(2);
  TORCH_CHECK(c == 1 || c == 3 || c == 4, "torch_dali::", op,
              ": images must have 1, 3 or 4 channels, got ", c);
}

// Small host copy of an index-like tensor (a device tensor costs a synchronising copy).
at::Tensor host_long(const at::Tensor& t, const char* name) {
  TORCH_CHECK(t.defined(), "torch_dali: `", name, "` is undefined");
  TORCH_CHECK(!at::isFloatingType(t.scalar_type()) && !at::isComplexType(t.scalar_type()),
              "torch_dali: `", name, "` must be an integer or bool tensor, got ", t.scalar_type());
  return t.to(at::kCPU).to(at::kLong).contiguous();
}

// Per-sample source windows (origin y, origin x, span h, span w) in float32, replacing "the whole
// image": the spec's window for a size kept exactly (subpixel_scale), which may reach a fraction
// of a pixel past the image (taps there read its border, as everywhere).
void apply_source(BatchPlan& plan, const std::optional<at::Tensor>& source, const char* op) {
  if (!source.has_value() || !source->defined()) return;
  const int64_t n = static_cast<int64_t>(plan.descs.size());
  TORCH_CHECK(at::isFloatingType(source->scalar_type()), op, ": `source` must be a float tensor, got ",
              source->scalar_type());
  const at::Tensor src = source->to(at::kCPU).to(at::kFloat).contiguous();
  TORCH_CHECK(src.dim() == 2 && src.size(0) == n && src.size(1) == 4, op,
              ": `source` must be [N, 4] = (y, x, h, w) with N = ", n, ", got ", src.sizes());
  const float* v = src.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i, v += 4) {
    SampleDesc& d = plan.descs[i];
    TORCH_CHECK(std::isfinite(v[0]) && std::isfinite(v[1]) && v[2] > 0.f && v[3] > 0.f &&
                    std::isfinite(v[2]) && std::isfinite(v[3]) && std::fabs(v[0]) < kMaxDim &&
                    std::fabs(v[1]) < kMaxDim && v[2] < kMaxDim && v[3] < kMaxDim,
                op, ": source window ", i, " (", v[0], ", ", v[1], ", ", v[2], ", ", v[3],
                ") must be finite with a positive size");
    d.org_y = v[0];
    d.org_x = v[1];
    d.span_h = v[2];
    d.span_w = v[3];
  }
}

}  // namespace

BatchPlan plan_crop_resize(const std::vector<at::Tensor>& images, const at::Tensor& windows,
                           const at::Tensor& mirror, int64_t out_h, int64_t out_w, bool antialias,
                           const std::optional<at::Tensor>& regions) {
  check_batch(images, "resized_crop_mirror_normalize");
  TORCH_CHECK(out_h > 0 && out_w > 0 && out_h < kMaxDim && out_w < kMaxDim,
              "torch_dali::resized_crop_mirror_normalize: output size must be positive, got ",
              out_h, "x", out_w);
  const int64_t n = static_cast<int64_t>(images.size());
  auto win = host_long(windows, "windows");
  TORCH_CHECK(win.dim() == 2 && win.size(0) == n && win.size(1) == 4,
              "torch_dali::resized_crop_mirror_normalize: `windows` must be [N, 4] = (y, x, h, w) "
              "with N = ", n, ", got ", win.sizes());
  auto mir = host_long(mirror, "mirror");
  TORCH_CHECK(mir.dim() == 1 && mir.size(0) == n,
              "torch_dali::resized_crop_mirror_normalize: `mirror` must be [N] with N = ", n,
              ", got ", mir.sizes());
  at::Tensor reg;
  if (regions.has_value()) {
    reg = host_long(*regions, "regions");
    TORCH_CHECK(reg.dim() == 2 && reg.size(0) == n && reg.size(1) == 4,
                "torch_dali::resized_crop_mirror_normalize: `regions` must be [N, 4] = (y, x, H, W) "
                "with N = ", n, ", got ", reg.sizes());
  }
  BatchPlan plan;
  plan.channels = static_cast<int>(images[0].size(2));
  plan.max_out_h = static_cast<int>(out_h);
  plan.max_out_w = static_cast<int>(out_w);
  const auto device = images[0].device();
  const int64_t* w = win.data_ptr<int64_t>();
  const int64_t* m = mir.data_ptr<int64_t>();
  plan.keep.reserve(n);
  plan.descs.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    at::Tensor img = checked_image(images[i], i, device, plan.channels);
    const int64_t y = w[4 * i], x = w[4 * i + 1], h = w[4 * i + 2], ww = w[4 * i + 3];
    // the image the window is in: this one, or the one this image is a region of
    int64_t base_y = 0, base_x = 0, full_h = img.size(0), full_w = img.size(1);
    if (reg.defined()) {
      const int64_t* r = reg.data_ptr<int64_t>() + 4 * i;
      base_y = r[0], base_x = r[1], full_h = r[2], full_w = r[3];
      TORCH_CHECK(base_y >= 0 && base_x >= 0 && full_h < kMaxDim && full_w < kMaxDim &&
                      base_y + img.size(0) <= full_h && base_x + img.size(1) <= full_w,
                  "torch_dali::resized_crop_mirror_normalize: region ", i, " (y=", base_y, ", x=", base_x,
                  ", H=", full_h, ", W=", full_w, ") does not hold its ", img.size(0), "x", img.size(1), " image");
    }
    TORCH_CHECK(h > 0 && ww > 0 && y >= 0 && x >= 0 && y + h <= full_h && x + ww <= full_w,
                "torch_dali::resized_crop_mirror_normalize: window ", i, " (y=", y, ", x=", x,
                ", h=", h, ", w=", ww, ") is not inside the ", full_h, "x", full_w, " image");
    if (reg.defined()) {
      // The taps are computed in the whole image's coordinates (the same float arithmetic, so the
      // same pixels as from the whole image); every one must land in the region this image holds.
      const auto inside = [&](int64_t from, int64_t span, int64_t out, int64_t size, int64_t base,
                              int64_t held) {
        const Taps lo = make_taps(0, static_cast<int>(size), static_cast<float>(from),
                                  static_cast<float>(span), static_cast<int>(out), antialias);
        const Taps hi = make_taps(static_cast<int>(out - 1), static_cast<int>(size), static_cast<float>(from),
                                  static_cast<float>(span), static_cast<int>(out), antialias);
        const int64_t first = std::clamp<int64_t>(lo.first, 0, size - 1);
        const int64_t last = std::clamp<int64_t>(hi.first + hi.count - 1, 0, size - 1);
        return first >= base && last < base + held;
      };
      TORCH_CHECK(inside(y, h, out_h, full_h, base_y, img.size(0)) &&
                      inside(x, ww, out_w, full_w, base_x, img.size(1)),
                  "torch_dali::resized_crop_mirror_normalize: window ", i, " (y=", y, ", x=", x, ", h=", h,
                  ", w=", ww, ") reads pixels outside the ", img.size(0), "x", img.size(1), " region at (",
                  base_y, ", ", base_x, ")");
    }
    // DALI's random_resized_crop: the window is a region of interest, taps beyond it read the image
    SampleDesc& d = plan.descs[i];
    d.row_stride = img.stride(0);
    // the whole image's top-left pixel: only pixels inside the region are read (checked above)
    d.in = img.data_ptr<uint8_t>() - (base_y * img.stride(0) + base_x * plan.channels);
    d.out = nullptr;
    d.in_h = static_cast<int>(full_h);
    d.in_w = static_cast<int>(full_w);
    d.out_h = static_cast<int>(out_h);
    d.out_w = static_cast<int>(out_w);
    d.org_y = static_cast<float>(y);
    d.org_x = static_cast<float>(x);
    d.span_h = static_cast<float>(h);
    d.span_w = static_cast<float>(ww);
    d.mirror = m[i] != 0;
    d.off_y = d.off_x = 0;
    plan.keep.push_back(std::move(img));
  }
  return plan;
}

BatchPlan plan_resize_crop(const std::vector<at::Tensor>& images, const at::Tensor& resized,
                           const at::Tensor& anchors, const at::Tensor& mirror, int64_t out_h,
                           int64_t out_w, const std::optional<at::Tensor>& source) {
  const char* op = "torch_dali::resize_crop_mirror_normalize";
  check_batch(images, "resize_crop_mirror_normalize");
  TORCH_CHECK(out_h > 0 && out_w > 0 && out_h < kMaxDim && out_w < kMaxDim, op,
              ": output size must be positive, got ", out_h, "x", out_w);
  const int64_t n = static_cast<int64_t>(images.size());
  auto rs = host_long(resized, "resized");
  auto an = host_long(anchors, "anchors");
  auto mir = host_long(mirror, "mirror");
  TORCH_CHECK(rs.dim() == 2 && rs.size(0) == n && rs.size(1) == 2, op,
              ": `resized` must be [N, 2] = (h, w) with N = ", n, ", got ", rs.sizes());
  TORCH_CHECK(an.dim() == 2 && an.size(0) == n && an.size(1) == 2, op,
              ": `anchors` must be [N, 2] = (y, x) with N = ", n, ", got ", an.sizes());
  TORCH_CHECK(mir.dim() == 1 && mir.size(0) == n, op, ": `mirror` must be [N] with N = ", n,
              ", got ", mir.sizes());
  BatchPlan plan;
  plan.channels = static_cast<int>(images[0].size(2));
  plan.max_out_h = static_cast<int>(out_h);
  plan.max_out_w = static_cast<int>(out_w);
  const auto device = images[0].device();
  const int64_t* r = rs.data_ptr<int64_t>();
  const int64_t* a = an.data_ptr<int64_t>();
  const int64_t* m = mir.data_ptr<int64_t>();
  plan.keep.reserve(n);
  plan.descs.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    at::Tensor img = checked_image(images[i], i, device, plan.channels);
    const int64_t rh = r[2 * i], rw = r[2 * i + 1], y = a[2 * i], x = a[2 * i + 1];
    TORCH_CHECK(rh > 0 && rw > 0 && rh < kMaxDim && rw < kMaxDim, op, ": resized size ", i,
                " must be positive, got ", rh, "x", rw);
    // written without sums that could overflow: y + out_h <= rh
    TORCH_CHECK(y >= 0 && x >= 0 && y <= rh - out_h && x <= rw - out_w, op, ": crop ", i, " (y=", y,
                ", x=", x, ", ", out_h, "x", out_w, ") is not inside the resized ", rh, "x", rw, " image");
    SampleDesc& d = plan.descs[i];
    d.in = img.data_ptr<uint8_t>();
    d.row_stride = img.stride(0);
    d.out = nullptr;
    d.in_h = static_cast<int>(img.size(0));
    d.in_w = static_cast<int>(img.size(1));
    d.out_h = static_cast<int>(rh);
    d.out_w = static_cast<int>(rw);
    d.org_y = d.org_x = 0.f;
    d.span_h = static_cast<float>(d.in_h);
    d.span_w = static_cast<float>(d.in_w);
    d.mirror = m[i] != 0;
    d.off_y = static_cast<int>(y);
    d.off_x = static_cast<int>(x);
    plan.keep.push_back(std::move(img));
  }
  apply_source(plan, source, op);
  return plan;
}

BatchPlan plan_resize(const std::vector<at::Tensor>& images, const at::Tensor& sizes,
                      const std::optional<at::Tensor>& source) {
  check_batch(images, "resize_batch");
  const int64_t n = static_cast<int64_t>(images.size());
  auto sz = host_long(sizes, "sizes");
  TORCH_CHECK(sz.dim() == 2 && sz.size(0) == n && sz.size(1) == 2,
              "torch_dali::resize_batch: `sizes` must be [N, 2] = (h, w) with N = ", n, ", got ",
              sz.sizes());
  BatchPlan plan;
  plan.channels = static_cast<int>(images[0].size(2));
  const auto device = images[0].device();
  const int64_t* s = sz.data_ptr<int64_t>();
  plan.keep.reserve(n);
  plan.descs.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    at::Tensor img = checked_image(images[i], i, device, plan.channels);
    const int64_t h = s[2 * i], w = s[2 * i + 1];
    TORCH_CHECK(h > 0 && w > 0 && h < kMaxDim && w < kMaxDim, "torch_dali::resize_batch: size ", i,
                " must be positive, got ", h, "x", w);
    SampleDesc& d = plan.descs[i];
    d.in = img.data_ptr<uint8_t>();
    d.row_stride = img.stride(0);
    // Separate outputs (not views of one buffer): ops whose outputs alias each other are not
    // allowed by torch.library's schema/fake-tensor checks.
    plan.outs.push_back(at::empty({h, w, plan.channels}, img.options()));
    d.out = plan.outs.back().data_ptr<uint8_t>();
    d.in_h = static_cast<int>(img.size(0));
    d.in_w = static_cast<int>(img.size(1));
    d.out_h = static_cast<int>(h);
    d.out_w = static_cast<int>(w);
    d.org_y = d.org_x = 0.f;
    d.span_h = static_cast<float>(d.in_h);
    d.span_w = static_cast<float>(d.in_w);
    d.mirror = 0;
    d.off_y = d.off_x = 0;
    plan.max_out_h = std::max(plan.max_out_h, d.out_h);
    plan.max_out_w = std::max(plan.max_out_w, d.out_w);
    plan.keep.push_back(std::move(img));
  }
  apply_source(plan, source, "torch_dali::resize_batch");
  return plan;
}

NormParams make_norm(const at::Tensor& mean, const at::Tensor& std, int channels) {
  NormParams p;
  auto load = [&](const at::Tensor& t, const char* name, float* dst) {
    TORCH_CHECK(t.defined() && t.dim() <= 1 && (t.numel() == channels || t.numel() == 1),
                "torch_dali::resized_crop_mirror_normalize: `", name, "` must have 1 or ", channels,
                " elements, got shape ", t.sizes());
    auto h = t.to(at::kCPU).to(at::kFloat).contiguous().reshape({-1});
    for (int c = 0; c < 4; ++c) dst[c] = h.data_ptr<float>()[c < h.numel() ? c : 0];
  };
  load(mean, "mean", p.mean);
  float sd[4];
  load(std, "std", sd);
  for (int c = 0; c < 4; ++c) {
    TORCH_CHECK(sd[c] != 0.f, "torch_dali::resized_crop_mirror_normalize: `std` must be non-zero");
    p.inv_std[c] = 1.f / sd[c];
  }
  return p;
}

void check_out_dtype(at::ScalarType dtype) {
  TORCH_CHECK(dtype == at::kFloat || dtype == at::kHalf || dtype == at::kBFloat16 || dtype == at::kByte,
              "torch_dali::resized_crop_mirror_normalize: `dtype` must be float32, float16, bfloat16 "
              "or uint8, got ", dtype);
}

void check_interp(int64_t interp) {
  TORCH_CHECK(interp == kNearest || interp == kLinear || interp == kNearestExact,
              "torch_dali::resize_batch: `interp` must be 0 (nearest), 1 (linear) or 2 "
              "(nearest-exact), got ", interp);
}

at::Tensor upload_descs(const std::vector<SampleDesc>& descs, const at::Device& device) {
  const int64_t bytes = static_cast<int64_t>(descs.size() * sizeof(SampleDesc));
  auto host = at::empty({bytes}, at::TensorOptions().dtype(at::kByte).pinned_memory(device.is_cuda()));
  std::memcpy(host.data_ptr(), descs.data(), bytes);
  if (!device.is_cuda()) return host;
  // The caching host allocator keeps the pinned block until this copy has run.
  return host.to(device, /*non_blocking=*/true);
}

}  // namespace torch_dali

TORCH_LIBRARY(torch_dali, m) {
  m.def("resized_crop_mirror_normalize(Tensor[] images, Tensor windows, Tensor mirror, Tensor mean, "
        "Tensor std, int out_h, int out_w, bool antialias, ScalarType dtype, bool nchw, Tensor? regions=None) -> Tensor");
  m.def("resize_batch(Tensor[] images, Tensor sizes, bool antialias, int interp, Tensor? source=None) -> Tensor[]");
  m.def("resize_crop_mirror_normalize(Tensor[] images, Tensor resized, Tensor anchors, Tensor mirror, "
        "Tensor mean, Tensor std, int out_h, int out_w, int interp, bool antialias, bool round_resized, "
        "ScalarType dtype, bool nchw, Tensor? source=None) -> Tensor");
}

TORCH_LIBRARY_IMPL(torch_dali, CPU, m) {
  m.impl("resized_crop_mirror_normalize", &torch_dali::rcmn_cpu);
  m.impl("resize_batch", &torch_dali::resize_batch_cpu);
  m.impl("resize_crop_mirror_normalize", &torch_dali::rscmn_cpu);
}
