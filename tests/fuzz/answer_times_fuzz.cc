// libFuzzer target for what Reel reads out of a model's answer: time references
// (llm/time_references.*) and the `chapters` check (llm/chapters.*). The first byte picks the
// timeline (frames, duration) the chapters are checked against; the rest is the answer. Checks: no
// crash; every reference lies inside the text, in order, not overlapping, with a finite time and
// a range's end not before its start; validated chapters are ordered, not overlapping and inside
// the item, and snapped frames exist.
//
// Build and run (clang-14, ASan + UBSan), bounded:
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -I. \
//     tests/fuzz/answer_times_fuzz.cc llm/time_references.cc llm/chapters.cc base/status.cc \
//     -o /tmp/answer_times_fuzz
//   /tmp/answer_times_fuzz -max_total_time=300 -max_len=4096 tests/fuzz/corpus/answer_times
// or configure with -DREEL_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ (target answer_times_fuzz).
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "llm/chapters.h"
#include "llm/time_references.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  size_t last_end = 0;
  for (const reel::llm::TimeReference& r : reel::llm::FindTimeReferences(text)) {
    if (r.begin < last_end || r.end <= r.begin || r.end > text.size()) std::abort();
    if (!std::isfinite(r.seconds) || r.seconds < 0) std::abort();
    if (r.end_seconds && !(*r.end_seconds >= r.seconds)) std::abort();
    last_end = r.end;
  }
  (void)reel::llm::ParseTimeText(text);

  reel::llm::ChapterTimeline timeline;
  const int frames = data[0] % 16;
  for (int i = 0; i < frames; ++i) timeline.frame_times.push_back(i * 7.5);
  if (data[0] & 0x80) timeline.duration_seconds = frames * 7.5 + (data[0] & 0x10 ? 3 : 0);
  auto chapters = reel::llm::ValidateChapters(text, timeline);
  if (chapters.ok()) {
    double prev_end = 0;
    for (const reel::llm::Chapter& c : *chapters) {
      if (!(c.end_seconds > c.start_seconds - 1e-9) || c.start_seconds < prev_end - 1e-9) {
        std::abort();
      }
      if (c.start_frame && *c.start_frame >= timeline.frame_times.size()) std::abort();
      if (c.end_frame && *c.end_frame >= timeline.frame_times.size()) std::abort();
      prev_end = c.end_seconds;
    }
    (void)reel::llm::ChaptersToJson(*chapters);
  }
  return 0;
}
