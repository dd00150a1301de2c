// Python module of the torch_dali extension. The image ops register themselves with
// TORCH_LIBRARY (torch.ops.torch_dali.*); this module adds the nvJPEG decoder class.
#include <torch/extension.h>

#include <optional>
#include <vector>

#include "include/image_ops.h"
#include "include/stream_queues.h"

#ifdef TORCH_DALI_WITH_NVJPEG
#include "include/nvjpeg_decoder.h"
#endif

namespace {

// Views img[y:y+h, x:x+w] of HWC images for (n, 4) int64 windows (y, x, h, w); None stays None.
// One call per batch instead of two Python slicing calls per sample.
std::vector<std::optional<at::Tensor>> crop_views(const std::vector<std::optional<at::Tensor>>& images,
                                                  const at::Tensor& windows) {
  TORCH_CHECK(windows.dim() == 2 && windows.size(1) == 4 &&
                  windows.size(0) == static_cast<int64_t>(images.size()),
              "crop_views: `windows` must be [N, 4] with N = ", images.size());
  const at::Tensor w = windows.to(at::kCPU).to(at::kLong).contiguous();
  const int64_t* p = w.data_ptr<int64_t>();
  std::vector<std::optional<at::Tensor>> out(images.size());
  for (size_t i = 0; i < images.size(); ++i) {
    if (!images[i].has_value()) continue;
    const at::Tensor& img = *images[i];
    TORCH_CHECK(img.dim() >= 2, "crop_views: image ", i, " must have at least 2 dimensions");
    const int64_t y = p[4 * i], x = p[4 * i + 1], h = p[4 * i + 2], ww = p[4 * i + 3];
    TORCH_CHECK(y >= 0 && x >= 0 && h >= 0 && ww >= 0 && y <= img.size(0) - h && x <= img.size(1) - ww,
                "crop_views: window ", i, " (", y, ", ", x, ", ", h, ", ", ww, ") is not inside the ",
                img.size(0), "x", img.size(1), " image");
    out[i] = img.slice(0, y, y + h).slice(1, x, x + ww);
  }
  return out;
}

// (n, 2) int64 (size(0), size(1)) of each sample: one call per batch instead of a Python shape
// lookup per sample.
at::Tensor sample_sizes(const std::vector<at::Tensor>& samples) {
  auto out = at::empty({static_cast<int64_t>(samples.size()), 2}, at::kLong);
  int64_t* p = out.data_ptr<int64_t>();
  for (size_t i = 0; i < samples.size(); ++i) {
    TORCH_CHECK(samples[i].dim() >= 2, "sample_sizes: sample ", i, " has fewer than 2 dimensions");
    p[2 * i] = samples[i].size(0);
    p[2 * i + 1] = samples[i].size(1);
  }
  return out;
}

// C if every sample is a 3-D uint8 tensor with C in {1, 3, 4} channels on the first sample's
// device, which is a CUDA device; else 0. What the batched kernels take, checked in one call.
int64_t cuda_image_channels(const std::vector<at::Tensor>& samples) {
  if (samples.empty() || !samples[0].is_cuda()) return 0;
  const auto device = samples[0].device();
  const int64_t c = samples[0].dim() == 3 ? samples[0].size(2) : 0;
  if (c != 1 && c != 3 && c != 4) return 0;
  for (const auto& t : samples)
    if (t.dim() != 3 || t.scalar_type() != at::kByte || t.device() != device || t.size(2) != c) return 0;
  return c;
}

}  // namespace

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "torch_dali CUDA extension: nvJPEG batched decoder and fused image kernels";
  // the batch helpers work without the GIL (argument and result conversion still hold it)
  using release = pybind11::call_guard<pybind11::gil_scoped_release>;
  m.def("cuda_image_channels", &cuda_image_channels, pybind11::arg("samples"), release(),
        "cuda_image_channels(list of tensors) -> C when all are CUDA uint8 HWC with C in {1, 3, 4} "
        "on one device, else 0");
  m.def("sample_sizes", &sample_sizes, pybind11::arg("samples"), release(),
        "sample_sizes(list of tensors) -> int64 [N, 2]: each sample's first two sizes");
  m.def("crop_views", &crop_views, pybind11::arg("images"), pybind11::arg("windows"), release(),
        "crop_views(list of HWC tensors or None, int64 [N, 4] (y, x, h, w)) -> the windows as views");
  m.def("set_fused_tap_tables", &torch_dali::set_fused_tap_tables, pybind11::arg("on"),
        "set_fused_tap_tables(bool): the linear fused resize kernels share each block's taps (True, "
        "default) or work them out per pixel (the earlier kernel; for benches and the agreement test)");
  // streams as the integers torch's Stream.cuda_stream gives (0: the legacy default stream)
  auto as_stream = [](int64_t h) { return reinterpret_cast<cudaStream_t>(static_cast<intptr_t>(h)); };
  m.def("streams_share_queue",
        [as_stream](int64_t a, int64_t b, int64_t wait_us) {
          return torch_dali::streams_share_queue(as_stream(a), as_stream(b), wait_us);
        },
        pybind11::arg("a"), pybind11::arg("b"), pybind11::arg("wait_us") = 2000, release(),
        "streams_share_queue(a, b, wait_us=2000) -> True when work queued on stream a holds back stream b "
        "(one of the driver's hardware queues holds both)");
  m.def("avoid_queue_of", [as_stream](int64_t s) { torch_dali::avoid_queue_of(as_stream(s)); },
        pybind11::arg("stream"),
        "avoid_queue_of(stream): the decoder's streams made from now on keep out of this stream's hardware queue");
  m.def("avoided_streams", [] {
    std::vector<int64_t> out;
    for (cudaStream_t s : torch_dali::avoided_streams()) out.push_back(static_cast<int64_t>(reinterpret_cast<intptr_t>(s)));
    return out;
  });
#ifdef TORCH_DALI_WITH_NVJPEG
  m.attr("has_nvjpeg") = true;
  namespace py = pybind11;
  using torch_dali::NvJpegDecoder;
  py::class_<NvJpegDecoder>(m, "NvJpegDecoder",
                            "Batched JPEG decoder: hardware engines for `hw_load` of the supported images, "
                            "hybrid CUDA decode for the rest. Outputs are CUDA uint8 HWC tensors ready on the "
                            "caller's current stream; non-JPEG or unsupported inputs give None.")
      // made without the GIL: a build-time warm-up thread makes it while the pipeline starts
      // defaults: torch_dali/_knobs.py's (tests/test_knobs.py checks they agree); Python passes all
      .def(py::init<int64_t, int64_t, int64_t, double, int64_t, int64_t, bool, bool, bool, int64_t, int64_t, int64_t,
                    int64_t, int64_t, bool, bool, bool, bool>(),
           py::call_guard<py::gil_scoped_release>(), py::arg("device_index") = -1,
           py::arg("num_hw_states") = 1, py::arg("num_cuda_states") = 8, py::arg("hw_load") = 0.9,
           py::arg("hybrid_huffman_threshold") = 1000000, py::arg("num_slots") = 2,
           py::arg("hw_concurrent") = false, py::arg("blocking_sync") = false,
           py::arg("adaptive") = false, py::arg("arena") = 3, py::arg("device_padding") = 2097152,
           py::arg("lazy_cuda") = 3, py::arg("preallocate") = 2,
           py::arg("stream_priority") = 0, py::arg("share_hw_handle") = false, py::arg("pinned_input") = false,
           py::arg("hw_state_sync") = true, py::arg("host_waits") = true)
      .def("decode", &NvJpegDecoder::decode, py::arg("data"), py::arg("output_format") = "rgb",
           py::arg("rois") = std::nullopt, py::arg("first_batch") = false, py::call_guard<py::gil_scoped_release>(),
           "decode(list of 1-D uint8 CPU tensors, 'rgb'|'bgr'|'gray', rois=None | (n, 4) int64 (y, x, h, w)) "
           "-> list of CUDA HWC uint8 tensors (each window's pixels where a window is given) or None")
      .def("decode_packed", &NvJpegDecoder::decode_packed, py::arg("buffer"), py::arg("offsets"), py::arg("sizes"),
           py::arg("output_format") = "rgb", py::arg("rois") = std::nullopt, py::arg("first_batch") = false,
           py::call_guard<py::gil_scoped_release>(),
           "decode_packed(1-D uint8 CPU buffer, int64 offsets, int64 sizes, ...): decode() of the samples "
           "buffer[offsets[i]:offsets[i] + sizes[i]]")
      .def_property_readonly("hardware_available", &NvJpegDecoder::hardware_available)
      .def_property_readonly("hardware_status", &NvJpegDecoder::hardware_status)
      .def_property_readonly("device_index", &NvJpegDecoder::device_index)
      .def_property_readonly("num_hw_states", &NvJpegDecoder::num_hw_states)
      .def_property_readonly("num_cuda_states", &NvJpegDecoder::num_cuda_states)
      .def_property_readonly("num_slots", &NvJpegDecoder::num_slots)
      .def_property_readonly("hw_load", &NvJpegDecoder::hw_load)
      .def_property_readonly("hw_concurrent", &NvJpegDecoder::hw_concurrent)
      .def_property_readonly("share_hw_handle", &NvJpegDecoder::share_hw_handle)
      .def_property_readonly("pinned_input", &NvJpegDecoder::pinned_input)
      .def_property_readonly("hw_state_sync", &NvJpegDecoder::hw_state_sync)
      .def_property_readonly("host_waits", &NvJpegDecoder::host_waits)
      .def_property_readonly("hw_share", &NvJpegDecoder::hw_share,
                             "the hardware share now (hw_load, moved batch by batch when adaptive)")
      .def_property_readonly("adaptive", &NvJpegDecoder::adaptive)
      .def_property_readonly("arena", &NvJpegDecoder::arena)
      .def_property_readonly("blocking_sync", &NvJpegDecoder::blocking_sync)
      .def_property_readonly("cuda_ready", &NvJpegDecoder::cuda_ready)
      .def_property_readonly("lazy_cuda", &NvJpegDecoder::lazy_cuda)
      .def_property_readonly("preallocate", &NvJpegDecoder::preallocate)
      .def("activity", &NvJpegDecoder::activity,
           "dict: place -> (threads there, seconds since the latest came), for the places a thread of this "
           "decoder is in now (lock-free: answers while a decode() is stuck)")
      .def_property_readonly("build_stats", &NvJpegDecoder::build_stats,
                             "dict: host microseconds of construction (handles, first slot, other slots)")
      .def_property_readonly("last_stats",  // waits for a decode in flight: not with the GIL held
                             py::cpp_function(&NvJpegDecoder::last_stats, py::call_guard<py::gil_scoped_release>()),
                             "dict: images of the last decode() per path (hardware, hybrid, "
                             "hardware_retried, not_decoded)");
#else
  m.attr("has_nvjpeg") = false;
#endif
}
