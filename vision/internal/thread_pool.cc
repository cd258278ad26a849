#include "vision/internal/thread_pool.h"

namespace reel::vision::internal {

ThreadPool::ThreadPool(int threads) {
  for (int t = 1; t < threads; ++t) {
    try {
      workers_.emplace_back([this, t] { WorkerLoop(t); });
    } catch (const std::system_error&) {
      break;  // fewer threads than asked: the loops still run, on fewer cores
    }
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::Work(int thread) {
  for (int task = next_.fetch_add(1); task < tasks_; task = next_.fetch_add(1)) {
    (*fn_)(task, thread);
  }
}

void ThreadPool::WorkerLoop(int thread) {
  unsigned seen = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
    seen = generation_;
    lock.unlock();
    Work(thread);
    lock.lock();
    if (--busy_ == 0) done_.notify_one();
  }
}

void ThreadPool::Run(int tasks, const std::function<void(int task, int thread)>& fn) {
  if (tasks <= 0) return;
  if (workers_.empty() || tasks == 1) {
    for (int task = 0; task < tasks; ++task) fn(task, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = &fn;
    tasks_ = tasks;
    next_.store(0);
    busy_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  wake_.notify_all();
  Work(0);
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return busy_ == 0; });
  fn_ = nullptr;
}

}  // namespace reel::vision::internal
