// Batched JPEG decoder on nvJPEG: the hardware JPEG engines (batched API) take the share
// `hw_load` of the images they support; everything else goes through the decoupled
// hybrid/GPU-hybrid API. Every state owns a CUDA stream and a host thread (hardware states also
// their own handle; their nvjpegDecodeBatched calls are serialised, see decode_hw).
// The states come in `num_slots` independent sets, so that many decode() calls (one per batch,
// from different threads) run at once: one batch parses headers and runs its CUDA-backend share
// while another keeps the hardware engines busy.
#pragma once
#include <ATen/ATen.h>
#include <cuda_runtime_api.h>
#include <nvjpeg.h>

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <condition_variable>
#include <thread>
#include <vector>

#include "worker_pool.h"

namespace torch_dali {

class NvJpegDecoder {
 public:
  // Every setting is an argument (Python passes torch_dali._knobs' values; nothing here reads the
  // environment). hw_concurrent: hardware batches of different states may decode at the same time;
  // blocking_sync: the host waits for a pinned buffer asleep instead of spinning. adaptive: the
  // hardware share starts at hw_load and moves, batch by batch, to where the hardware and the CUDA
  // backend finish together (hw_load 0 and 1 stay as given). arena: a batch's outputs are views of
  // one allocation: 1, made on one stream of the decoder's own, shared by every caller (torch caches
  // blocks per stream: a freed arena then serves any lane); 2, made on the caller's stream; 0, one
  // allocation per image on the stream of the state that writes it; 3, as 1 but the batch is packed
  // into chunks of one size (16 MiB, or an eighth of the largest batch rounded up to a power of
  // two) and nvJPEG's scratch is on a second stream: blocks of one size serve any later batch, so
  // batches of changing sizes leave no cached blocks too small to reuse.
  // device_padding: bytes nvJPEG adds to each scratch buffer it grows.
  // lazy_cuda (with the hardware engines and 0 < hw_load): the CUDA backend (default handle,
  // decoders, states) is made on a background thread, 1: from construction, 2: once the first
  // batch has decoded; a decode() that needs it waits for it, and one marked first_batch sends every
  // image the engines take to them. 0: made by the constructor. 3: the other way round: the
  // constructor makes the CUDA backend (~0.1 s against the hardware side's ~0.6 s), the first batch
  // (first_batch) decodes on it alone, and the hardware side is made on the background thread;
  // later batches wait for it. preallocate: when the hardware
  // states' memory pools are turned on, 0: never, 1: as each state is made, 2: the first slot's
  // once the first batch has decoded (off the first batch's path).
  NvJpegDecoder(int64_t device_index, int64_t num_hw_states, int64_t num_cuda_states, double hw_load,
                int64_t hybrid_huffman_threshold, int64_t num_slots, bool hw_concurrent, bool blocking_sync,
                bool adaptive, int64_t arena, int64_t device_padding, int64_t lazy_cuda, int64_t preallocate,
                int64_t stream_priority = 0, bool share_hw_handle = false, bool pinned_input = false,
                bool hw_state_sync = true, bool host_waits = true);
  ~NvJpegDecoder();
  NvJpegDecoder(const NvJpegDecoder&) = delete;
  NvJpegDecoder& operator=(const NvJpegDecoder&) = delete;

  // Decodes encoded JPEGs (1-D uint8 CPU tensors) into CUDA uint8 HWC tensors, ready on the
  // caller's current stream. Non-JPEG or nvJPEG-unsupported inputs give std::nullopt;
  // corrupt JPEGs raise an error naming the sample index. `rois`: undefined, or an (n, 4) int64
  // CPU tensor of windows (y, x, h, w) in the stored image (a row with h <= 0: the whole image);
  // a sample with a window is decoded to just that window (nvJPEG's ROI decode: the engines
  // and kernels write only those pixels, so a random crop needs no full-size buffer). A window
  // outside its image is an error naming the sample.
  // first_batch: the pipeline's first batch (iteration 0). With lazy_cuda 1 or 2, every image the
  // engines take goes to them whatever the share, so that batch need not wait for the CUDA backend;
  // with 3, every image goes to the CUDA backend, so it need not wait for the hardware. Keyed on the
  // iteration, not on timing, so reruns route (and decode) every image the same way.
  std::vector<std::optional<at::Tensor>> decode(const std::vector<at::Tensor>& data,
                                                const std::string& output_format,
                                                const std::optional<at::Tensor>& rois, bool first_batch);
  // The same, for encoded JPEGs held as parts of one buffer (sample i: `sizes[i]` bytes at
  // `offsets[i]`, int64): no tensor per sample to make, pass and free.
  std::vector<std::optional<at::Tensor>> decode_packed(const at::Tensor& buffer, const at::Tensor& offsets,
                                                       const at::Tensor& sizes, const std::string& output_format,
                                                       const std::optional<at::Tensor>& rois, bool first_batch);

  bool hardware_available() const { return hw_handle_ != nullptr; }  // lazy_cuda 3: once made
  std::string hardware_status() const { return hw_status_; }
  int64_t device_index() const { return device_; }
  int64_t num_hw_states() const;    // per slot
  int64_t num_cuda_states() const;  // per slot (0 until the CUDA backend is made)
  bool cuda_ready() const { return cuda_ready_.load(std::memory_order_acquire); }
  int64_t lazy_cuda() const { return lazy_hw_ ? 3 : lazy_cuda_; }
  int64_t preallocate() const { return preallocate_; }
  // Slots ready now: the first is made by the constructor, the rest on a background thread
  // (making one takes ~0.5 s; the first batch needs only one).
  int64_t num_slots() const { return ready_slots_.load(std::memory_order_acquire); }
  double hw_load() const { return hw_load_; }
  // The hardware share now (hw_load until `adaptive` moves it).
  double hw_share() const { return share_.load(std::memory_order_relaxed); }
  bool adaptive() const { return adaptive_; }
  int64_t arena() const { return arena_; }
  bool hw_concurrent() const { return hw_concurrent_; }
  bool share_hw_handle() const { return share_hw_handle_; }
  bool pinned_input() const { return pinned_input_; }
  bool hw_state_sync() const { return hw_state_sync_; }
  bool host_waits() const { return host_waits_; }
  bool blocking_sync() const { return blocking_sync_; }
  // Where the images of the last finished decode() went (hardware, hybrid, retried, left to the
  // CPU) and the host time of its phases.
  std::map<std::string, int64_t> last_stats() {
    std::lock_guard<std::mutex> lock(stats_mu_);
    return stats_;
  }
  // Where the decoder's threads are now: for each place with a thread in it, how many are there
  // and the seconds since the latest came (the stall dump prints it: a hang inside nvJPEG and one
  // waiting for a lock read differently). Lock-free: callable while a decode() is stuck.
  std::map<std::string, std::pair<int64_t, double>> activity() const;
  // Host time of construction: the shared handles, the first slot, the slots made after it.
  std::map<std::string, int64_t> build_stats() {
    std::lock_guard<std::mutex> lock(stats_mu_);
    return build_us_;
  }

 private:
  struct HwState;
  struct CudaState;
  struct Job;
  struct Part {  // one sample's encoded bytes (the caller keeps them alive during decode())
    const uint8_t* data;
    size_t size;
  };
  std::vector<std::optional<at::Tensor>> decode_parts(const std::vector<Part>& parts,
                                                      const std::string& output_format,
                                                      const std::optional<at::Tensor>& rois, bool first_batch);
  struct Slot;
  struct Scratch;

  // first: the constructor's slot, whose first hardware state uses hw_handle_
  // reserve_hw: worker threads kept for hardware states added later (lazy_cuda 3's first slot)
  std::unique_ptr<Slot> make_slot(int64_t num_hw_states, int64_t num_cuda_states, bool first = false,
                                  bool with_cuda = true, int64_t reserve_hw = 0);
  void fill_slot(Slot& sl, int64_t num_hw_states, int64_t num_cuda_states, bool first, bool with_cuda = true,
                 int64_t reserve_hw = 0);
  void fill_cuda(Slot& sl, int64_t num_cuda_states);  // the slot's CUDA-backend states
  nvjpegStatus_t new_hw_handle(nvjpegHandle_t* h);     // a hardware handle with the paddings set
  cudaError_t new_stream(cudaStream_t* s) const;       // non-blocking, at stream_priority_
  static void destroy_hw_state(HwState& st) noexcept;  // after its last batch has run
  void make_default_handle();                          // handle_ and its decoders
  void make_cuda_side(int64_t num_cuda_states);        // lazy_cuda: the above for slot 0, then published
  bool wait_cuda();                                    // until the CUDA backend is made; false if it failed
  void make_hw_side(int64_t num_hw_states);            // lazy_cuda 3: hw_handle_ and slot 0's states, published
  void wait_hw();                                      // lazy_cuda 3: until that is done (or failed, or stopped)
  void preallocate_first_slot();                       // preallocate 2, after the first batch
  void trim_cuda_states(int64_t keep);                 // slot 0's CUDA-backend states down to `keep`
  static void destroy_cuda_state(CudaState& st) noexcept;
  static void destroy_slot(Slot& sl) noexcept;
  Slot& acquire(std::unique_lock<std::mutex>& lock);
  // `stream`'s later work runs after `event`: a GPU-side wait, or with host_waits_ the host's
  void wait_for(cudaStream_t stream, cudaEvent_t event);
  // pinned_input_: copies a hardware batch's bitstreams into `st`'s next pinned buffer and points
  // `ptrs` there; returns that buffer's index (-1: the caller's buffers are used)
  int pin_bitstreams(HwState& st, std::vector<const unsigned char*>& ptrs, const std::vector<size_t>& lens);
  void decode_hw(HwState& st, std::vector<Job*>& jobs, nvjpegOutputFormat_t fmt,
                 const std::vector<cudaEvent_t>& waits);
  void decode_cuda(CudaState& st, std::vector<Job*>& jobs, nvjpegOutputFormat_t fmt,
                   const std::vector<cudaEvent_t>& waits);
  void decode_one(CudaState& st, Job& job, nvjpegOutputFormat_t fmt, int slot);
  void destroy() noexcept;

  nvjpegDevAllocatorV2_t* dev_alloc();  // the scratch's allocator (arena 1, 3), else torch's per stream
  void adapt(size_t n_hw, int64_t hw_us, size_t n_cuda, int64_t cuda_us);

  int device_;
  double hw_load_;
  std::atomic<double> share_{0.0};
  bool adaptive_ = false;
  int64_t arena_ = 0;
  cudaStream_t arena_stream_ = nullptr;
  std::unique_ptr<Scratch> scratch_;  // arena 1: nvJPEG's scratch on arena_stream_  // arena 1: where every arena is allocated (no work runs on it)
  size_t device_padding_ = 0;
  std::atomic<int64_t> arena_bytes_{0};  // the size of every output arena (grows, never shrinks)
  std::atomic<int64_t> chunk_bytes_{16 << 20};  // arena 3: the size of every chunk (grows, never shrinks)
  cudaStream_t scratch_stream_ = nullptr;  // arena 3: where nvJPEG's scratch is allocated
  int64_t hybrid_threshold_;
  nvjpegHandle_t handle_ = nullptr;     // decoupled API (hybrid / GPU-hybrid decoders)
  nvjpegHandle_t hw_handle_ = nullptr;  // hardware backend, batched API
  nvjpegJpegDecoder_t dec_hybrid_ = nullptr;
  nvjpegJpegDecoder_t dec_gpu_ = nullptr;
  std::string hw_status_;
  static constexpr int kMaxSlots = 8;
  std::array<std::unique_ptr<Slot>, kMaxSlots> slots_;
  static constexpr int64_t kFallbackCudaStates = 2;  // a slot's CUDA states when the engines take every JPEG
  std::atomic<int64_t> cuda_states_now_{0};          // slot 0's, for num_cuda_states() without its lock
  std::atomic<int> ready_slots_{0};  // slots_[0, ready) are made; the filler thread adds the rest
  std::atomic<bool> stopping_{false};
  std::thread filler_;
  std::mutex fill_mu_;                 // the filler waits (fill_cv_) for the first decode or a stop
  std::condition_variable fill_cv_;
  bool first_decoded_ = false;         // under fill_mu_
  int64_t first_not_baseline_ = 0;     // under fill_mu_: the first batch's JPEGs off the fast path
  int64_t first_size_ = 0;             // under fill_mu_: and its size
  bool cuda_wanted_ = false;           // under fill_mu_: a decode() waits for the CUDA backend
  std::atomic<bool> first_decoded_flag_{false};
  int64_t lazy_cuda_ = 0;    // 0 while the constructor makes the CUDA backend itself
  bool lazy_hw_ = false;     // lazy_cuda 3 with the engines wanted: the hardware side comes later
  std::mutex hw_ready_mu_;   // wait_hw() waits (hw_ready_cv_) for hw_done_
  std::condition_variable hw_ready_cv_;
  bool hw_done_ = false;     // under hw_ready_mu_: the hardware side is made, or could not be
  int64_t preallocate_ = 1;
  int stream_priority_ = 0;  // of the decoder's own streams: 0 as torch's, negative runs first
  // every hardware state decodes with hw_handle_ (one handle's device memory, ~42 MiB on an H200,
  // instead of one per slot); only when hardware batches are serialised (!hw_concurrent_)
  bool share_hw_handle_ = false;
  // hardware batches read their bitstreams from pinned copies (TORCH_DALI_NVJPEG_PINNED_INPUT)
  // instead of the caller's pageable tensors, which nvJPEG uploads one by one through the driver
  bool pinned_input_ = false;
  // a hardware state's next batch waits (host) until its previous batch has run on the GPU
  bool hw_state_sync_ = true;
  // TORCH_DALI_HOST_WAITS: the host waits for an event a stream would otherwise wait for on the GPU
  // (wait_for), so no stream's head holds a hardware work queue shared with other streams
  bool host_waits_ = true;
  std::atomic<bool> cuda_ready_{false};  // handle_, the decoders and slot 0's `cu` may be used
  std::mutex cuda_mu_;                   // wait_cuda() waits (cuda_cv_) for cuda_done_
  std::condition_variable cuda_cv_;
  bool cuda_done_ = false;               // under cuda_mu_: made, or failed (cuda_error_)
  std::string cuda_error_;
  std::mutex next_mu_;
  size_t next_slot_ = 0;  // where a decode() waits when every slot is busy (round robin)
  std::mutex hw_mu_;  // one nvjpegDecodeBatched call at a time, across slots
  bool hw_concurrent_ = false;
  bool blocking_sync_ = false;
  // activity(): threads in each place and the steady-clock time (µs) the latest entered it
  enum Place : int { kWaitHwSide, kWaitSlot, kHeaders, kOutputs, kWaitHwLock, kHwDecode, kHybrid, kWaitPinned,
                     kWaitHwState, kRetry, kMakeHwSide, kPreallocate, kMakeSlot, kWaitCuda, kNumPlaces };
  struct At;  // RAII: a thread in a place for its scope
  std::array<std::atomic<int64_t>, kNumPlaces> at_count_{};
  std::array<std::atomic<int64_t>, kNumPlaces> at_since_us_{};
  std::mutex stats_mu_;
  std::map<std::string, int64_t> stats_;
  std::map<std::string, int64_t> build_us_;
};

}  // namespace torch_dali
