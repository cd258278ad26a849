// libFuzzer target for what Reel reads out of a model's answer: time references
// (llm/time_references.*) and the `chapters` check (llm/chapters.*). The first byte picks the
// timeline (frames, duration) the chapters are checked against; the rest is the answer. Checks: no
// crash; every reference lies inside the text, in order, not overlapping, with a finite time and
// a range's end not before its start; validated chapters are ordered, not overlapping and inside
// the item, and snapped frames exist.
//
// Run: bash scripts/fuzz --seconds 60 answer_times (seeds in tests/fuzz/corpus/answer_times/).
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

#include "llm/chapters.h"
#include "llm/time_references.h"
#include "tests/fuzz/fuzz_support.h"

using reel::fuzz::Require;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  size_t last_end = 0;
  for (const reel::llm::TimeReference& r : reel::llm::FindTimeReferences(text)) {
    Require(r.begin >= last_end && r.end > r.begin && r.end <= text.size(),
            "references inside the text, in order, not overlapping", text);
    Require(std::isfinite(r.seconds) && r.seconds >= 0, "a finite time, not negative", text);
    Require(!r.end_seconds || *r.end_seconds >= r.seconds, "a range ends after it starts", text);
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
      Require(c.end_seconds > c.start_seconds - 1e-9 && c.start_seconds >= prev_end - 1e-9,
              "chapters ordered and not overlapping", text);
      Require(!c.start_frame || *c.start_frame < timeline.frame_times.size(), "start frame exists",
              text);
      Require(!c.end_frame || *c.end_frame < timeline.frame_times.size(), "end frame exists", text);
      prev_end = c.end_seconds;
    }
    (void)reel::llm::ChaptersToJson(*chapters);
  }
  return 0;
}
