// nvJPEG batched decoder: see include/nvjpeg_decoder.h for the split between backends.
// decode() runs in three phases on the worker threads: (1) parse headers, (2) decode on the
// hardware and hybrid states in parallel, (3) re-decode any hardware batch that failed on the
// hybrid path, which also pins a corrupt image to its index. The caller's stream then waits on
// each used state's event: the host never waits for the GPU in steady state.
#include "include/nvjpeg_decoder.h"
#include "include/stream_queues.h"

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <numeric>
#include <pthread.h>
#include <string>
#include <unordered_map>

namespace torch_dali {
namespace {

const char* status_name(nvjpegStatus_t s) {
  switch (s) {
    case NVJPEG_STATUS_SUCCESS: return "SUCCESS";
    case NVJPEG_STATUS_NOT_INITIALIZED: return "NOT_INITIALIZED";
    case NVJPEG_STATUS_INVALID_PARAMETER: return "INVALID_PARAMETER";
    case NVJPEG_STATUS_BAD_JPEG: return "BAD_JPEG";
    case NVJPEG_STATUS_JPEG_NOT_SUPPORTED: return "JPEG_NOT_SUPPORTED";
    case NVJPEG_STATUS_ALLOCATOR_FAILURE: return "ALLOCATOR_FAILURE";
    case NVJPEG_STATUS_EXECUTION_FAILED: return "EXECUTION_FAILED";
    case NVJPEG_STATUS_ARCH_MISMATCH: return "ARCH_MISMATCH";
    case NVJPEG_STATUS_INTERNAL_ERROR: return "INTERNAL_ERROR";
    case NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED: return "IMPLEMENTATION_NOT_SUPPORTED";
    case NVJPEG_STATUS_INCOMPLETE_BITSTREAM: return "INCOMPLETE_BITSTREAM";
    default: return "UNKNOWN_STATUS";
  }
}

// The frame header of a baseline JPEG, read here: nvjpegGetImageInfo serialises on its handle
// (~3 ms for 256 images however many threads ask). ok: SOF0, 8-bit, 3 components in 4:4:4, 4:2:2
// or 4:2:0 (what the hardware engines take); anything else goes through nvJPEG's own parsing and
// support check.
struct Frame {
  bool ok = false;
  int width = 0, height = 0, comps = 0;
  nvjpegChromaSubsampling_t css = NVJPEG_CSS_UNKNOWN;
};

Frame baseline_frame(const uint8_t* d, size_t n) {
  Frame f;
  size_t pos = 2;
  while (pos + 4 <= n) {
    if (d[pos] != 0xFF) return f;
    const uint8_t m = d[pos + 1];
    if (m == 0xFF) { ++pos; continue; }
    if (m == 0x01 || m == 0xD8 || (m >= 0xD0 && m <= 0xD7)) { pos += 2; continue; }
    const size_t len = (static_cast<size_t>(d[pos + 2]) << 8) | d[pos + 3];
    if (m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC) {
      if (m != 0xC0 || pos + 2 + len > n || len < 8) return f;  // SOF0: baseline only
      const uint8_t* b = d + pos + 4;
      const int comps = b[5];
      if (b[0] != 8 || comps != 3 || len < 8u + 3u * comps) return f;  // gray: nvJPEG's own check
      f.height = (b[1] << 8) | b[2];
      f.width = (b[3] << 8) | b[4];
      f.comps = comps;
      if (f.width <= 0 || f.height <= 0) return f;
      const int h0 = b[7] >> 4, v0 = b[7] & 15, h1 = b[10] >> 4, v1 = b[10] & 15, h2 = b[13] >> 4,
                v2 = b[13] & 15;
      if (h1 != 1 || v1 != 1 || h2 != 1 || v2 != 1) return f;
      if (h0 == 1 && v0 == 1) f.css = NVJPEG_CSS_444;
      else if (h0 == 2 && v0 == 1) f.css = NVJPEG_CSS_422;
      else if (h0 == 2 && v0 == 2) f.css = NVJPEG_CSS_420;
      else return f;
      f.ok = true;
      return f;
    }
    if (m == 0xDA || m == 0xD9) return f;
    pos += 2 + len;
  }
  return f;
}

bool is_unsupported(nvjpegStatus_t s) {
  return s == NVJPEG_STATUS_JPEG_NOT_SUPPORTED || s == NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED;
}

#define TD_NVJPEG(expr, what)                                                                   \
  do {                                                                                          \
    const nvjpegStatus_t s_ = (expr);                                                           \
    TORCH_CHECK(s_ == NVJPEG_STATUS_SUCCESS, "NvJpegDecoder: ", what, " failed: ", status_name(s_)); \
  } while (0)

#define TD_CUDA(expr, what)                                                                     \
  do {                                                                                          \
    const cudaError_t e_ = (expr);                                                              \
    TORCH_CHECK(e_ == cudaSuccess, "NvJpegDecoder: ", what, " failed: ", cudaGetErrorString(e_)); \
  } while (0)

// nvJPEG scratch memory comes from torch's caching allocator, stream-ordered: growing a buffer
// never calls cudaMalloc/cudaFree (which synchronise the device).
int torch_dev_malloc(void*, void** ptr, size_t size, cudaStream_t stream) {
  try {
    *ptr = c10::cuda::CUDACachingAllocator::raw_alloc_with_stream(size, stream);
    return 0;
  } catch (...) {
    return 1;
  }
}
int torch_dev_free(void*, void* ptr, size_t, cudaStream_t) {
  try {
    c10::cuda::CUDACachingAllocator::raw_delete(ptr);
    return 0;
  } catch (...) {
    return 1;
  }
}
int pinned_malloc(void*, void** ptr, size_t size, cudaStream_t) {
  return cudaHostAlloc(ptr, size, cudaHostAllocDefault) == cudaSuccess ? 0 : 1;
}
int pinned_free(void*, void* ptr, size_t, cudaStream_t) { return cudaFreeHost(ptr) == cudaSuccess ? 0 : 1; }

nvjpegDevAllocatorV2_t g_dev_alloc{torch_dev_malloc, torch_dev_free, nullptr};
nvjpegPinnedAllocatorV2_t g_pinned_alloc{pinned_malloc, pinned_free, nullptr};

}  // namespace

// Scratch for every state of one decoder, allocated on one stream where no work runs. Allocated on
// each state's own stream, torch's cache kept a 20 MiB segment per stream for ~2 MiB of use (27
// states: ~0.5 GiB). Each block records the stream nVJPEG named, so it is not handed out again
// before that stream's work on it has run.
struct NvJpegDecoder::Scratch {
  cudaStream_t stream = nullptr;
  int device = 0;
  std::mutex mu;
  std::unordered_map<void*, c10::DataPtr> live;
  nvjpegDevAllocatorV2_t alloc{&Scratch::malloc_cb, &Scratch::free_cb, this};

  static int malloc_cb(void* ctx, void** ptr, size_t size, cudaStream_t stream) {
    auto* self = static_cast<Scratch*>(ctx);
    try {
      const auto dev = static_cast<c10::DeviceIndex>(self->device);
      c10::DataPtr block;
      {
        c10::cuda::CUDAStreamGuard on(c10::cuda::getStreamFromExternal(self->stream, dev));
        block = c10::cuda::CUDACachingAllocator::get()->allocate(size);
      }
      *ptr = block.get();
      if (*ptr == nullptr) return size == 0 ? 0 : 1;
      c10::cuda::CUDACachingAllocator::recordStream(block, c10::cuda::getStreamFromExternal(stream, dev));
      std::lock_guard<std::mutex> g(self->mu);
      self->live.emplace(*ptr, std::move(block));
      return 0;
    } catch (...) {
      return 1;
    }
  }
  static int free_cb(void* ctx, void* ptr, size_t, cudaStream_t) {
    auto* self = static_cast<Scratch*>(ctx);
    c10::DataPtr block;  // freed (to torch's cache) outside the lock
    std::lock_guard<std::mutex> g(self->mu);
    auto it = self->live.find(ptr);
    if (it == self->live.end()) return ptr == nullptr ? 0 : 1;
    block = std::move(it->second);
    self->live.erase(it);
    return 0;
  }
};

namespace {

nvjpegStatus_t create_handle(nvjpegBackend_t backend, nvjpegHandle_t* handle,
                             nvjpegDevAllocatorV2_t* dev_alloc = &g_dev_alloc) {
  // Interpolated chroma upsampling (closer to libjpeg-turbo / PIL) where the library has it.
  const unsigned flag_sets[2] = {NVJPEG_FLAGS_UPSAMPLING_WITH_INTERPOLATION, NVJPEG_FLAGS_DEFAULT};
  nvjpegStatus_t s = NVJPEG_STATUS_NOT_INITIALIZED;
  for (unsigned flags : flag_sets) {
    s = nvjpegCreateExV2(backend, dev_alloc, &g_pinned_alloc, flags, handle);
    if (s == NVJPEG_STATUS_SUCCESS) return s;
    *handle = nullptr;  // older libraries: default allocators
    s = nvjpegCreateEx(backend, nullptr, nullptr, flags, handle);
    if (s == NVJPEG_STATUS_SUCCESS) return s;
    *handle = nullptr;
  }
  return s;
}

constexpr size_t kPinnedPadding = 8 << 20;

// Greedy largest-first split of jobs over `parts` lists, balancing encoded bytes.
template <typename JobPtr>
std::vector<std::vector<JobPtr>> balance(std::vector<JobPtr> jobs, size_t parts) {
  std::vector<std::vector<JobPtr>> out(parts);
  std::vector<size_t> load(parts, 0);
  std::sort(jobs.begin(), jobs.end(), [](JobPtr a, JobPtr b) { return a->size > b->size; });
  for (JobPtr j : jobs) {
    const size_t k = std::min_element(load.begin(), load.end()) - load.begin();
    out[k].push_back(j);
    load[k] += j->size;
  }
  return out;
}

int64_t steady_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

struct NvJpegDecoder::At {
  NvJpegDecoder& d;
  Place p;
  At(NvJpegDecoder& dec, Place place) : d(dec), p(place) {
    d.at_since_us_[p].store(steady_us(), std::memory_order_relaxed);
    d.at_count_[p].fetch_add(1, std::memory_order_relaxed);
  }
  ~At() { d.at_count_[p].fetch_sub(1, std::memory_order_relaxed); }
};

std::map<std::string, std::pair<int64_t, double>> NvJpegDecoder::activity() const {
  static const char* const names[kNumPlaces] = {
      "waiting for the hardware side to be made", "waiting for a free slot", "reading headers",
      "allocating outputs", "waiting for the hardware lock", "in nvJPEG's hardware batch decode",
      "decoding on the CUDA backend", "waiting for a pinned buffer's upload",
      "waiting for the hardware state's previous batch", "re-decoding a rejected hardware batch",
      "making the hardware side", "preallocating the hardware pools", "making a slot",
      "waiting for the CUDA backend to be made"};
  std::map<std::string, std::pair<int64_t, double>> out;
  const int64_t now = steady_us();
  for (int k = 0; k < kNumPlaces; ++k) {
    const int64_t n = at_count_[k].load(std::memory_order_relaxed);
    if (n > 0) out[names[k]] = {n, 1e-6 * static_cast<double>(now - at_since_us_[k].load(std::memory_order_relaxed))};
  }
  return out;
}

struct NvJpegDecoder::HwState {
  nvjpegHandle_t handle = nullptr;  // own handle: states sharing one handle stalled each other
  bool owns_handle = true;          // the first slot's first state decodes with the decoder's hw_handle_
  nvjpegJpegState_t state = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t done = nullptr;
  int batch = -1;  // batch size / format the state was initialised for
  nvjpegOutputFormat_t fmt = NVJPEG_OUTPUT_UNCHANGED;
  bool used = false;
  bool failed = false;
  bool recorded = false;  // `done` marks a batch this state was given
  std::vector<Job*> jobs;
  std::vector<nvjpegDecodeParams_t> params;  // per image of a batch with windows (grown on use)
  // pinned_input_: two pinned copies of a batch's bitstreams, used in turn; one is rewritten only
  // once the decode that read it has passed its event
  uint8_t* host[2] = {nullptr, nullptr};
  size_t host_cap[2] = {0, 0};
  cudaEvent_t host_free[2] = {nullptr, nullptr};
  int host_turn = 0;
};

struct NvJpegDecoder::CudaState {
  cudaStream_t stream = nullptr;
  cudaEvent_t done = nullptr;
  nvjpegJpegState_t st_hybrid = nullptr;  // CPU Huffman decode
  nvjpegJpegState_t st_gpu = nullptr;     // GPU Huffman decode, for large images
  nvjpegBufferPinned_t pinned[2] = {nullptr, nullptr};  // double-buffered host stage
  cudaEvent_t pinned_free[2] = {nullptr, nullptr};
  nvjpegJpegStream_t jstream[2] = {nullptr, nullptr};
  nvjpegBufferDevice_t device_buf = nullptr;
  nvjpegDecodeParams_t params = nullptr;
  bool used = false;
};

// One independent set of states with their threads: a decode() holds one slot throughout.
struct NvJpegDecoder::Slot {
  std::mutex mu;
  std::vector<std::unique_ptr<HwState>> hw;
  std::vector<std::unique_ptr<CudaState>> cu;
  std::vector<nvjpegJpegStream_t> parse_streams;  // one per worker thread, for header parsing
  std::unique_ptr<WorkerPool> pool;
  cudaEvent_t arena_ready = nullptr;  // the batch's output arena is allocated (caller's stream)
};

struct NvJpegDecoder::Job {
  const uint8_t* data = nullptr;
  size_t size = 0;
  int width = 0, height = 0;
  int roi_x = 0, roi_y = 0, roi_w = -1, roi_h = -1;  // the window asked for (w < 0: the whole image)
  bool whole = true;        // `out` holds the whole image (a window is then a view of it)
  cudaStream_t caller = nullptr;  // the stream that reads `out`
  bool decodable = false;   // a JPEG nvJPEG accepts (else: None, CPU fallback)
  bool hw_ok = false;       // the hardware batched decoder supports it
  bool unsupported = false; // rejected while decoding: None, CPU fallback
  std::string error;        // corrupt data
  at::Tensor out;
  nvjpegImage_t dest{};
};

NvJpegDecoder::NvJpegDecoder(int64_t device_index, int64_t num_hw_states, int64_t num_cuda_states,
                             double hw_load, int64_t hybrid_huffman_threshold, int64_t num_slots,
                             bool hw_concurrent, bool blocking_sync, bool adaptive, int64_t arena,
                             int64_t device_padding, int64_t lazy_cuda, int64_t preallocate,
                             int64_t stream_priority, bool share_hw_handle, bool pinned_input,
                             bool hw_state_sync, bool host_waits)
    : device_(static_cast<int>(device_index < 0 ? c10::cuda::current_device() : device_index)),
      hw_load_(hw_load),
      adaptive_(adaptive && hw_load > 0.0 && hw_load < 1.0),
      arena_(arena),
      hybrid_threshold_(hybrid_huffman_threshold),
      hw_concurrent_(hw_concurrent),
      share_hw_handle_(share_hw_handle && !hw_concurrent),
      pinned_input_(pinned_input),
      hw_state_sync_(hw_state_sync),
      host_waits_(host_waits),
      blocking_sync_(blocking_sync) {
  share_.store(hw_load);
  TORCH_CHECK(device_ < c10::cuda::device_count(), "NvJpegDecoder: device_index ", device_index,
              " out of range (", static_cast<int>(c10::cuda::device_count()), " CUDA devices)");
  TORCH_CHECK(num_hw_states >= 0 && num_hw_states <= 64, "NvJpegDecoder: num_hw_states must be in [0, 64], got ",
              num_hw_states);
  TORCH_CHECK(num_cuda_states >= 1 && num_cuda_states <= 64,
              "NvJpegDecoder: num_cuda_states must be in [1, 64], got ", num_cuda_states);
  TORCH_CHECK(hw_load >= 0.0 && hw_load <= 1.0, "NvJpegDecoder: hw_load must be in [0, 1], got ", hw_load);
  TORCH_CHECK(arena >= 0 && arena <= 3, "NvJpegDecoder: arena must be 0, 1, 2 or 3, got ", arena);
  TORCH_CHECK(num_slots >= 1 && num_slots <= 8, "NvJpegDecoder: num_slots must be in [1, 8], got ", num_slots);
  TORCH_CHECK(device_padding >= 0 && device_padding <= (int64_t{1} << 30),
              "NvJpegDecoder: device_padding must be in [0, 1 GiB], got ", device_padding);
  TORCH_CHECK(lazy_cuda >= 0 && lazy_cuda <= 3, "NvJpegDecoder: lazy_cuda must be 0, 1, 2 or 3, got ", lazy_cuda);
  TORCH_CHECK(preallocate >= 0 && preallocate <= 2, "NvJpegDecoder: preallocate must be 0, 1 or 2, got ",
              preallocate);
  device_padding_ = static_cast<size_t>(device_padding);
  preallocate_ = preallocate;
  stream_priority_ = static_cast<int>(std::clamp<int64_t>(stream_priority, -64, 64));
  c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device_));
  using clock = std::chrono::steady_clock;
  auto lap = [t = clock::now(), this](const char* what) mutable {  // construction time per part (µs)
    const auto now = clock::now();
    std::lock_guard<std::mutex> g(stats_mu_);
    build_us_[what] = std::chrono::duration_cast<std::chrono::microseconds>(now - t).count();
    t = now;
  };
  try {
    if (arena_ == 1 || arena_ == 3) {
      TD_CUDA(new_stream(&arena_stream_), "cudaStreamCreate");
      if (arena_ == 3)  // scratch of its own sizes in a cache of its own, away from the chunks
        TD_CUDA(new_stream(&scratch_stream_), "cudaStreamCreate");
      scratch_ = std::make_unique<Scratch>();
      scratch_->stream = arena_ == 3 ? scratch_stream_ : arena_stream_;
      scratch_->device = device_;
    }
    auto make_hw_handle = [this]() { return new_hw_handle(&hw_handle_); };
    nvjpegStatus_t hw_s = NVJPEG_STATUS_SUCCESS;
    const bool lazy = lazy_cuda > 0 && num_hw_states > 0 && hw_load > 0.0;
    lazy_hw_ = lazy && lazy_cuda == 3;
    if (lazy_hw_) {
      // Only the CUDA backend before the first batch; the hardware side follows on the filler
      make_default_handle();
      lap("default_handle_us");
    } else if (lazy) {
      // Only the hardware side before the first batch; the CUDA backend follows on the filler
      hw_s = make_hw_handle();
      lap("hw_handle_us");
      if (hw_s == NVJPEG_STATUS_SUCCESS) {
        lazy_cuda_ = lazy_cuda;
      } else {
        make_default_handle();  // no engines: the CUDA backend decodes everything, made now
        lap("default_handle_us");
      }
    } else {
      // The hardware handle is made on a thread of its own while this one makes the default
      // handle (~0.27 s each on an H200, both before the first batch can decode)
      std::string hw_err;
      std::thread hw_maker;
      if (num_hw_states > 0) {
        hw_maker = std::thread([this, &hw_s, &hw_err, &make_hw_handle] {
          try {
            c10::cuda::CUDAGuard g(static_cast<c10::DeviceIndex>(device_));
            hw_s = make_hw_handle();
          } catch (const std::exception& e) {
            hw_err = e.what();
          }
        });
      }
      try {
        make_default_handle();
      } catch (...) {
        if (hw_maker.joinable()) hw_maker.join();
        throw;
      }
      lap("default_handle_us");
      if (hw_maker.joinable()) hw_maker.join();
      TORCH_CHECK(hw_err.empty(), "NvJpegDecoder: ", hw_err);
      lap("hw_handle_us");
    }
    if (lazy_hw_) {
      hw_status_ = "being made";
    } else if (num_hw_states == 0) {
      hw_status_ = "disabled (num_hw_states=0)";
    } else if (hw_s != NVJPEG_STATUS_SUCCESS) {
      hw_handle_ = nullptr;
      hw_status_ = std::string("unavailable (nvjpegCreateEx(HARDWARE): ") + status_name(hw_s) + ")";
    } else {
      hw_status_ = "ok";
    }
    const int64_t hw_states = hw_handle_ ? num_hw_states : 0;
    slots_[0] = make_slot(hw_states, num_cuda_states, /*first=*/true, /*with_cuda=*/lazy_cuda_ == 0,
                          /*reserve_hw=*/lazy_hw_ ? num_hw_states : 0);
    if (lazy_cuda_ == 0) cuda_ready_.store(true, std::memory_order_release);
    ready_slots_.store(1, std::memory_order_release);
    lap("first_slot_us");
    if (num_slots > 1 || lazy_cuda_ > 0 || lazy_hw_ || (preallocate_ == 2 && hw_states > 0)) {
      // What the first batch does not need is made on this thread. The CUDA backend (lazy_cuda 1:
      // now; 2: after the first batch) is published to decode() calls without any slot's lock
      // (a decode() may hold one while it waits for it). The other slots are made once the first
      // batch has decoded: making a slot's hardware state holds the hardware lock (~0.2 s each),
      // which the first batch would wait for. A slot that cannot be made leaves the decoder with
      // fewer (decode() takes whichever are ready).
      filler_ = std::thread([this, hw_states_now = hw_states, num_hw_states, num_cuda_states, num_slots] {
        c10::cuda::CUDAGuard g(static_cast<c10::DeviceIndex>(device_));
        if (lazy_hw_) make_hw_side(num_hw_states);  // at once: every batch after the first waits for it
        const int64_t hw_states = lazy_hw_ ? (hw_handle_ ? num_hw_states : 0) : hw_states_now;
        if (lazy_cuda_ == 1) make_cuda_side(num_cuda_states);
        if (lazy_cuda_ == 2) {  // after the first batch, or as soon as a decode() waits for it
          {
            std::unique_lock<std::mutex> l(fill_mu_);
            fill_cv_.wait(l, [this] { return first_decoded_ || cuda_wanted_ || stopping_.load(); });
          }
          if (!stopping_.load()) make_cuda_side(num_cuda_states);
        }
        {
          std::unique_lock<std::mutex> l(fill_mu_);
          fill_cv_.wait(l, [this] { return first_decoded_ || stopping_.load(); });
        }
        try {
          if (preallocate_ == 2 && hw_states > 0 && !stopping_.load()) preallocate_first_slot();
          // Every JPEG on the engines (hw_load 1): after the first batch the CUDA backend decodes
          // only what the engines refuse (progressive, odd layouts), so slot 0 is trimmed to a few
          // states and later slots are made with as many (each state holds ~2-4 MiB of buffers:
          // fused 4:4:4 reference pipeline 665 -> 623 MiB with 2 instead of 8 a slot, same images/s).
          // Not where the first batch had many JPEGs off the baseline fast path (progressive ones,
          // which the engines refuse): such data keeps the CUDA backend busy.
          const int64_t later_cuda = hw_load_ >= 1.0 && hw_states > 0 && first_not_baseline_ * 8 <= first_size_
                                         ? std::min<int64_t>(num_cuda_states, kFallbackCudaStates)
                                         : num_cuda_states;
          if (later_cuda < num_cuda_states && wait_cuda() && !stopping_.load()) trim_cuda_states(later_cuda);
          if (num_slots > 1 && wait_cuda()) {
            const auto t = std::chrono::steady_clock::now();
            for (int64_t k = 1; k < num_slots && !stopping_.load(); ++k) {
              At at(*this, kMakeSlot);
              slots_[k] = make_slot(hw_states, later_cuda);
              ready_slots_.store(static_cast<int>(k + 1), std::memory_order_release);
            }
            std::lock_guard<std::mutex> sg(stats_mu_);
            build_us_["other_slots_us"] = std::chrono::duration_cast<std::chrono::microseconds>(
                std::chrono::steady_clock::now() - t).count();
          }
        } catch (...) {
        }
      });
    }
  } catch (...) {
    destroy();
    throw;
  }
}

cudaError_t NvJpegDecoder::new_stream(cudaStream_t* s) const {
  // the priority asked for, within what the device offers (lower numbers run first)
  int least = 0, greatest = 0;
  const cudaError_t e = cudaDeviceGetStreamPriorityRange(&least, &greatest);
  if (e != cudaSuccess) return e;
  const int priority = std::max(greatest, std::min(least, stream_priority_));
  return new_stream_avoiding(s, priority);  // out of the training stream's hardware queue
}

nvjpegStatus_t NvJpegDecoder::new_hw_handle(nvjpegHandle_t* h) {
  const nvjpegStatus_t s = create_handle(NVJPEG_BACKEND_HARDWARE, h, dev_alloc());
  if (s == NVJPEG_STATUS_SUCCESS) {  // *h is set before a padding failure throws: the caller frees it
    TD_NVJPEG(nvjpegSetDeviceMemoryPadding(device_padding_, *h), "nvjpegSetDeviceMemoryPadding(HW)");
    TD_NVJPEG(nvjpegSetPinnedMemoryPadding(kPinnedPadding, *h), "nvjpegSetPinnedMemoryPadding(HW)");
  }
  return s;
}

void NvJpegDecoder::destroy_hw_state(HwState& st) noexcept {
  if (st.stream) cudaStreamSynchronize(st.stream);
  for (auto p : st.params) nvjpegDecodeParamsDestroy(p);
  if (st.state) nvjpegJpegStateDestroy(st.state);
  if (st.handle && st.owns_handle) nvjpegDestroy(st.handle);
  if (st.done) cudaEventDestroy(st.done);
  for (int b = 0; b < 2; ++b) {
    if (st.host[b]) cudaFreeHost(st.host[b]);  // the stream has synchronised: no copy reads it
    if (st.host_free[b]) cudaEventDestroy(st.host_free[b]);
  }
  if (st.stream) cudaStreamDestroy(st.stream);
}

void NvJpegDecoder::make_default_handle() {
  TD_NVJPEG(create_handle(NVJPEG_BACKEND_DEFAULT, &handle_, dev_alloc()), "nvjpegCreateEx(DEFAULT)");
  TD_NVJPEG(nvjpegSetDeviceMemoryPadding(device_padding_, handle_), "nvjpegSetDeviceMemoryPadding");
  TD_NVJPEG(nvjpegSetPinnedMemoryPadding(kPinnedPadding, handle_), "nvjpegSetPinnedMemoryPadding");
  TD_NVJPEG(nvjpegDecoderCreate(handle_, NVJPEG_BACKEND_HYBRID, &dec_hybrid_), "nvjpegDecoderCreate(HYBRID)");
  TD_NVJPEG(nvjpegDecoderCreate(handle_, NVJPEG_BACKEND_GPU_HYBRID, &dec_gpu_), "nvjpegDecoderCreate(GPU_HYBRID)");
}

void NvJpegDecoder::make_cuda_side(int64_t num_cuda_states) {
  const auto t = std::chrono::steady_clock::now();
  std::string err;
  try {
    {
      // No hardware batch decodes while the handle is made (as fill_slot does for hardware
      // handles: nvJPEG calls overlapping the engines' batches have hung it before)
      std::lock_guard<std::mutex> hw_lock(hw_mu_);
      make_default_handle();
    }
    fill_cuda(*slots_[0], num_cuda_states);  // no decode() reads slot 0's `cu` before it is published
  } catch (const std::exception& e) {
    err = e.what();
  } catch (...) {
    err = "unknown error";
  }
  {
    std::lock_guard<std::mutex> l(cuda_mu_);
    cuda_error_ = err;
    cuda_done_ = true;
    if (err.empty()) cuda_ready_.store(true, std::memory_order_release);
  }
  cuda_cv_.notify_all();
  std::lock_guard<std::mutex> sg(stats_mu_);
  build_us_["cuda_side_us"] =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t).count();
}

bool NvJpegDecoder::wait_cuda() {
  if (cuda_ready_.load(std::memory_order_acquire)) return true;
  {
    std::lock_guard<std::mutex> l(fill_mu_);  // lazy_cuda 2: the filler makes it now
    cuda_wanted_ = true;
  }
  fill_cv_.notify_all();
  At at(*this, kWaitCuda);
  std::unique_lock<std::mutex> l(cuda_mu_);
  cuda_cv_.wait(l, [this] { return cuda_done_ || stopping_.load(); });
  return cuda_ready_.load(std::memory_order_acquire);
}

void NvJpegDecoder::make_hw_side(int64_t num_hw_states) {
  // Made outside slot 0's lock (the first batch may hold it, decoding on the CUDA backend), then
  // moved in under it. Nothing decodes on the engines yet: every later batch waits in wait_hw().
  At at(*this, kMakeHwSide);
  const auto t = std::chrono::steady_clock::now();
  nvjpegHandle_t h = nullptr;
  std::vector<std::unique_ptr<HwState>> states;
  std::string err;
  try {
    const nvjpegStatus_t s = new_hw_handle(&h);
    if (s != NVJPEG_STATUS_SUCCESS) {
      h = nullptr;
      err = std::string("unavailable (nvjpegCreateEx(HARDWARE): ") + status_name(s) + ")";
    } else {
      for (int64_t i = 0; i < num_hw_states; ++i) {
        states.push_back(std::make_unique<HwState>());
        HwState* st = states.back().get();
        if (i == 0 || share_hw_handle_) {  // as in fill_slot: the decoder's own handle
          st->handle = h;
          st->owns_handle = false;
        } else {
          TD_NVJPEG(new_hw_handle(&st->handle), "nvjpegCreateEx(HARDWARE)");
        }
        TD_NVJPEG(nvjpegJpegStateCreate(st->handle, &st->state), "nvjpegJpegStateCreate(HW)");
        if (preallocate_ == 1)  // 2: after the first batch, as for the other modes (preallocate_first_slot)
          nvjpegDecodeBatchedPreAllocate(st->handle, st->state, 1, 1, 1, NVJPEG_CSS_444, NVJPEG_OUTPUT_RGBI);
        TD_CUDA(new_stream(&st->stream), "cudaStreamCreate");
        TD_CUDA(cudaEventCreateWithFlags(&st->done, cudaEventDisableTiming), "cudaEventCreate");
      }
    }
  } catch (const std::exception& e) {
    err = std::string("unavailable (") + e.what() + ")";
  }
  if (!err.empty()) {  // the CUDA backend decodes everything, as on a GPU without engines
    for (auto& st : states) destroy_hw_state(*st);
    states.clear();
    if (h) nvjpegDestroy(h);
    h = nullptr;
  }
  {
    Slot& sl = *slots_[0];
    std::lock_guard<std::mutex> l(sl.mu);
    if (h) {
      // header parsing with the hardware handle (phase 1) gets streams made by that handle
      for (auto& js : sl.parse_streams) {
        nvjpegJpegStream_t fresh = nullptr;
        if (nvjpegJpegStreamCreate(h, &fresh) == NVJPEG_STATUS_SUCCESS) {
          if (js) nvjpegJpegStreamDestroy(js);
          js = fresh;
        }
      }
      sl.hw = std::move(states);
      hw_handle_ = h;
    }
    hw_status_ = h ? "ok" : err;
  }
  {
    std::lock_guard<std::mutex> l(hw_ready_mu_);
    hw_done_ = true;
  }
  hw_ready_cv_.notify_all();
  std::lock_guard<std::mutex> sg(stats_mu_);
  build_us_["hw_side_us"] =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t).count();
}

void NvJpegDecoder::wait_hw() {
  At at(*this, kWaitHwSide);
  std::unique_lock<std::mutex> l(hw_ready_mu_);
  hw_ready_cv_.wait(l, [this] { return hw_done_ || stopping_.load(); });
}

void NvJpegDecoder::trim_cuda_states(int64_t keep) {
  // Under slot 0's lock: no batch of its own in flight on the host; its states' GPU work is
  // waited for before their buffers go.
  Slot& sl = *slots_[0];
  std::lock_guard<std::mutex> sl_lock(sl.mu);
  while (static_cast<int64_t>(sl.cu.size()) > keep) {
    destroy_cuda_state(*sl.cu.back());
    sl.cu.pop_back();
  }
  cuda_states_now_.store(static_cast<int64_t>(sl.cu.size()), std::memory_order_release);
}

void NvJpegDecoder::destroy_cuda_state(CudaState& st) noexcept {
  if (st.stream) cudaStreamSynchronize(st.stream);
  if (st.params) nvjpegDecodeParamsDestroy(st.params);
  if (st.st_hybrid) nvjpegJpegStateDestroy(st.st_hybrid);
  if (st.st_gpu) nvjpegJpegStateDestroy(st.st_gpu);
  for (int b = 0; b < 2; ++b) {
    if (st.jstream[b]) nvjpegJpegStreamDestroy(st.jstream[b]);
    if (st.pinned[b]) nvjpegBufferPinnedDestroy(st.pinned[b]);
    if (st.pinned_free[b]) cudaEventDestroy(st.pinned_free[b]);
  }
  if (st.device_buf) nvjpegBufferDeviceDestroy(st.device_buf);
  if (st.done) cudaEventDestroy(st.done);
  if (st.stream) cudaStreamDestroy(st.stream);
}

void NvJpegDecoder::preallocate_first_slot() {
  // The first slot's hardware states get their pools now: under the slot's lock (no batch of its
  // own in flight on the host) and the hardware lock, after the state's last batch has run.
  At at(*this, kPreallocate);
  const auto t = std::chrono::steady_clock::now();
  Slot& sl = *slots_[0];
  std::lock_guard<std::mutex> sl_lock(sl.mu);
  std::lock_guard<std::mutex> hw_lock(hw_mu_);
  for (auto& st : sl.hw) {
    if (st->stream) cudaStreamSynchronize(st->stream);
    nvjpegDecodeBatchedPreAllocate(st->handle, st->state, 1, 1, 1, NVJPEG_CSS_444, NVJPEG_OUTPUT_RGBI);
    st->batch = -1;  // initialised again before its next batch
  }
  std::lock_guard<std::mutex> sg(stats_mu_);
  build_us_["preallocate_after_us"] =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t).count();
}

// Made whole or not at all: what a failure leaves half made is freed before the error goes on.
std::unique_ptr<NvJpegDecoder::Slot> NvJpegDecoder::make_slot(int64_t num_hw_states, int64_t num_cuda_states,
                                                             bool first, bool with_cuda, int64_t reserve_hw) {
  auto owned = std::make_unique<Slot>();
  try {
    fill_slot(*owned, num_hw_states, num_cuda_states, first, with_cuda, reserve_hw);
  } catch (...) {
    destroy_slot(*owned);
    throw;
  }
  return owned;
}

void NvJpegDecoder::fill_slot(Slot& sl, int64_t num_hw_states, int64_t num_cuda_states, bool first,
                              bool with_cuda, int64_t reserve_hw) {
  // No hardware batch decodes while hardware handles are made (the filler thread makes slots
  // while batches decode; concurrent hardware calls have hung nvJPEG before)
  // The hardware states' streams are made before the lock: a stream may be tried against the
  // consumer's queue (stream_queues.h), which waits for the consumer's queued work
  struct Streams {  // those not yet handed to a state are destroyed if a step below throws
    std::vector<cudaStream_t> v;
    ~Streams() {
      for (cudaStream_t s : v)
        if (s) cudaStreamDestroy(s);
    }
  } made;
  made.v.assign(static_cast<size_t>(std::max<int64_t>(num_hw_states, 0)), nullptr);
  for (auto& s : made.v) TD_CUDA(new_stream(&s), "cudaStreamCreate");
  std::unique_lock<std::mutex> hw_lock(hw_mu_, std::defer_lock);
  if (num_hw_states > 0) hw_lock.lock();
  // The first slot's parts, in build_stats (what the first batch waits for)
  auto lap = [this, t = std::chrono::steady_clock::now()](const char* what) mutable {
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard<std::mutex> g(stats_mu_);
    build_us_.emplace(what, std::chrono::duration_cast<std::chrono::microseconds>(now - t).count());
    t = now;
  };
  for (int64_t i = 0; i < num_hw_states; ++i) {
    sl.hw.push_back(std::make_unique<HwState>());
    HwState* st = sl.hw.back().get();
    if (hw_handle_ && ((first && i == 0) || share_hw_handle_)) {
      // The first slot's first state decodes with the handle the decoder made for header checks
      // (its paddings set): one hardware handle less (~0.27 s) before the first batch. The
      // other slots' states keep handles of their own unless share_hw_handle_ (their batches take
      // the hardware lock in turn, so one handle serves them all).
      st->handle = hw_handle_;
      st->owns_handle = false;
    } else {
      TD_NVJPEG(new_hw_handle(&st->handle), "nvjpegCreateEx(HARDWARE)");
    }
    lap("slot_hw_handle_us");
    TD_NVJPEG(nvjpegJpegStateCreate(st->handle, &st->state), "nvjpegJpegStateCreate(HW)");
    // Turns on the hardware decoder's memory pool (a token size: the pool grows with use); nvJPEG
    // without the call allocates per batch. A failure only loses the pool. preallocate 2: the
    // first slot's after the first batch (preallocate_first_slot), ~0.36 s off its path.
    if (preallocate_ == 1 || (preallocate_ == 2 && !first))
      nvjpegDecodeBatchedPreAllocate(st->handle, st->state, 1, 1, 1, NVJPEG_CSS_444, NVJPEG_OUTPUT_RGBI);
    lap("slot_hw_preallocate_us");
    st->stream = made.v[static_cast<size_t>(i)];  // owned by the state from here (destroy_hw_state)
    made.v[static_cast<size_t>(i)] = nullptr;
    TD_CUDA(cudaEventCreateWithFlags(&st->done, cudaEventDisableTiming), "cudaEventCreate");
  }
  if (hw_lock.owns_lock()) hw_lock.unlock();
  lap("slot_hw_states_us");
  if (with_cuda) fill_cuda(sl, num_cuda_states);
  lap("slot_cuda_states_us");
  // one thread per state, the CUDA-backend states' included when they come later (lazy_cuda)
  const size_t threads = std::max(sl.hw.size(), static_cast<size_t>(reserve_hw)) + static_cast<size_t>(num_cuda_states);
  nvjpegHandle_t parse_handle = hw_handle_ ? hw_handle_ : handle_;
  sl.parse_streams.assign(threads, nullptr);
  for (auto& js : sl.parse_streams) TD_NVJPEG(nvjpegJpegStreamCreate(parse_handle, &js), "nvjpegJpegStreamCreate");
  TD_CUDA(cudaEventCreateWithFlags(&sl.arena_ready, cudaEventDisableTiming), "cudaEventCreate");
  const int dev = device_;
  sl.pool = std::make_unique<WorkerPool>(static_cast<int>(threads), [dev] {
    pthread_setname_np(pthread_self(), "td-nvjpeg");  // named in top -H and profiles
    TD_CUDA(cudaSetDevice(dev), "cudaSetDevice in a decoder thread");
  });
  lap("slot_threads_us");
}

void NvJpegDecoder::fill_cuda(Slot& sl, int64_t num_cuda_states) {
  for (int64_t i = 0; i < num_cuda_states; ++i) {
    sl.cu.push_back(std::make_unique<CudaState>());
    CudaState* st = sl.cu.back().get();
    TD_CUDA(new_stream(&st->stream), "cudaStreamCreate");
    TD_CUDA(cudaEventCreateWithFlags(&st->done, cudaEventDisableTiming), "cudaEventCreate");
    TD_NVJPEG(nvjpegDecoderStateCreate(handle_, dec_hybrid_, &st->st_hybrid), "nvjpegDecoderStateCreate(HYBRID)");
    TD_NVJPEG(nvjpegDecoderStateCreate(handle_, dec_gpu_, &st->st_gpu), "nvjpegDecoderStateCreate(GPU_HYBRID)");
    for (int b = 0; b < 2; ++b) {
      if (nvjpegBufferPinnedCreateV2(handle_, &g_pinned_alloc, &st->pinned[b]) != NVJPEG_STATUS_SUCCESS)
        TD_NVJPEG(nvjpegBufferPinnedCreate(handle_, nullptr, &st->pinned[b]), "nvjpegBufferPinnedCreate");
      // blocking_sync (TORCH_DALI_NVJPEG_BLOCKING_SYNC): the host waits for a pinned buffer asleep, not spinning
      const unsigned flags = cudaEventDisableTiming | (blocking_sync_ ? cudaEventBlockingSync : 0u);
      TD_CUDA(cudaEventCreateWithFlags(&st->pinned_free[b], flags), "cudaEventCreate");
      TD_NVJPEG(nvjpegJpegStreamCreate(handle_, &st->jstream[b]), "nvjpegJpegStreamCreate");
    }
    if (nvjpegBufferDeviceCreateV2(handle_, dev_alloc(), &st->device_buf) != NVJPEG_STATUS_SUCCESS)
      TD_NVJPEG(nvjpegBufferDeviceCreate(handle_, nullptr, &st->device_buf), "nvjpegBufferDeviceCreate");
    TD_NVJPEG(nvjpegStateAttachDeviceBuffer(st->st_hybrid, st->device_buf), "nvjpegStateAttachDeviceBuffer");
    TD_NVJPEG(nvjpegStateAttachDeviceBuffer(st->st_gpu, st->device_buf), "nvjpegStateAttachDeviceBuffer");
    TD_NVJPEG(nvjpegDecodeParamsCreate(handle_, &st->params), "nvjpegDecodeParamsCreate");
  }
  // slot 0's CUDA side is always the first made (later slots wait for it: wait_cuda())
  int64_t none = 0;
  cuda_states_now_.compare_exchange_strong(none, static_cast<int64_t>(sl.cu.size()));
}

int64_t NvJpegDecoder::num_hw_states() const {
  return num_slots() == 0 ? 0 : static_cast<int64_t>(slots_[0]->hw.size());
}
int64_t NvJpegDecoder::num_cuda_states() const {
  return num_slots() == 0 || !cuda_ready() ? 0 : cuda_states_now_.load(std::memory_order_acquire);
}

// A free slot if there is one, else the next in turn (waiting for it); only slots made so far.
NvJpegDecoder::Slot& NvJpegDecoder::acquire(std::unique_lock<std::mutex>& lock) {
  const int ready = ready_slots_.load(std::memory_order_acquire);
  TORCH_CHECK(ready > 0, "NvJpegDecoder: the decoder has no state (it was destroyed)");
  for (int k = 0; k < ready; ++k) {
    std::unique_lock<std::mutex> l(slots_[k]->mu, std::try_to_lock);
    if (l.owns_lock()) {
      lock = std::move(l);
      return *slots_[k];
    }
  }
  size_t k;
  {
    std::lock_guard<std::mutex> g(next_mu_);
    k = next_slot_++ % static_cast<size_t>(ready);
  }
  At at(*this, kWaitSlot);
  lock = std::unique_lock<std::mutex>(slots_[k]->mu);
  return *slots_[k];
}

NvJpegDecoder::~NvJpegDecoder() { destroy(); }

void NvJpegDecoder::destroy() noexcept {
  // Errors are ignored here: at interpreter exit the CUDA context may already be gone.
  {
    std::lock_guard<std::mutex> l(fill_mu_);
    stopping_.store(true);
  }
  fill_cv_.notify_all();
  {
    std::lock_guard<std::mutex> l(cuda_mu_);  // a decode() waiting for the CUDA backend gives up
  }
  cuda_cv_.notify_all();
  {
    std::lock_guard<std::mutex> l(hw_ready_mu_);  // a decode() waiting for the hardware side gives up
  }
  hw_ready_cv_.notify_all();
  if (filler_.joinable()) filler_.join();  // at most the slot it is making
  const int ready = ready_slots_.exchange(0);
  for (int k = 0; k < ready; ++k) {
    if (slots_[k]) destroy_slot(*slots_[k]);
    slots_[k].reset();
  }
  if (dec_gpu_) nvjpegDecoderDestroy(dec_gpu_);
  if (dec_hybrid_) nvjpegDecoderDestroy(dec_hybrid_);
  dec_gpu_ = dec_hybrid_ = nullptr;
  if (hw_handle_) nvjpegDestroy(hw_handle_);
  if (handle_) nvjpegDestroy(handle_);
  hw_handle_ = handle_ = nullptr;
  scratch_.reset();  // after every handle whose buffers it holds
  if (arena_stream_) cudaStreamDestroy(arena_stream_);
  if (scratch_stream_) cudaStreamDestroy(scratch_stream_);
  arena_stream_ = scratch_stream_ = nullptr;
}

nvjpegDevAllocatorV2_t* NvJpegDecoder::dev_alloc() { return scratch_ ? &scratch_->alloc : &g_dev_alloc; }

void NvJpegDecoder::destroy_slot(Slot& sl_ref) noexcept {
  Slot* sl = &sl_ref;
  {
    sl->pool.reset();  // joins the threads
    for (auto& st : sl->hw) destroy_hw_state(*st);
    for (auto& st : sl->cu) destroy_cuda_state(*st);
    for (auto js : sl->parse_streams)
      if (js) nvjpegJpegStreamDestroy(js);
    if (sl->arena_ready) cudaEventDestroy(sl->arena_ready);
  }
}

std::vector<std::optional<at::Tensor>> NvJpegDecoder::decode(const std::vector<at::Tensor>& data,
                                                             const std::string& output_format,
                                                             const std::optional<at::Tensor>& rois,
                                                             bool first_batch) {
  const size_t n = data.size();
  std::vector<at::Tensor> inputs(n);  // contiguous views/copies of the encoded data
  std::vector<Part> parts(n);
  for (size_t i = 0; i < n; ++i) {
    const at::Tensor& t = data[i];
    TORCH_CHECK(t.defined() && t.device().is_cpu() && t.scalar_type() == at::kByte && t.dim() == 1,
                "NvJpegDecoder.decode: sample ", i, " must be a 1-D uint8 CPU tensor of encoded bytes");
    inputs[i] = t.contiguous();
    parts[i] = {inputs[i].data_ptr<uint8_t>(), static_cast<size_t>(inputs[i].numel())};
  }
  return decode_parts(parts, output_format, rois, first_batch);
}

std::vector<std::optional<at::Tensor>> NvJpegDecoder::decode_packed(const at::Tensor& buffer,
                                                                    const at::Tensor& offsets,
                                                                    const at::Tensor& sizes,
                                                                    const std::string& output_format,
                                                                    const std::optional<at::Tensor>& rois,
                                                                    bool first_batch) {
  TORCH_CHECK(buffer.device().is_cpu() && buffer.scalar_type() == at::kByte && buffer.dim() == 1 &&
                  buffer.is_contiguous(),
              "NvJpegDecoder.decode_packed: the buffer must be a contiguous 1-D uint8 CPU tensor");
  TORCH_CHECK(offsets.device().is_cpu() && offsets.scalar_type() == at::kLong && offsets.dim() == 1 &&
                  sizes.device().is_cpu() && sizes.scalar_type() == at::kLong && sizes.dim() == 1 &&
                  offsets.size(0) == sizes.size(0),
              "NvJpegDecoder.decode_packed: offsets and sizes must be 1-D int64 CPU tensors of one length");
  const at::Tensor oc = offsets.contiguous(), sc = sizes.contiguous();
  const int64_t* off = oc.data_ptr<int64_t>();
  const int64_t* len = sc.data_ptr<int64_t>();
  const int64_t total = buffer.numel();
  const uint8_t* base = buffer.data_ptr<uint8_t>();
  const size_t n = static_cast<size_t>(oc.size(0));
  std::vector<Part> parts(n);
  for (size_t i = 0; i < n; ++i) {
    TORCH_CHECK(off[i] >= 0 && len[i] >= 0 && off[i] <= total && len[i] <= total - off[i],
                "NvJpegDecoder.decode_packed: sample ", i, " (", len[i], " bytes at ", off[i],
                ") lies outside the buffer of ", total, " bytes");
    parts[i] = {base + off[i], static_cast<size_t>(len[i])};
  }
  return decode_parts(parts, output_format, rois, first_batch);
}

std::vector<std::optional<at::Tensor>> NvJpegDecoder::decode_parts(const std::vector<Part>& parts,
                                                                   const std::string& output_format,
                                                                   const std::optional<at::Tensor>& rois,
                                                                   bool first_batch) {
  nvjpegOutputFormat_t fmt;
  int64_t channels;
  if (output_format == "rgb") {
    fmt = NVJPEG_OUTPUT_RGBI; channels = 3;
  } else if (output_format == "bgr") {
    fmt = NVJPEG_OUTPUT_BGRI; channels = 3;
  } else if (output_format == "gray") {
    fmt = NVJPEG_OUTPUT_Y; channels = 1;
  } else {
    TORCH_CHECK(false, "NvJpegDecoder.decode: output_format must be 'rgb', 'bgr' or 'gray', got '",
                output_format, "'");
  }
  const size_t n = parts.size();
  std::vector<Job> jobs(n);
  for (size_t i = 0; i < n; ++i) {
    jobs[i].data = parts[i].data;
    jobs[i].size = parts[i].size;
  }
  if (rois.has_value() && rois->defined()) {
    const at::Tensor& r = *rois;
    TORCH_CHECK(r.device().is_cpu() && r.scalar_type() == at::kLong && r.dim() == 2 && r.size(1) == 4 &&
                    r.size(0) == static_cast<int64_t>(n),
                "NvJpegDecoder.decode: rois must be an (n, 4) int64 CPU tensor of (y, x, h, w), n = ", n);
    const at::Tensor rc = r.contiguous();
    const int64_t* w = rc.data_ptr<int64_t>();
    for (size_t i = 0; i < n; ++i, w += 4) {
      if (w[2] <= 0) continue;  // the whole image
      TORCH_CHECK(w[0] >= 0 && w[1] >= 0 && w[3] > 0 && w[2] <= INT32_MAX && w[3] <= INT32_MAX &&
                      w[0] <= INT32_MAX && w[1] <= INT32_MAX,
                  "NvJpegDecoder.decode: sample ", i, ": bad window (y, x, h, w) = (", w[0], ", ", w[1], ", ",
                  w[2], ", ", w[3], ")");
      jobs[i].roi_y = static_cast<int>(w[0]);
      jobs[i].roi_x = static_cast<int>(w[1]);
      jobs[i].roi_h = static_cast<int>(w[2]);
      jobs[i].roi_w = static_cast<int>(w[3]);
    }
  }
  std::vector<std::optional<at::Tensor>> results(n);
  if (n == 0) return results;

  // lazy_cuda 3: the first batch decodes on the CUDA backend alone (whether or not the hardware
  // side is there by now: timing must not choose the path); the others wait for the hardware side,
  // before taking a slot (making it takes slot 0's lock).
  const bool cuda_first = lazy_hw_ && first_batch;
  if (lazy_hw_ && !first_batch) {
    wait_hw();
    TORCH_CHECK(!stopping_.load(), "NvJpegDecoder.decode: the decoder is being destroyed");
  }
  std::unique_lock<std::mutex> lock;
  Slot& sl = acquire(lock);
  std::vector<std::unique_ptr<HwState>> no_hw;
  auto& hw_ = cuda_first ? no_hw : sl.hw;
  // The CUDA-backend states, once there (lazy_cuda: made on the filler thread; read only after
  // cuda_ready_ says they are published). Until then this batch uses the hardware states alone.
  std::vector<CudaState*> cu_;
  auto attach_cuda = [&]() {
    TORCH_CHECK(wait_cuda(), "NvJpegDecoder.decode: the decoder's CUDA backend could not be made: ",
                cuda_error_.empty() ? std::string("stopped") : cuda_error_);
    if (cu_.empty())
      for (auto& st : sl.cu) {
        st->used = false;
        cu_.push_back(st.get());
      }
  };
  if (cuda_ready()) attach_cuda();
  // The first batch waits for no CUDA backend (lazy_cuda): the engines take all they support
  const bool hw_first = first_batch && lazy_cuda_ > 0 && !hw_.empty();
  c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device_));
  const int threads = sl.pool->size();
  const size_t num_hw = hw_.size();
  // Host time of each phase (µs), reported in last_stats: what bounds a batch's decode.
  using clock = std::chrono::steady_clock;
  auto us = [](clock::time_point a, clock::time_point b) {
    return static_cast<int64_t>(std::chrono::duration_cast<std::chrono::microseconds>(b - a).count());
  };
  const auto t0 = clock::now();
  std::atomic<int64_t> hw_us{0}, cuda_us{0};
  auto raise_to = [](std::atomic<int64_t>& a, int64_t v) {
    int64_t cur = a.load();
    while (v > cur && !a.compare_exchange_weak(cur, v)) {
    }
  };

  // Phase 1: headers -> sizes and hardware support.
  std::atomic<int64_t> not_baseline{0};  // JPEGs off the fast path: ones the engines may refuse
  std::optional<At> place(std::in_place, *this, kHeaders);  // activity(): where this decode() is
  sl.pool->run([&](int tid) {
    for (size_t i = tid; i < n; i += threads) {
      Job& j = jobs[i];
      if (j.size < 4 || j.data[0] != 0xFF || j.data[1] != 0xD8) continue;  // not a JPEG
      const Frame f = baseline_frame(j.data, j.size);
      if (f.ok) {  // the common case: no nvJPEG parsing; the hardware takes it
        j.width = f.width;
        j.height = f.height;
        j.decodable = true;
        j.hw_ok = hw_handle_ && !hw_.empty();
        continue;
      }
      not_baseline.fetch_add(1, std::memory_order_relaxed);
      if (!wait_cuda()) {
        j.error = "the decoder's CUDA backend could not be made";
        continue;
      }
      int comps = 0;
      nvjpegChromaSubsampling_t css;
      int widths[NVJPEG_MAX_COMPONENT] = {0}, heights[NVJPEG_MAX_COMPONENT] = {0};
      const nvjpegStatus_t s = nvjpegGetImageInfo(handle_, j.data, j.size, &comps, &css, widths, heights);
      if (is_unsupported(s)) continue;
      if (s != NVJPEG_STATUS_SUCCESS) {
        j.error = std::string("nvjpegGetImageInfo failed: ") + status_name(s) + " (corrupt or truncated JPEG)";
        continue;
      }
      if (comps != 1 && comps != 3) continue;  // CMYK/YCCK: left to the CPU decoder
      if (widths[0] <= 0 || heights[0] <= 0) {
        j.error = "JPEG header has invalid dimensions";
        continue;
      }
      j.width = widths[0];
      j.height = heights[0];
      j.decodable = true;
      // Other layouts: nvJPEG's exact check of what the hardware takes. A batch the hardware still
      // rejects is decoded again on the CUDA backend (phase 3): slower, never wrong.
      if (hw_handle_ && !hw_.empty() &&
          nvjpegJpegStreamParseHeader(hw_handle_, j.data, j.size, sl.parse_streams[tid]) == NVJPEG_STATUS_SUCCESS) {
        int supported = 1;  // nvJPEG reports 0 for "supported"
        j.hw_ok = nvjpegDecodeBatchedSupported(hw_handle_, sl.parse_streams[tid], &supported) ==
                      NVJPEG_STATUS_SUCCESS && supported == 0;
      }
    }
  });
  for (size_t i = 0; i < n; ++i) {
    const Job& j = jobs[i];
    TORCH_CHECK(j.error.empty(), "NvJpegDecoder.decode: sample ", i, ": ", j.error);
    // compared in 64 bits: y + h cannot overflow
    TORCH_CHECK(!j.decodable || j.roi_w < 0 ||
                    (static_cast<int64_t>(j.roi_y) + j.roi_h <= j.height &&
                     static_cast<int64_t>(j.roi_x) + j.roi_w <= j.width),
                "NvJpegDecoder.decode: sample ", i, ": window (y, x, h, w) = (", j.roi_y, ", ", j.roi_x, ", ",
                j.roi_h, ", ", j.roi_w, ") leaves the ", j.height, "x", j.width, " image");
  }

  // Each output is allocated (torch's caching allocator) on the internal stream that writes it and
  // recorded for the caller's stream, which reads it. So the internal streams never wait for the
  // caller's stream: a batch's decode does not queue behind the previous batches' GPU work, and
  // the host never blocks on it (a block freed on the caller's stream is not handed out again
  // before the work queued there when it was freed has run).
  place.emplace(*this, kOutputs);
  auto caller = at::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device_));
  const auto opts = at::TensorOptions().dtype(at::kByte).device(at::kCUDA, static_cast<c10::DeviceIndex>(device_));
  std::vector<Job*> hw_jobs, cuda_jobs;
  double acc = 0.0;
  bool need_cuda = !hw_first;
  for (const auto& j : jobs) need_cuda = need_cuda || (j.decodable && !(j.hw_ok && num_hw > 0));
  if (need_cuda) attach_cuda();
  const double share = hw_first ? 1.0 : share_.load(std::memory_order_relaxed);
  for (auto& j : jobs) {
    if (!j.decodable) continue;
    if (j.hw_ok && num_hw > 0) {
      acc += share;  // spreads the hardware share evenly through the batch
      if (acc >= 1.0 - 1e-9) {
        acc -= 1.0;
        hw_jobs.push_back(&j);
        continue;
      }
    }
    cuda_jobs.push_back(&j);
  }
  for (size_t k = 0; k < num_hw; ++k) {
    const size_t b = hw_jobs.size() * k / num_hw, e = hw_jobs.size() * (k + 1) / num_hw;
    hw_[k]->jobs.assign(hw_jobs.begin() + b, hw_jobs.begin() + e);
    hw_[k]->used = hw_[k]->failed = false;
  }
  for (auto& st : cu_) st->used = false;
  auto cuda_parts = balance(cuda_jobs, cu_.size());
  // Windows are decoded as windows by the hardware only: the CUDA backend's ROI decode gave wrong
  // pixels on an H200 (nvJPEG 13.0; bench/roi_determinism.py), so it decodes the whole image and
  // the window is a view of it. The engines too, for a window that ends on the image's bottom or
  // right edge where that side is a multiple of 8 pixels: there they left the window's last row or
  // column unwritten (off by up to 84 levels, changing from run to run; bench/diag/roi_edge.py).
  auto edge_window = [](const Job& j) {
    return (j.roi_y + j.roi_h == j.height && j.height % 8 == 0) || (j.roi_x + j.roi_w == j.width && j.width % 8 == 0);
  };
  auto shape = [&](Job* j, bool windows) {
    j->caller = caller.stream();
    j->whole = !windows || j->roi_w < 0 || edge_window(*j);
    return std::make_pair(j->whole ? j->height : j->roi_h, j->whole ? j->width : j->roi_w);
  };
  auto point = [&](Job* j, int w) {
    j->dest.channel[0] = j->out.data_ptr<uint8_t>();
    j->dest.pitch[0] = static_cast<size_t>(w) * channels;
  };
  std::vector<cudaEvent_t> waits;  // what the states wait for before writing their outputs
  if (arena_) {
    // One allocation for the batch on the caller's stream, each output a 256-byte aligned view:
    // the block returns to one stream's cache, whole, when the batch's last output dies. The
    // states wait (on the GPU) for the allocation's point in the caller's stream, where any
    // earlier reader of the recycled block has finished.
    std::vector<std::pair<Job*, bool>> all;
    for (auto& st : hw_)
      for (Job* j : st->jobs) all.emplace_back(j, true);
    for (auto& part : cuda_parts)
      for (Job* j : part) all.emplace_back(j, false);
    std::vector<int64_t> offs(all.size());
    int64_t total = 0;
    for (size_t k = 0; k < all.size(); ++k) {
      const auto [h, w] = shape(all[k].first, all[k].second);
      offs[k] = total;
      total += (static_cast<int64_t>(h) * w * channels + 255) / 256 * 256;
    }
    if (total > 0 && arena_ == 3) {
      // Chunks of one size, the images packed in order (one larger than a chunk gets its own
      // block); the chunk size only grows, in powers of two, so that a batch takes ~8-16 chunks.
      // (total / 8 made it 4-8: the first batch, decoded whole by the CUDA backend, grew 16 MiB
      // chunks to 32 MiB, and each later batch of windows, ~75 MB on the fused reference pipeline,
      // then took three 32 MiB chunks, up to 21 MiB of each batch's last chunk unused.)
      int64_t chunk = chunk_bytes_.load(std::memory_order_relaxed);
      const int64_t want = total / 16;
      while (chunk < want) {
        const int64_t grown = chunk * 2;
        if (chunk_bytes_.compare_exchange_weak(chunk, grown, std::memory_order_relaxed)) chunk = grown;
      }
      c10::cuda::CUDAStreamGuard on(
          c10::cuda::getStreamFromExternal(arena_stream_, static_cast<c10::DeviceIndex>(device_)));
      at::Tensor current;
      int64_t used = chunk;  // no chunk open yet
      for (size_t k = 0; k < all.size(); ++k) {
        Job* j = all[k].first;
        const auto [h, w] = shape(j, all[k].second);
        const int64_t bytes = static_cast<int64_t>(h) * w * channels;
        const int64_t padded = (bytes + 255) / 256 * 256;
        at::Tensor block;
        int64_t off = 0;
        if (padded > chunk) {
          block = at::empty({padded}, opts);
          c10::cuda::CUDACachingAllocator::recordStream(block.storage().data_ptr(), caller);
        } else {
          if (used + padded > chunk) {
            current = at::empty({chunk}, opts);
            c10::cuda::CUDACachingAllocator::recordStream(current.storage().data_ptr(), caller);
            used = 0;
          }
          block = current;
          off = used;
          used += padded;
        }
        j->out = block.narrow(0, off, bytes).view({h, w, channels});
        point(j, w);
      }
      TD_CUDA(cudaEventRecord(sl.arena_ready, caller.stream()), "cudaEventRecord");
      waits.push_back(sl.arena_ready);
    } else if (total > 0) {
      // Every arena the same size (the largest batch so far plus an eighth, in 2 MiB steps), so a
      // freed one serves any later batch: sized to each batch, torch's cache would keep blocks of
      // many sizes, each new largest one a new segment.
      int64_t size = arena_bytes_.load(std::memory_order_relaxed);
      while (total > size) {
        const int64_t grown = (total + total / 8 + (2 << 20) - 1) / (2 << 20) * (2 << 20);
        if (arena_bytes_.compare_exchange_weak(size, grown, std::memory_order_relaxed)) size = grown;
      }
      at::Tensor arena;
      if (arena_stream_) {
        // On the decoder's own stream, where nothing runs: torch's cache then hands a freed arena
        // to whichever lane asks next (one cache, not one per lane's stream). The caller's stream
        // is recorded, so the block is not handed out again before the caller's work on it (and
        // the states' writes, which that stream waits for) has run; readers on other streams are
        // recorded by the executor (plan.py, _keep_until_read).
        c10::cuda::CUDAStreamGuard on(
            c10::cuda::getStreamFromExternal(arena_stream_, static_cast<c10::DeviceIndex>(device_)));
        arena = at::empty({size}, opts);
        c10::cuda::CUDACachingAllocator::recordStream(arena.storage().data_ptr(), caller);
      } else {
        arena = at::empty({size}, opts);  // on the caller's (current) stream
      }
      for (size_t k = 0; k < all.size(); ++k) {
        Job* j = all[k].first;
        const auto [h, w] = shape(j, all[k].second);
        j->out = arena.narrow(0, offs[k], static_cast<int64_t>(h) * w * channels).view({h, w, channels});
        point(j, w);
      }
      TD_CUDA(cudaEventRecord(sl.arena_ready, caller.stream()), "cudaEventRecord");
      waits.push_back(sl.arena_ready);
    }
  } else {
    // Each output on the stream of the state that writes it, recorded for the caller's stream
    // that reads it: the states never wait for the caller's stream.
    auto allocate = [&](std::vector<Job*>& part, cudaStream_t stream, bool windows) {
      c10::cuda::CUDAStreamGuard on(c10::cuda::getStreamFromExternal(stream, static_cast<c10::DeviceIndex>(device_)));
      for (Job* j : part) {
        const auto [h, w] = shape(j, windows);
        j->out = at::empty({h, w, channels}, opts);
        c10::cuda::CUDACachingAllocator::recordStream(j->out.storage().data_ptr(), caller);
        point(j, w);
      }
    };
    for (auto& st : hw_) allocate(st->jobs, st->stream, true);
    for (size_t k = 0; k < cu_.size(); ++k) allocate(cuda_parts[k], cu_[k]->stream, false);
  }

  // Phase 2: hardware and hybrid states in parallel (each thread says where it is).
  place.reset();
  const auto t1 = clock::now();
  sl.pool->run([&](int tid) {
    const auto a = clock::now();
    if (static_cast<size_t>(tid) < num_hw) {
      if (!hw_[tid]->jobs.empty()) decode_hw(*hw_[tid], hw_[tid]->jobs, fmt, waits);
      raise_to(hw_us, us(a, clock::now()));
    } else if (static_cast<size_t>(tid) - num_hw < cuda_parts.size() && !cuda_parts[tid - num_hw].empty()) {
      decode_cuda(*cu_[tid - num_hw], cuda_parts[tid - num_hw], fmt, waits);
      raise_to(cuda_us, us(a, clock::now()));
    }
  });
  const auto t2 = clock::now();
  if (!first_decoded_flag_.exchange(true)) {  // the other slots may be made now (see the filler)
    {
      std::lock_guard<std::mutex> l(fill_mu_);
      first_decoded_ = true;
      first_not_baseline_ = not_baseline.load();
      first_size_ = static_cast<int64_t>(n);
    }
    fill_cv_.notify_all();
  }

  // Phase 3: batches the hardware rejected go through the hybrid path (after the failed
  // hardware work, which may have written part of their outputs).
  std::vector<Job*> retry;
  std::vector<cudaEvent_t> retry_waits = waits;  // outputs in the arena: after its allocation
  for (auto& st : hw_) {
    if (!st->failed) continue;
    retry.insert(retry.end(), st->jobs.begin(), st->jobs.end());
    retry_waits.push_back(st->done);
  }
  if (!retry.empty()) {
    At at(*this, kRetry);
    attach_cuda();
    auto parts = balance(retry, cu_.size());
    sl.pool->run([&](int tid) {
      if (static_cast<size_t>(tid) >= num_hw && static_cast<size_t>(tid) - num_hw < parts.size() &&
          !parts[tid - num_hw].empty())
        decode_cuda(*cu_[tid - num_hw], parts[tid - num_hw], fmt, retry_waits);
    });
  }

  for (auto& st : hw_)
    if (st->used) wait_for(caller.stream(), st->done);
  for (auto& st : cu_)
    if (st->used) wait_for(caller.stream(), st->done);
  for (auto& st : hw_) st->jobs.clear();
  if (adaptive_ && retry.empty() && !hw_first) adapt(hw_jobs.size(), hw_us.load(), cuda_jobs.size(), cuda_us.load());

  int64_t skipped = 0;
  for (size_t i = 0; i < n; ++i) {
    TORCH_CHECK(jobs[i].error.empty(), "NvJpegDecoder.decode: sample ", i, ": ", jobs[i].error);
    Job& j = jobs[i];
    if (j.decodable && !j.unsupported)
      results[i] = (j.roi_w < 0 || !j.whole) ? std::move(j.out)
                                             : j.out.narrow(0, j.roi_y, j.roi_h).narrow(1, j.roi_x, j.roi_w);
    else
      ++skipped;
  }
  std::lock_guard<std::mutex> stats_lock(stats_mu_);
  stats_ = {{"hardware", static_cast<int64_t>(hw_jobs.size())},
            {"hw_share_permille", static_cast<int64_t>(share_.load() * 1000.0 + 0.5)},
            {"hybrid", static_cast<int64_t>(cuda_jobs.size())},
            {"hardware_retried", static_cast<int64_t>(retry.size())},
            {"not_decoded", skipped},
            {"headers_us", us(t0, t1)},
            {"decode_us", us(t1, t2)},
            {"hardware_us", hw_us.load()},
            {"hybrid_us", cuda_us.load()},
            {"total_us", us(t0, clock::now())}};
  return results;
}

void NvJpegDecoder::adapt(size_t n_hw, int64_t hw_us, size_t n_cuda, int64_t cuda_us) {
  // Per-image host time of each path this batch (the hardware's includes waiting for the engines
  // behind other slots; the CUDA backend's is its slowest state's): the share at which both would
  // have finished together, approached gradually (one batch is a noisy sample). A path that got
  // no image is nudged back in, so its time is measured again.
  double cur = share_.load(std::memory_order_relaxed), target;
  if (n_hw == 0 && n_cuda == 0) return;
  if (n_hw == 0) {
    target = cur + 0.05;
  } else if (n_cuda == 0) {
    target = cur - 0.05;
  } else {
    const double per_hw = std::max<double>(1.0, static_cast<double>(hw_us)) / static_cast<double>(n_hw);
    const double per_cuda = std::max<double>(1.0, static_cast<double>(cuda_us)) / static_cast<double>(n_cuda);
    target = per_cuda / (per_hw + per_cuda);
  }
  share_.store(std::clamp(0.8 * cur + 0.2 * target, 0.05, 0.98), std::memory_order_relaxed);
}

void NvJpegDecoder::decode_hw(HwState& st, std::vector<Job*>& jobs, nvjpegOutputFormat_t fmt,
                              const std::vector<cudaEvent_t>& waits) {
  st.used = true;
  for (cudaEvent_t e : waits) wait_for(st.stream, e);
  const int n = static_cast<int>(jobs.size());
  // In the batch's (shuffled) order: sorted 4:4:4 first, then largest first, the fused reference
  // pipeline ran 3-33% slower in 6 of 6 paired rounds (bench/results/h200_2026-12-02_s7/row_ab_*).
  std::vector<const unsigned char*> ptrs(n);
  std::vector<size_t> lens(n);
  std::vector<nvjpegImage_t> dests(n);
  for (int i = 0; i < n; ++i) {
    ptrs[i] = jobs[i]->data;
    lens[i] = jobs[i]->size;
    dests[i] = jobs[i]->dest;
  }
  const int hb = pin_bitstreams(st, ptrs, lens);  // before the lock: overlaps another batch
  if (hw_state_sync_ && st.recorded) {
    // The state's previous batch has run before the state takes another (NVIDIA's nvImageCodec
    // waits so before each hardware batch). Before the lock: the other slot's batch goes on.
    At at(*this, kWaitHwState);
    TD_CUDA(cudaEventSynchronize(st.done), "cudaEventSynchronize");
  }
  // One hardware batch at a time, across states and slots, unless hw_concurrent
  // (TORCH_DALI_NVJPEG_HW_CONCURRENT). Concurrent batches from 2 states took ~25% less host time on an H200
  // (bench/results/decoder_sweep_h200.json), but batches from 3, 6 or 8 states once hung inside
  // nvJPEG 13.0, and a 2-GPU run with 2 concurrent states per process hung once for an unknown
  // reason: opt-in until a soak test clears it. With several slots the engines still get no idle
  // gap: the next batch's headers and CUDA-backend share run while this one holds the lock.
  std::unique_lock<std::mutex> hw_lock(hw_mu_, std::defer_lock);
  if (!hw_concurrent_) {
    At waiting(*this, kWaitHwLock);
    hw_lock.lock();
  }
  At at(*this, kHwDecode);
  nvjpegStatus_t s = NVJPEG_STATUS_SUCCESS;
  if (st.batch != n || st.fmt != fmt) {
    s = nvjpegDecodeBatchedInitialize(st.handle, st.state, n, 1, fmt);
    if (s == NVJPEG_STATUS_SUCCESS) {
      st.batch = n;
      st.fmt = fmt;
    }
  }
  bool windows = false;
  for (int i = 0; i < n; ++i) windows = windows || !jobs[i]->whole;
  if (s == NVJPEG_STATUS_SUCCESS && windows) {
    // Each image's window in its own params (the whole image: 0, 0, -1, -1). A hardware that
    // cannot decode windows fails the call, and the batch goes to the CUDA backend (phase 3).
    while (st.params.size() < static_cast<size_t>(n)) {
      nvjpegDecodeParams_t p = nullptr;
      s = nvjpegDecodeParamsCreate(st.handle, &p);
      if (s != NVJPEG_STATUS_SUCCESS) break;
      st.params.push_back(p);
    }
    for (int i = 0; i < n && s == NVJPEG_STATUS_SUCCESS; ++i) {
      const Job& j = *jobs[i];
      s = j.whole ? nvjpegDecodeParamsSetROI(st.params[i], 0, 0, -1, -1)
                  : nvjpegDecodeParamsSetROI(st.params[i], j.roi_x, j.roi_y, j.roi_w, j.roi_h);
    }
    if (s == NVJPEG_STATUS_SUCCESS)
      s = nvjpegDecodeBatchedEx(st.handle, st.state, ptrs.data(), lens.data(), dests.data(), st.params.data(),
                                st.stream);
  } else if (s == NVJPEG_STATUS_SUCCESS) {
    s = nvjpegDecodeBatched(st.handle, st.state, ptrs.data(), lens.data(), dests.data(), st.stream);
  }
  if (s != NVJPEG_STATUS_SUCCESS) {
    st.failed = true;
    st.batch = -1;  // re-initialise the state before its next batch
  }
  if (hb >= 0) {  // nvJPEG's uploads of these bitstreams are ordered before this on st.stream
    TD_CUDA(cudaEventRecord(st.host_free[hb], st.stream), "cudaEventRecord");
    st.host_turn = hb ^ 1;
  }
  TD_CUDA(cudaEventRecord(st.done, st.stream), "cudaEventRecord");
  st.recorded = true;
}

void NvJpegDecoder::wait_for(cudaStream_t stream, cudaEvent_t event) {
  if (host_waits_) {
    TD_CUDA(cudaEventSynchronize(event), "cudaEventSynchronize");  // done: nothing to order on the GPU
    return;
  }
  TD_CUDA(cudaStreamWaitEvent(stream, event, 0), "cudaStreamWaitEvent");
}

int NvJpegDecoder::pin_bitstreams(HwState& st, std::vector<const unsigned char*>& ptrs,
                                  const std::vector<size_t>& lens) {
  if (!pinned_input_) return -1;
  const int hb = st.host_turn;
  size_t total = 0;
  for (size_t len : lens) total += len;
  if (!st.host_free[hb]) {
    const unsigned flags = cudaEventDisableTiming | (blocking_sync_ ? cudaEventBlockingSync : 0u);
    TD_CUDA(cudaEventCreateWithFlags(&st.host_free[hb], flags), "cudaEventCreate");
  } else {
    At at(*this, kWaitPinned);
    TD_CUDA(cudaEventSynchronize(st.host_free[hb]), "cudaEventSynchronize");  // its last reader ran
  }
  if (st.host_cap[hb] < total) {
    if (st.host[hb]) cudaFreeHost(st.host[hb]);
    st.host[hb] = nullptr;
    st.host_cap[hb] = 0;
    const size_t cap = total + total / 4 + (1u << 20);  // room for the next batches' size changes
    if (cudaHostAlloc(reinterpret_cast<void**>(&st.host[hb]), cap, cudaHostAllocDefault) != cudaSuccess) {
      cudaGetLastError();  // no pinned memory to spare: this batch reads the caller's buffers
      st.host[hb] = nullptr;
      return -1;
    }
    st.host_cap[hb] = cap;
  }
  size_t off = 0;
  for (size_t i = 0; i < ptrs.size(); ++i) {
    std::memcpy(st.host[hb] + off, ptrs[i], lens[i]);
    ptrs[i] = st.host[hb] + off;
    off += lens[i];
  }
  return hb;
}

void NvJpegDecoder::decode_cuda(CudaState& st, std::vector<Job*>& jobs, nvjpegOutputFormat_t fmt,
                                const std::vector<cudaEvent_t>& waits) {
  At at(*this, kHybrid);
  st.used = true;
  for (cudaEvent_t e : waits) wait_for(st.stream, e);
  TD_NVJPEG(nvjpegDecodeParamsSetOutputFormat(st.params, fmt), "nvjpegDecodeParamsSetOutputFormat");
  for (size_t k = 0; k < jobs.size(); ++k) decode_one(st, *jobs[k], fmt, static_cast<int>(k & 1));
  TD_CUDA(cudaEventRecord(st.done, st.stream), "cudaEventRecord");
}

void NvJpegDecoder::decode_one(CudaState& st, Job& job, nvjpegOutputFormat_t, int slot) {
  auto fail = [&job](const char* what, nvjpegStatus_t s) {
    if (is_unsupported(s))
      job.unsupported = true;
    else
      job.error = std::string(what) + " failed: " + status_name(s) + " (corrupt or truncated JPEG)";
  };
  job.unsupported = false;
  job.error.clear();
  // The host stage reuses this pinned buffer: wait until its previous upload has run.
  {
    At at(*this, kWaitPinned);
    TD_CUDA(cudaEventSynchronize(st.pinned_free[slot]), "cudaEventSynchronize");
  }
  nvjpegJpegStream_t js = st.jstream[slot];
  if (!job.whole) {  // a hardware window batch that failed: this backend decodes the whole image
    c10::cuda::CUDAStreamGuard on(c10::cuda::getStreamFromExternal(st.stream, static_cast<c10::DeviceIndex>(device_)));
    job.out = at::empty({job.height, job.width, job.out.size(2)}, job.out.options());
    c10::cuda::CUDACachingAllocator::recordStream(
        job.out.storage().data_ptr(), c10::cuda::getStreamFromExternal(job.caller, static_cast<c10::DeviceIndex>(device_)));
    job.dest.channel[0] = job.out.data_ptr<uint8_t>();
    job.dest.pitch[0] = static_cast<size_t>(job.width) * job.out.size(2);
    job.whole = true;
  }
  nvjpegStatus_t s = nvjpegJpegStreamParse(handle_, job.data, job.size, 0, 0, js);
  if (s != NVJPEG_STATUS_SUCCESS) return fail("nvjpegJpegStreamParse", s);
  nvjpegJpegDecoder_t dec = dec_hybrid_;
  nvjpegJpegState_t state = st.st_hybrid;
  if (static_cast<int64_t>(job.width) * job.height > hybrid_threshold_) {
    int supported = 1;
    if (nvjpegDecoderJpegSupported(dec_gpu_, js, st.params, &supported) == NVJPEG_STATUS_SUCCESS &&
        supported == 0) {
      dec = dec_gpu_;
      state = st.st_gpu;
    }
  }
  s = nvjpegStateAttachPinnedBuffer(state, st.pinned[slot]);
  if (s != NVJPEG_STATUS_SUCCESS) return fail("nvjpegStateAttachPinnedBuffer", s);
  s = nvjpegDecodeJpegHost(handle_, dec, state, st.params, js);
  if (s != NVJPEG_STATUS_SUCCESS) return fail("nvjpegDecodeJpegHost", s);
  s = nvjpegDecodeJpegTransferToDevice(handle_, dec, state, js, st.stream);
  if (s != NVJPEG_STATUS_SUCCESS) return fail("nvjpegDecodeJpegTransferToDevice", s);
  s = nvjpegDecodeJpegDevice(handle_, dec, state, &job.dest, st.stream);
  TD_CUDA(cudaEventRecord(st.pinned_free[slot], st.stream), "cudaEventRecord");
  if (s != NVJPEG_STATUS_SUCCESS) return fail("nvjpegDecodeJpegDevice", s);
}

}  // namespace torch_dali
