// See include/stream_queues.h.
#include "include/stream_queues.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

namespace torch_dali {
namespace {

std::mutex g_mu;
std::vector<cudaStream_t> g_avoided;

struct Gate {
  std::atomic<bool> open{false};
};

// Runs on CUDA's host-function thread and holds the stream's queue head until opened; a bound
// keeps a probe whose caller died from blocking the queue for ever.
void CUDART_CB hold_until_open(void* p) {
  auto* g = static_cast<Gate*>(p);
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  while (!g->open.load(std::memory_order_acquire) && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::microseconds(20));
}

}  // namespace

bool streams_share_queue(cudaStream_t a, cudaStream_t b, int64_t wait_us) {
  if (a == b) return true;
  cudaEvent_t before = nullptr, ev = nullptr;
  if (cudaEventCreateWithFlags(&before, cudaEventDisableTiming) != cudaSuccess) return false;
  if (cudaEventCreateWithFlags(&ev, cudaEventDisableTiming) != cudaSuccess) {
    cudaEventDestroy(before);
    return false;
  }
  // b's own earlier work must not be what keeps the event back
  cudaEventRecord(before, b);
  cudaEventSynchronize(before);
  Gate gate;
  bool shared = false;
  if (cudaLaunchHostFunc(a, hold_until_open, &gate) == cudaSuccess) {
    cudaEventRecord(ev, b);
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(wait_us);
    cudaError_t q = cudaEventQuery(ev);
    while (q == cudaErrorNotReady && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::microseconds(10));
      q = cudaEventQuery(ev);
    }
    shared = q == cudaErrorNotReady;
    gate.open.store(true, std::memory_order_release);
    cudaStreamSynchronize(a);  // the host function has returned: `gate` may go
    cudaEventSynchronize(ev);
  }
  cudaEventDestroy(ev);
  cudaEventDestroy(before);
  return shared;
}

void avoid_queue_of(cudaStream_t s) {
  std::lock_guard<std::mutex> l(g_mu);
  if (std::find(g_avoided.begin(), g_avoided.end(), s) == g_avoided.end()) g_avoided.push_back(s);
}

std::vector<cudaStream_t> avoided_streams() {
  std::lock_guard<std::mutex> l(g_mu);
  return g_avoided;
}

cudaError_t new_stream_avoiding(cudaStream_t* s, int priority) {
  cudaError_t e = cudaStreamCreateWithPriority(s, cudaStreamNonBlocking, priority);
  const std::vector<cudaStream_t> avoid = avoided_streams();
  if (e != cudaSuccess || avoid.empty()) return e;
  std::vector<cudaStream_t> rejected;
  for (int tries = 1; tries < 8; ++tries) {
    bool clash = false;
    for (cudaStream_t o : avoid)
      if (streams_share_queue(*s, o, 2000)) clash = true;
    if (!clash) break;
    rejected.push_back(*s);
    cudaStream_t next = nullptr;
    if (cudaStreamCreateWithPriority(&next, cudaStreamNonBlocking, priority) != cudaSuccess) {
      *s = rejected.back();  // keep the one that works
      rejected.pop_back();
      break;
    }
    *s = next;
  }
  for (cudaStream_t r : rejected) cudaStreamDestroy(r);
  return cudaSuccess;
}

}  // namespace torch_dali
