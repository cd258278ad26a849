// The database of the end-to-end model job, made the way a user makes one: a generated job
// (three videos generated with the ffmpeg CLI, each with a side-car subtitle file, and a text
// note), `reel run` against the fake OpenAI-compatible server (tests/support/fake_model_server.h)
// with a `describe` prompt and two chapters prompts (`chapters`, the built-in question, and
// `scenes`, a chapters prompt with its own question), the server scripted per item and prompt:
//
//   item       describe                            chapters              scenes
//   a.mp4 80 s times as MM:SS, H:MM:SS, "at 75      good                  not JSON (cut short),
//              seconds", a time of day, past end                         then good when asked
//                                                                         again (H:MM:SS times)
//   b.mp4 12 s "until 0:11"                         overlapping, twice    good
//   c.mp4 12 s a 503 (retried), then the default    out of range, twice   not JSON, twice
//   notes.md   "at 00:30" (a document: no frames)   (not asked: a document has no timeline)
//
// Sampling at 0.4 fps (a frame every 2.5 s, and the last one), streaming answers (time to first
// token), prices (cost), concurrency 2. The describe answer about a.mp4 takes 0.3 s more.
//
// Built once per build tree and `reel` binary (the recipe, the binary and the fake server's
// script are its key), in the build tree's test-fixtures folder, under a lock, so the test
// processes ctest runs in parallel share one build. The folder is shared: callers only read it
// (run commands in it that read the database, write their output elsewhere).
#pragma once

#include <string>

namespace reel::testing {

struct ModelJobDb {
  std::string error;  // why the database could not be made ("" when it was)
  std::string dir;    // the job folder: job.yaml, media/, out.db
  std::string db;     // dir + "/out.db"
  int run_exit_code = -1;
  std::string run_err;     // `reel run`'s standard error
  std::string server_log;  // every request the fake server received (its JSON log)
};

// The scripted answers, for tests that compare what was stored with what the model wrote.
inline constexpr const char* kDescribeA =
    "At 00:03 the colour bars scroll left. From 00:06-00:09 the counter passes five. At 0:01:04 "
    "the pattern repeats, and at 75 seconds it fades. A meeting at 10:30 am is not a video time; "
    "at 2:00 nothing happens (past the end).";
inline constexpr const char* kDescribeB = "Nothing but bars until 0:11.";
inline constexpr const char* kDescribeNotes = "The note says the talk starts at 00:30.";
inline constexpr const char* kChaptersA =
    R"({"chapters": [{"start": "00:00", "end": "00:31", "title": "Bars", "summary": "The colour )"
    R"(bars scroll."}, {"start": "00:31", "end": "01:04", "title": "Counter", "summary": "The )"
    R"(counter runs."}, {"start": "01:04", "end": "01:20", "title": "Ending", "summary": "The )"
    R"(pattern repeats to the end."}]})";
inline constexpr const char* kScenesACutShort =
    R"({"chapters": [{"start": "00:00", "end": "00:40", "title": "First half")";
inline constexpr const char* kScenesA =
    R"({"chapters": [{"start": "0:00:00", "end": "0:00:40", "title": "First half", "summary": )"
    R"("Bars and counter."}, {"start": "0:00:40", "end": "0:01:20", "title": "Second half", )"
    R"("summary": "The same again."}]})";
inline constexpr const char* kChaptersBOverlapping =
    R"({"chapters": [{"start": "00:00", "end": "00:08", "title": "A", "summary": "a"}, )"
    R"({"start": "00:05", "end": "00:12", "title": "B", "summary": "b"}]})";
inline constexpr const char* kScenesB =
    R"({"chapters": [{"start": "00:00", "end": "00:06", "title": "Bars", "summary": ""}, )"
    R"({"start": "00:06", "end": "00:12", "title": "Counter", "summary": "The counter."}]})";
inline constexpr const char* kChaptersCOutOfRange =
    R"({"chapters": [{"start": "00:00", "end": "00:10", "title": "A", "summary": "a"}, )"
    R"({"start": "00:10", "end": "00:45", "title": "B", "summary": "b"}]})";
inline constexpr const char* kScenesCNotJson = "Scene one shows bars; scene two shows a counter.";

// The shared database (made on the first call of any test process of this build tree and
// binary). `reel_binary` is the `reel` executable.
const ModelJobDb& SharedModelJobDb(const std::string& reel_binary);

}  // namespace reel::testing
