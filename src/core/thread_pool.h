// A fixed pool of worker threads for data-parallel kernels.
//
// The calling thread takes part as thread 0, so a pool of N threads starts
// N-1 workers. Between jobs, workers spin briefly (a decode step issues a few
// hundred small jobs back to back) and then sleep on a futex, so an idle
// server burns no CPU.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

namespace llmesh {

class ThreadPool {
 public:
  // num_threads <= 0 means one per hardware core.
  explicit ThreadPool(int num_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // Calls fn(thread_index, num_threads) once on every thread; returns when all are done.
  // Not reentrant: fn must not call run() on the same pool.
  void run(const std::function<void(int thread_index, int num_threads)>& fn);

  // Splits [0, n) into contiguous chunks, at least `min_chunk` long, one per thread.
  void parallel_for(int64_t n, int64_t min_chunk,
                    const std::function<void(int64_t begin, int64_t end)>& fn);

  static int default_num_threads();

 private:
  void worker_loop(int index);

  int num_threads_;
  std::vector<std::thread> workers_;
  const std::function<void(int, int)>* job_ = nullptr;
  std::atomic<uint32_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace llmesh
