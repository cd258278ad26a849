#include "pipeline/internal/parallel_decoder.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <limits>
#include <mutex>
#include <numeric>
#include <system_error>
#include <thread>
#include <unordered_set>

#include "pipeline/internal/frame_converter.h"

namespace reel::pipeline::internal {
namespace {

// Frames converted by the workers, handed out group by group in order. A worker ahead of the
// group being delivered waits once `max_waiting` frames are waiting; the worker on that group
// never waits, so the pipeline always moves.
class OrderedFrames {
 public:
  OrderedFrames(int groups, size_t max_waiting)
      : waiting_(groups), finished_(groups, 0), max_waiting_(max_waiting) {}

  Status Push(int group, ConvertedFrame&& frame) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return stopped_ || group == current_ || count_ < max_waiting_; });
    if (stopped_) return Cancelled("decoding stopped");
    waiting_[group].push_back(std::move(frame));
    ++count_;
    changed_.notify_all();
    return Status::Ok();
  }

  void Finish(int group) {
    std::lock_guard lock(mutex_);
    finished_[group] = 1;
    changed_.notify_all();
  }

  // Stops everything; the first failure is the one reported.
  void Fail(Status status, bool cannot_seek = false) {
    std::lock_guard lock(mutex_);
    if (!stopped_) {
      error_ = std::move(status);
      cannot_seek_ = cannot_seek;
    }
    stopped_ = true;
    changed_.notify_all();
  }

  // Whether what stopped decoding was a demuxer that cannot seek.
  bool cannot_seek() {
    std::lock_guard lock(mutex_);
    return cannot_seek_;
  }

  bool stopped() {
    std::lock_guard lock(mutex_);
    return stopped_;
  }

  // Runs on the calling thread until every group is delivered or something failed.
  Status Deliver(const ConvertedFrameSink& sink) {
    const int groups = static_cast<int>(waiting_.size());
    std::unique_lock lock(mutex_);
    while (current_ < groups) {
      changed_.wait(lock,
                    [&] { return stopped_ || !waiting_[current_].empty() || finished_[current_]; });
      if (stopped_) return error_;
      if (!waiting_[current_].empty()) {
        ConvertedFrame frame = std::move(waiting_[current_].front());
        waiting_[current_].pop_front();
        --count_;
        changed_.notify_all();
        lock.unlock();
        Status s = sink(std::move(frame));
        lock.lock();
        if (!s.ok()) {
          if (!stopped_) error_ = s;
          stopped_ = true;
          changed_.notify_all();
          return s;
        }
      } else {
        ++current_;
        changed_.notify_all();
      }
    }
    return Status::Ok();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::deque<ConvertedFrame>> waiting_;
  std::vector<char> finished_;
  size_t max_waiting_;
  size_t count_ = 0;
  int current_ = 0;
  bool stopped_ = false;
  bool cannot_seek_ = false;
  Status error_;
};

// One worker: takes the next undecoded group in `order` until none is left or decoding stopped.
void DecodeGroups(const ParallelDecodeJob& job, const std::vector<int>& order,
                  DecodeCounters& counters, std::atomic<int>& next_group, OrderedFrames& out) {
  Demuxer demuxer(job.path, job.index.stream_index, job.deadline);
  Status opened = demuxer.Open();
  if (!opened.ok()) return out.Fail(opened);
  Result<UniqueCodecContext> codec = OpenDecoder(demuxer.stream(), /*threads=*/1, job.path);
  if (!codec.ok()) return out.Fail(codec.status());
  FrameConverter converter(job.target, job.rotation, job.deinterlace);
  VideoDecoder decoder(job.path, demuxer, codec->get(), job.index, job.limits, job.deadline,
                       counters, /*restart_when_seek_fails=*/false);
  const int groups = static_cast<int>(order.size());
  for (int taken = next_group++; taken < groups && !out.stopped(); taken = next_group++) {
    const int g = order[taken];
    std::unordered_set<int> wanted(job.groups[g].begin(), job.groups[g].end());
    Status s = decoder.Decode(
        job.groups[g], /*all_frames=*/false, [&](int f, const AVFrame* picture) -> Status {
          if (wanted.count(f) == 0) return Status::Ok();
          // A damaged picture is only reported: the caller decodes that frame again.
          if (IsDamaged(picture)) return out.Push(g, {f, /*damaged=*/true, Image{}});
          wanted.erase(f);
          REEL_ASSIGN_OR_RETURN(Image image, converter.Convert(picture, job.path));
          return out.Push(g, {f, /*damaged=*/false, std::move(image)});
        });
    // VideoDecoder fails with kUnavailable only when the demuxer cannot seek.
    if (!s.ok()) return out.Fail(s, /*cannot_seek=*/s.code() == ErrorCode::kUnavailable);
    out.Finish(g);
  }
}

}  // namespace

Result<ParallelOutcome> DecodeInParallel(const ParallelDecodeJob& job, DecodeCounters& counters,
                                         const ConvertedFrameSink& sink) {
  // Enough waiting frames to keep every worker busy, at most about 256 MB of them.
  const size_t frame_bytes = static_cast<size_t>(job.target.width) * job.target.height * 3 + 1;
  const size_t max_waiting =
      std::max<size_t>(2 * job.workers, std::min<size_t>(64, (256u << 20) / frame_bytes));
  OrderedFrames frames(static_cast<int>(job.groups.size()), max_waiting);

  // Groups are taken in order, so frames wait briefly. When every frame fits in the waiting room
  // no worker can ever wait, and the costliest groups (most packets) go first instead: the last
  // group taken is then a short one and no core idles while another finishes a long one.
  std::vector<int> order(job.groups.size());
  std::iota(order.begin(), order.end(), 0);
  size_t total_frames = 0;
  for (const std::vector<int>& g : job.groups) total_frames += g.size();
  if (total_frames < max_waiting) {
    std::vector<int> cost(job.groups.size());
    for (size_t g = 0; g < job.groups.size(); ++g) {
      int first = std::numeric_limits<int>::max(), last = 0;
      for (int f : job.groups[g]) {
        PacketRun run = PacketsFor(job.index, f);
        first = std::min(first, run.first);
        last = std::max(last, run.last);
      }
      cost[g] = last - first + 1;
    }
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return cost[a] > cost[b]; });
  }

  std::atomic<int> next_group{0};
  std::vector<std::thread> workers;
  for (int i = 0; i < job.workers; ++i) {
    try {
      workers.emplace_back([&] { DecodeGroups(job, order, counters, next_group, frames); });
    } catch (const std::system_error&) {
      break;  // out of threads: the ones running take every group
    }
  }
  if (workers.empty()) return ParallelOutcome::kFellShort;
  Status delivered = frames.Deliver(sink);
  if (!delivered.ok()) frames.Fail(delivered);
  for (std::thread& t : workers) t.join();
  if (frames.cannot_seek()) return ParallelOutcome::kFellShort;
  if (!delivered.ok()) return delivered;
  return ParallelOutcome::kDone;
}

}  // namespace reel::pipeline::internal
