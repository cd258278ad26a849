// A fixed set of compute threads for the encoder: one parallel loop at a time, the calling
// thread taking part as thread 0. Every parallel step of an encode (GEMM column blocks,
// attention heads) runs through the pool of the encoder that owns it, so the encoder never has
// more busy threads than it was given (OpenBLAS is kept single-threaded, see kernels.h).
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace reel::vision::internal {

class ThreadPool {
 public:
  // `threads` >= 1 compute threads in all, the caller included (threads - 1 are started).
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(task, thread) for every task in [0, tasks), spread over the threads (thread is in
  // [0, size())); returns when all are done. Not re-entrant: fn must not call Run.
  void Run(int tasks, const std::function<void(int task, int thread)>& fn);

 private:
  void WorkerLoop(int thread);
  void Work(int thread);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(int, int)>* fn_ = nullptr;
  int tasks_ = 0;
  std::atomic<int> next_{0};
  int busy_ = 0;             // workers still inside the current loop
  unsigned generation_ = 0;  // bumped for every Run
  bool stop_ = false;
};

}  // namespace reel::vision::internal
