// A fixed set of threads that each run the same job (given its thread id) and report back;
// the decoder gives every nvJPEG state its own thread so host-side decode work runs in parallel.
#pragma once
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace torch_dali {

class WorkerPool {
 public:
  // `init` runs once on each new thread (e.g. to bind the CUDA device).
  WorkerPool(int num_threads, std::function<void()> init);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int size() const { return static_cast<int>(threads_.size()); }
  // Runs job(tid) on every thread, blocks until all return; rethrows the first exception.
  void run(const std::function<void(int)>& job);

 private:
  void loop(int tid, std::function<void()> init);

  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable start_cv_, done_cv_;
  const std::function<void(int)>* job_ = nullptr;
  unsigned long long generation_ = 0;
  int pending_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

}  // namespace torch_dali
