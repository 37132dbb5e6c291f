// ParallelFor's pool (parallel.h): ThreadCount() - 1 workers that sleep on a condition variable between jobs and,
// with the caller, take indices from one atomic counter. One job at a time: a caller that finds the pool busy
// (another thread of the host calling attnlab concurrently) runs its job serially instead of waiting.
#include "cpp/src/parallel.h"

#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#ifndef ATTNLAB_THREADS
#define ATTNLAB_THREADS 1
#endif

namespace attnlab {
namespace {

void RunSerially(size_t n, const std::function<void(size_t)>& fn) {
  for (size_t i = 0; i < n; ++i) fn(i);
}

#if ATTNLAB_THREADS

thread_local bool t_inside_job = false;  // nested ParallelFor calls run serially

class Pool {
 public:
  explicit Pool(size_t workers) {
    threads_.reserve(workers);
    for (size_t w = 0; w < workers; ++w) threads_.emplace_back([this] { WorkerLoop(); });
  }

  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  size_t workers() const { return threads_.size(); }

  // Runs the job if the pool is free; returns false (nothing run) when another caller holds it.
  bool TryRun(size_t n, const std::function<void(size_t)>& fn) {
    std::unique_lock<std::mutex> busy(job_mutex_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      fn_ = &fn;
      n_ = n;
      next_.store(0, std::memory_order_relaxed);
      active_ = threads_.size();
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    Work();
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return active_ == 0; });
    fn_ = nullptr;
    if (error_) std::rethrow_exception(error_);
    return true;
  }

 private:
  // Takes indices until none is left. After an exception the remaining indices are skipped.
  void Work() {
    t_inside_job = true;
    for (size_t i; (i = next_.fetch_add(1, std::memory_order_relaxed)) < n_;) {
      try {
        (*fn_)(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!error_) error_ = std::current_exception();
        next_.store(n_, std::memory_order_relaxed);
      }
    }
    t_inside_job = false;
  }

  void WorkerLoop() {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      Work();
      std::lock_guard<std::mutex> lock(mutex_);
      if (--active_ == 0) done_.notify_one();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex job_mutex_;  // held by the caller whose job runs
  std::mutex mutex_;      // guards everything below but next_
  std::condition_variable wake_, done_;
  const std::function<void(size_t)>* fn_ = nullptr;
  size_t n_ = 0;
  std::atomic<size_t> next_{0};
  size_t active_ = 0;  // workers still inside the current job
  uint64_t generation_ = 0;
  std::exception_ptr error_;
  bool stop_ = false;
};

std::mutex g_pool_mutex;  // guards g_pool's replacement; a running job holds its own reference
std::shared_ptr<Pool> g_pool;

#endif  // ATTNLAB_THREADS

}  // namespace

bool ThreadsSupported() { return ATTNLAB_THREADS != 0; }

size_t ThreadCount() {
#if ATTNLAB_THREADS
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  return g_pool ? g_pool->workers() + 1 : 1;
#else
  return 1;
#endif
}

void SetThreadCount(size_t n) {
#if ATTNLAB_THREADS
  const size_t workers = n > 1 ? n - 1 : 0;
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  if ((g_pool ? g_pool->workers() : 0) == workers) return;
  g_pool.reset();  // joins the old workers once no job uses them
  if (workers > 0) g_pool = std::make_shared<Pool>(workers);
#else
  (void)n;
#endif
}

void ParallelFor(size_t n, const std::function<void(size_t)>& fn) {
#if ATTNLAB_THREADS
  if (n > 1 && !t_inside_job) {
    std::shared_ptr<Pool> pool;
    {
      std::lock_guard<std::mutex> lock(g_pool_mutex);
      pool = g_pool;
    }
    if (pool && pool->TryRun(n, fn)) return;
  }
#endif
  RunSerially(n, fn);
}

void ParallelFor(size_t n, double flops_per_item, const std::function<void(size_t)>& fn, double min_flops) {
  if (static_cast<double>(n) * flops_per_item < min_flops) {
    RunSerially(n, fn);
  } else {
    ParallelFor(n, fn);
  }
}

}  // namespace attnlab
