#include "include/worker_pool.h"

namespace torch_dali {

WorkerPool::WorkerPool(int num_threads, std::function<void()> init) {
  threads_.reserve(num_threads);
  for (int i = 0; i < num_threads; ++i) threads_.emplace_back(&WorkerPool::loop, this, i, init);
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkerPool::run(const std::function<void(int)>& job) {
  std::unique_lock<std::mutex> lock(mu_);
  job_ = &job;
  error_ = nullptr;
  pending_ = static_cast<int>(threads_.size());
  ++generation_;
  start_cv_.notify_all();
  done_cv_.wait(lock, [this] { return pending_ == 0; });
  job_ = nullptr;
  if (error_) std::rethrow_exception(error_);
}

void WorkerPool::loop(int tid, std::function<void()> init) {
  std::exception_ptr init_error;
  try {
    if (init) init();
  } catch (...) {
    init_error = std::current_exception();
  }
  unsigned long long seen = 0;
  for (;;) {
    const std::function<void(int)>* job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
    }
    std::exception_ptr err = init_error;
    if (!err) {
      try {
        (*job)(tid);
      } catch (...) {
        err = std::current_exception();
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (err && !error_) error_ = err;
    if (--pending_ == 0) done_cv_.notify_all();
  }
}

}  // namespace torch_dali
