// Python module of the torch_dali extension. The image ops register themselves with
// TORCH_LIBRARY (torch.ops.torch_dali.*); this module adds the nvJPEG decoder class.
#include <torch/extension.h>

#ifdef TORCH_DALI_WITH_NVJPEG
#include "include/nvjpeg_decoder.h"
#endif

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "torch_dali CUDA extension: nvJPEG batched decoder and fused image kernels";
#ifdef TORCH_DALI_WITH_NVJPEG
  m.attr("has_nvjpeg") = true;
  namespace py = pybind11;
  using torch_dali::NvJpegDecoder;
  py::class_<NvJpegDecoder>(m, "NvJpegDecoder",
                            "Batched JPEG decoder: hardware engines for `hw_load` of the supported images, "
                            "hybrid CUDA decode for the rest. Outputs are CUDA uint8 HWC tensors ready on the "
                            "caller's current stream; non-JPEG or unsupported inputs give None.")
      .def(py::init<int64_t, int64_t, int64_t, double, int64_t, int64_t>(), py::arg("device_index") = -1,
           py::arg("num_hw_states") = 1, py::arg("num_cuda_states") = 2, py::arg("hw_load") = 1.0,
           py::arg("hybrid_huffman_threshold") = 1000 * 1000, py::arg("num_slots") = 1)
      .def("decode", &NvJpegDecoder::decode, py::arg("data"), py::arg("output_format") = "rgb",
           py::call_guard<py::gil_scoped_release>(),
           "decode(list of 1-D uint8 CPU tensors, 'rgb'|'bgr'|'gray') -> list of CUDA HWC uint8 tensors or None")
      .def_property_readonly("hardware_available", &NvJpegDecoder::hardware_available)
      .def_property_readonly("hardware_status", &NvJpegDecoder::hardware_status)
      .def_property_readonly("device_index", &NvJpegDecoder::device_index)
      .def_property_readonly("num_hw_states", &NvJpegDecoder::num_hw_states)
      .def_property_readonly("num_cuda_states", &NvJpegDecoder::num_cuda_states)
      .def_property_readonly("num_slots", &NvJpegDecoder::num_slots)
      .def_property_readonly("hw_load", &NvJpegDecoder::hw_load)
      .def_property_readonly("last_stats",  // waits for a decode in flight: not with the GIL held
                             py::cpp_function(&NvJpegDecoder::last_stats, py::call_guard<py::gil_scoped_release>()),
                             "dict: images of the last decode() per path (hardware, hybrid, "
                             "hardware_retried, not_decoded)");
#else
  m.attr("has_nvjpeg") = false;
#endif
}
