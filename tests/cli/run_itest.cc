// End-to-end tests of `reel validate`, `reel run` (skipping, bad inputs, locking, signals) and
// sharding with `reel merge`.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <set>

#include "storage/database.h"
#include "tests/cli/cli_test_util.h"
#include "tests/support/test_environment.h"

namespace reel::testing {
namespace {

namespace fs = std::filesystem;

// A job directory with `videos` copies of a small clip, a side-car .srt for the first one, and
// a Markdown document.
std::string MakeJobDir(const std::string& test, int videos, const std::string& sampling,
                       const std::string& clip) {
  std::string dir = ScratchDir(test);
  for (int i = 0; i < videos; ++i) {
    char name[32];
    std::snprintf(name, sizeof(name), "media/v%02d.mp4", i);
    fs::create_directories(dir + "/media");
    fs::copy_file(clip, dir + "/" + name, fs::copy_options::overwrite_existing);
  }
  WriteText(dir + "/media/v00.srt",
            "1\n00:00:00,500 --> 00:00:01,500\nA penguin waddles in\n\n"
            "2\n00:00:01,500 --> 00:00:02,500\nIt slides away\n");
  WriteText(dir + "/media/notes.md",
            "# Notes\n\nThe penguin is a bird.\n\n## More\n\nAnother paragraph.\n");
  WriteText(dir + "/job.yaml", "name: " + test + "\ninputs:\n  - media/*.mp4\n  - media/*.md\n" +
                                   "sampling:\n" + sampling + "storage:\n  database: out.db\n");
  return dir;
}

std::map<std::string, nlohmann::json> ItemsByPath(const std::string& db) {
  std::map<std::string, nlohmann::json> items;
  for (const auto& row :
       QueryJson(db,
                 "SELECT path, status, attempts, content_hash, settings_hash, mtime_ns, "
                 "started_at, finished_at, error FROM items")) {
    items[row["path"].get<std::string>()] = row;
  }
  return items;
}

TEST(ValidateCommandTest, ReportsLineAndColumnAndExitsTwo) {
  std::string dir = ScratchDir("validate_errors");
  fs::copy_file(SmallClip(), dir + "/clip.mp4");
  struct Case {
    std::string text;
    std::string expected;
  } cases[] = {
      {"name: v\ninputs: [clip.mp4]\nsampeling:\n  fps: 1\n",
       "bad.yaml:3:1: unknown key 'sampeling' (did you mean 'sampling'?)"},
      {"name: v\ninputs: [clip.mp4]\nsampling:\n  fps: -1\n",
       "bad.yaml:4:8: 'sampling.fps' must be greater than 0"},
      // At the unclosed bracket, not where the parser gave up.
      {"name: v\ninputs: [clip.mp4\nsampling: {fps: 1}\n",
       "bad.yaml:2:9: YAML syntax error: this '[' is never closed"},
      {"inputs: [clip.mp4]\n", "bad.yaml:1:1: missing required key 'name'"},
  };
  for (const Case& c : cases) {
    WriteText(dir + "/bad.yaml", c.text);
    CommandResult r = Reel("validate bad.yaml", dir);
    EXPECT_EQ(r.exit_code, 2) << c.text;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << "nothing is printed for an invalid job";
  }
  // A missing input is an error too; a valid file prints the resolved job.
  WriteText(dir + "/bad.yaml", "name: v\ninputs: [nope.mp4]\n");
  CommandResult missing = Reel("validate bad.yaml", dir);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("nope.mp4"), std::string::npos) << missing.err;
  WriteText(dir + "/good.yaml", "name: v\ninputs: [clip.mp4]\n");
  CommandResult good = Reel("validate good.yaml", dir);
  EXPECT_EQ(good.exit_code, 0) << good.err;
  EXPECT_NE(good.out.find("policy: fps"), std::string::npos) << good.out;
  // `reel run` refuses an invalid job with the same exit code and message.
  WriteText(dir + "/bad.yaml", cases[1].text);
  CommandResult run = Reel("run bad.yaml", dir);
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("bad.yaml:4:8:"), std::string::npos) << run.err;
}

TEST(PlanCommandTest, ListsEveryInputInOrderWithActionReasonAndEstimate) {
  std::string dir = MakeJobDir("plan", 6, "  policy: count\n  count: 4\n", SmallClip());
  WriteText(dir + "/media/v03.mp4", "not a video");  // fails alone
  CommandResult before = Reel("plan job.yaml --format json", dir);
  ASSERT_EQ(before.exit_code, 0) << before.err;
  nlohmann::json rows = nlohmann::json::parse(before.out);
  ASSERT_EQ(rows.size(), 7u);
  std::vector<std::string> paths;
  for (const auto& row : rows) paths.push_back(row["path"].get<std::string>());
  EXPECT_TRUE(std::is_sorted(paths.begin(), paths.end())) << "input order, whatever thread";
  for (const auto& row : rows) {
    const std::string path = row["path"];
    EXPECT_EQ(row["action"], "process") << path;
    if (path.ends_with("v03.mp4")) {
      EXPECT_TRUE(row["est_frames"].is_null()) << "a file that does not probe has no estimate";
    } else if (path.ends_with(".mp4")) {
      EXPECT_EQ(row["est_frames"], 4) << path;
    } else {
      EXPECT_EQ(row["est_frames"], 0) << path;
    }
  }
  EXPECT_NE(before.err.find("7 to process, 0 to skip; about 20 frames"), std::string::npos)
      << before.err;

  ASSERT_EQ(Reel("run job.yaml", dir).exit_code, 1) << "v03.mp4 fails";
  WriteText(dir + "/media/notes.md", "# Changed\n");
  CommandResult after = Reel("plan job.yaml --format json", dir);
  ASSERT_EQ(after.exit_code, 0) << after.err;
  std::map<std::string, std::string> action;
  for (const auto& row : nlohmann::json::parse(after.out)) {
    action[fs::path(row["path"].get<std::string>()).filename().string()] = row["action"];
  }
  EXPECT_EQ(action["v00.mp4"], "skip");
  EXPECT_EQ(action["v05.mp4"], "skip");
  EXPECT_EQ(action["notes.md"], "process") << "changed content";
  EXPECT_EQ(action["v03.mp4"], "skip") << "failed items wait for --retry-failed";
  CommandResult retry = Reel("plan job.yaml --format json --retry-failed", dir);
  for (const auto& row : nlohmann::json::parse(retry.out)) {
    if (row["path"].get<std::string>().ends_with("v03.mp4")) {
      EXPECT_EQ(row["action"], "process");
    }
  }
}

TEST(RunCommandTest, RerunSkipsFinishedWorkAndRedoesChangedSettings) {
  std::string dir = MakeJobDir("rerun", 3, "  policy: fps\n  fps: 1\n", SmallClip());
  const std::string db = dir + "/out.db";
  CommandResult first = Reel("run job.yaml --log-format json", dir);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  nlohmann::json summary = LastJsonLine(first.err);
  EXPECT_EQ(summary["event"], "run_finished");
  EXPECT_EQ(summary["done"], 4);
  auto before = ItemsByPath(db);
  ASSERT_EQ(before.size(), 4u);
  for (const auto& [path, item] : before) EXPECT_EQ(item["status"], "done") << path;
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM segments WHERE source = 'sidecar:v00.srt'"), 2);

  // The plan agrees: nothing to do.
  CommandResult plan = Reel("plan job.yaml --format json", dir);
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  for (const auto& row : nlohmann::json::parse(plan.out)) EXPECT_EQ(row["action"], "skip");

  CommandResult second = Reel("run job.yaml --log-format json", dir);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(LastJsonLine(second.err)["done"], 0);
  EXPECT_EQ(LastJsonLine(second.err)["skipped"], 4);
  EXPECT_EQ(ItemsByPath(db), before) << "a rerun changes no item row";

  // Touching a file (same bytes, new mtime) re-hashes it but does not redo it.
  const std::string touched = dir + "/media/v01.mp4";
  struct timespec times[2] = {{1700000000, 0}, {1700000000, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, touched.c_str(), times, 0), 0);
  CommandResult third = Reel("run job.yaml --log-format json", dir);
  ASSERT_EQ(third.exit_code, 0) << third.err;
  EXPECT_EQ(LastJsonLine(third.err)["done"], 0);
  auto after_touch = ItemsByPath(db);
  EXPECT_EQ(after_touch[touched]["attempts"], before[touched]["attempts"]);
  EXPECT_EQ(after_touch[touched]["finished_at"], before[touched]["finished_at"]);
  EXPECT_EQ(after_touch[touched]["mtime_ns"], int64_t{1700000000} * 1000000000);

  // New sampling settings redo the videos (not the document) with the new frame count.
  const int64_t frames_before = QueryInt(db, "SELECT count(*) FROM frames");
  std::string job = ReadText(dir + "/job.yaml");
  job.replace(job.find("fps: 1"), 6, "fps: 2");
  WriteText(dir + "/job.yaml", job);
  CommandResult fourth = Reel("run job.yaml --log-format json", dir);
  ASSERT_EQ(fourth.exit_code, 0) << fourth.err;
  EXPECT_EQ(LastJsonLine(fourth.err)["done"], 3);
  EXPECT_EQ(LastJsonLine(fourth.err)["skipped"], 1);
  auto after_change = ItemsByPath(db);
  EXPECT_EQ(after_change[dir + "/media/notes.md"], before[dir + "/media/notes.md"]);
  EXPECT_EQ(after_change[touched]["attempts"], 1) << "a settings change resets the attempts";
  EXPECT_NE(after_change[touched]["settings_hash"], before[touched]["settings_hash"]);
  EXPECT_GT(QueryInt(db, "SELECT count(*) FROM frames"), frames_before);
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(*) - count(DISTINCT item_id || '/' || sample_index) "
                     "FROM frames"),
            0);
}

TEST(RunCommandTest, BadInputsFailAloneWithMessagesNamingTheFile) {
  std::string dir = ScratchDir("bad_inputs");
  fs::create_directories(dir + "/media");
  fs::copy_file(SmallClip(), dir + "/media/good.mp4");
  WriteText(dir + "/media/zero.mp4", "");
  std::string noise(6000, '\0');
  for (size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<char>((i * 7919 + 13) % 251);
  WriteText(dir + "/media/random.mp4", noise);
  WriteText(dir + "/media/text.mp4", "this is not a video, just some text\n");
  std::string clip = ReadText(SmallClip());
  WriteText(dir + "/media/truncated.mp4", clip.substr(0, clip.size() / 2));
  WriteText(dir + "/job.yaml", "name: bad\ninputs: [media]\n");
  CommandResult r = Reel("run job.yaml", dir);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto items = ItemsByPath(dir + "/bad.db");
  ASSERT_EQ(items.size(), 5u);
  EXPECT_EQ(items[dir + "/media/good.mp4"]["status"], "done");
  for (const char* bad : {"zero.mp4", "random.mp4", "text.mp4", "truncated.mp4"}) {
    const std::string path = dir + "/media/" + bad;
    EXPECT_EQ(items[path]["status"], "failed") << bad;
    EXPECT_NE(items[path]["error"].get<std::string>().find(path), std::string::npos)
        << items[path]["error"];
    EXPECT_NE(r.err.find(path), std::string::npos) << "stderr names " << bad;
  }
  EXPECT_NE(r.err.find("4 failed"), std::string::npos) << r.err;
  // Failed items are not retried unless asked; a run that skips them did its work (0), is
  // recorded succeeded and does not name them again (`reel status` lists them).
  CommandResult again = Reel("run job.yaml --log-format json", dir);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(LastJsonLine(again.err)["skipped"], 5);
  EXPECT_EQ(LastJsonLine(again.err)["status"], "succeeded") << again.err;
  EXPECT_EQ(again.err.find("\"item_failed\""), std::string::npos) << again.err;
  EXPECT_EQ(again.err.find("\"warning\""), std::string::npos) << again.err;
  EXPECT_TRUE(LastJsonLine(again.err).value("message", "").empty()) << again.err;
  EXPECT_NE(Reel("status --db bad.db", dir).out.find("zero.mp4"), std::string::npos);
  CommandResult retry = Reel("run job.yaml --retry-failed --log-format json", dir);
  EXPECT_EQ(retry.exit_code, 1);
  EXPECT_EQ(LastJsonLine(retry.err)["failed"], 4);
  EXPECT_EQ(QueryInt(dir + "/bad.db", "SELECT attempts FROM items WHERE path LIKE '%zero.mp4'"), 2);
}

TEST(RunCommandTest, AVideoThatFailsKeepsItsSubtitlesSearchable) {
  // An audio-only MP4 with a side-car .srt and a subtitle stream of its own: an audio item (its
  // sound transcribed), its cues read with it. A video that is not one (no streams) beside two
  // side-cars fails with its reason; its text is stored all the same. `reel search` finds both.
  std::string dir = ScratchDir("failed_video_text");
  fs::create_directories(dir + "/media");
  WriteText(dir + "/media/in.srt", "1\n00:00:00,000 --> 00:00:01,000\nA humming walrus\n");
  std::string tone = GeneratedMedia("tone_subs.mp4", "-f lavfi -i sine=d=2 -i " +
                                                         ShellQuote(dir + "/media/in.srt") +
                                                         " -map 0 -map 1 -c:a aac -c:s mov_text");
  fs::remove(dir + "/media/in.srt");
  fs::copy_file(tone, dir + "/media/tone.mp4");
  WriteText(dir + "/media/tone.srt",
            "1\n00:00:00,500 --> 00:00:01,500\nThe narwhal sings\n\n"
            "2\n00:00:01,500 --> 00:00:02,000\nThe narwhal rests\n");
  WriteText(dir + "/media/broken.mp4", "not a video at all, no streams here");
  WriteText(dir + "/media/broken.en.srt", "1\n00:00:00,000 --> 00:00:01,000\nA lonely axolotl\n");
  WriteText(dir + "/job.yaml", "name: text\ninputs: [media]\n");
  CommandResult r = Reel("run job.yaml", dir);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto items = ItemsByPath(dir + "/text.db");
  ASSERT_EQ(items.size(), 2u) << r.err;
  EXPECT_EQ(items[dir + "/media/tone.mp4"]["status"], "done") << r.err;
  EXPECT_EQ(
      QueryJson(dir + "/text.db", "SELECT kind FROM items WHERE path LIKE '%tone.mp4'")[0]["kind"],
      "audio");
  EXPECT_EQ(items[dir + "/media/broken.mp4"]["status"], "failed");
  EXPECT_EQ(QueryInt(dir + "/text.db",
                     "SELECT count(*) FROM segments s JOIN items i ON i.id = s.item_id "
                     "WHERE i.path LIKE '%tone.mp4' AND s.source != 'speech'"),
            3);
  EXPECT_EQ(QueryInt(dir + "/text.db",
                     "SELECT count(*) FROM segments s JOIN items i ON i.id = s.item_id "
                     "WHERE i.path LIKE '%broken.mp4' AND s.source = 'sidecar:broken.en.srt'"),
            1);
  EXPECT_EQ(QueryInt(dir + "/text.db",
                     "SELECT count(*) FROM events WHERE message LIKE '%are kept and searchable%'"),
            1);
  for (const char* word : {"narwhal", "walrus", "axolotl"}) {
    CommandResult found = Reel("search --db text.db " + std::string(word) + " --format json", dir);
    EXPECT_EQ(found.exit_code, 0) << found.err;
    EXPECT_EQ(nlohmann::json::parse(found.out).size(), word == std::string("narwhal") ? 2u : 1u)
        << word << ": " << found.out;
  }
  // Retried, the item fails again and its text is still there, once.
  CommandResult retry = Reel("run job.yaml --retry-failed", dir);
  EXPECT_EQ(retry.exit_code, 1);
  EXPECT_EQ(QueryInt(dir + "/text.db", "SELECT count(*) FROM segments WHERE source != 'speech'"),
            4);
}

TEST(RunCommandTest, RcloneVideoWithoutStreamsKeepsItsSideCarSubtitles) {
  // rclone's DLNA test files: a 262-byte video.mp4 with no streams, video.srt and video.en.srt.
  const std::string package = "golang-github-rclone-rclone-dev";
  const std::string files =
      "usr/share/gocode/src/github.com/rclone/rclone/cmd/serve/dlna/testdata/files/";
  std::string dir = ScratchDir("rclone_text");
  fs::create_directories(dir + "/media");
  for (const char* name : {"video.mp4", "video.srt", "video.en.srt"}) {
    std::string file = DebianPackageFile(package, files + name, std::string("rclone_") + name);
    if (file.empty())
      REEL_SKIP_WITHOUT_REFERENCE(kDebianPackage) << package << " cannot be fetched";
    fs::copy_file(file, dir + "/media/" + name);
  }
  ASSERT_EQ(fs::file_size(dir + "/media/video.mp4"), 262u);
  // ffprobe opens it and finds no stream.
  CommandResult streams = RunCommand(
      "ffprobe -v error -show_entries format=nb_streams -of "
      "default=nw=1:nk=1 " +
      ShellQuote(dir + "/media/video.mp4"));
  ASSERT_EQ(streams.out, "0\n") << streams.err;
  WriteText(dir + "/job.yaml", "name: rclone\ninputs: [media]\n");
  CommandResult r = Reel("run job.yaml", dir);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto items = ItemsByPath(dir + "/rclone.db");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items.begin()->second["status"], "failed");
  nlohmann::json segments =
      QueryJson(dir + "/rclone.db", "SELECT source, text FROM segments ORDER BY source");
  ASSERT_EQ(segments.size(), 2u);
  EXPECT_EQ(segments[0]["source"], "sidecar:video.en.srt");
  EXPECT_EQ(segments[1]["source"], "sidecar:video.srt");
  EXPECT_EQ(segments[0]["text"], "Test");
  CommandResult found = Reel("search --db rclone.db Test --format json", dir);
  EXPECT_EQ(found.exit_code, 0) << found.err;
  EXPECT_EQ(nlohmann::json::parse(found.out).size(), 2u) << found.out;
}

TEST(RunCommandTest, ItemsSampledOutsideTheirVideoFailOrWarnWithTheReason) {
  // 3 s clips; timestamps at 2 s and 20 s: one frame each, and a warning for 20 s. A start at
  // 5 s leaves nothing: the item fails, saying so.
  std::string dir = ScratchDir("out_of_range");
  fs::create_directories(dir + "/media");
  fs::copy_file(SmallClip(), dir + "/media/a.mp4");
  WriteText(dir + "/job.yaml",
            "name: oor\ninputs: [media]\nsampling:\n  policy: timestamps\n  timestamps: [2, 20]\n");
  CommandResult r = Reel("run job.yaml -v", dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("timestamp 20 s is past the end of the video (3 s long)"), std::string::npos)
      << r.err;
  EXPECT_EQ(QueryInt(dir + "/oor.db",
                     "SELECT count(*) FROM events WHERE level = 'warning' AND message LIKE "
                     "'%a.mp4: timestamp 20 s is past the end%'"),
            1);
  EXPECT_EQ(QueryInt(dir + "/oor.db", "SELECT count(*) FROM frames"), 1);

  WriteText(dir + "/job.yaml", "name: oor\ninputs: [media]\nsampling:\n  start: 5\n");
  r = Reel("run job.yaml", dir);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto items = ItemsByPath(dir + "/oor.db");
  ASSERT_EQ(items.size(), 1u);
  const auto& item = items.begin()->second;
  EXPECT_EQ(item["status"], "failed");
  EXPECT_NE(
      item["error"].get<std::string>().find("nothing to sample: start 5 s is after the last frame"),
      std::string::npos)
      << item["error"];
}

// A job that takes a second or two: 12 copies of a 6 s 640x360 clip at 4 fps.
std::string SlowJobDir(const std::string& test) {
  return MakeJobDir(test, 12, "  policy: fps\n  fps: 4\n", SmallClip(6, "640x360"));
}

// Waits until the run started by `process` holds the lock (its pid is in the lock file).
bool WaitForLock(const std::string& db, pid_t pid) {
  return WaitFor([&] { return ReadText(db + ".lock").starts_with(std::to_string(pid) + " "); },
                 std::chrono::seconds(10));
}

TEST(RunCommandTest, SecondRunExitsFourNamingTheHolderAndWaitQueues) {
  std::string dir = SlowJobDir("concurrent");
  const std::string db = dir + "/out.db";
  ReelProcess first({"run", dir + "/job.yaml", "--workers", "1"}, dir + "/first.err");
  ASSERT_TRUE(WaitForLock(db, first.pid()));
  CommandResult second = Reel("run job.yaml", dir);
  EXPECT_EQ(second.exit_code, 4) << second.err;
  EXPECT_NE(second.err.find("pid " + std::to_string(first.pid())), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("--wait"), std::string::npos) << second.err;
  // reel status names the running process too.
  CommandResult status = Reel("status --db out.db", dir);
  EXPECT_NE(status.out.find("Running now: pid " + std::to_string(first.pid())), std::string::npos)
      << status.out;

  CommandResult waited = Reel("run job.yaml --wait --log-format json", dir);
  EXPECT_EQ(first.Wait(), 0) << ReadText(dir + "/first.err");
  EXPECT_EQ(waited.exit_code, 0) << waited.err;
  EXPECT_NE(waited.err.find("waiting for"), std::string::npos) << waited.err;
  nlohmann::json summary = LastJsonLine(waited.err);
  EXPECT_EQ(summary["done"], 0) << "the first run did everything";
  EXPECT_EQ(summary["skipped"], 13);
}

TEST(RunCommandTest, SigtermStopsCleanlyWith143AndMarksTheRunInterrupted) {
  std::string dir = SlowJobDir("sigterm");
  const std::string db = dir + "/out.db";
  ReelProcess run({"run", dir + "/job.yaml", "--workers", "2", "--log-format", "json"},
                  dir + "/run.err");
  ASSERT_TRUE(WaitForLock(db, run.pid()));
  ASSERT_TRUE(
      WaitFor([&] { return ReadText(dir + "/run.err").find("item_done") != std::string::npos; },
              std::chrono::seconds(10)));
  run.Signal(SIGTERM);
  EXPECT_EQ(run.Wait(), 143) << ReadText(dir + "/run.err");
  nlohmann::json last = LastJsonLine(ReadText(dir + "/run.err"));
  EXPECT_EQ(last["status"], "interrupted");
  nlohmann::json runs = QueryJson(db, "SELECT status, message FROM runs");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["status"], "interrupted");
  EXPECT_NE(runs[0]["message"].get<std::string>().find("SIGTERM"), std::string::npos);
  // It says how to go on.
  EXPECT_NE(runs[0]["message"].get<std::string>().find("again to resume"), std::string::npos)
      << runs[0]["message"];
  EXPECT_NE(last["message"].get<std::string>().find("again to resume"), std::string::npos)
      << last["message"];
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM items WHERE status = 'running'"), 0);
  const int64_t done = QueryInt(db, "SELECT count(*) FROM items WHERE status = 'done'");
  EXPECT_LT(done, 13) << "stopped before the end";
  // The next run finishes the job without redoing what was done.
  CommandResult rest = Reel("run job.yaml --log-format json", dir);
  EXPECT_EQ(rest.exit_code, 0) << rest.err;
  EXPECT_EQ(LastJsonLine(rest.err)["skipped"], done);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM items WHERE status = 'done'"), 13);
}

// A run killed outright stays 'running' in the database until the next run; `reel status`
// says its process is gone instead of showing it as running.
TEST(RunCommandTest, StatusSaysAKilledRunsProcessIsGone) {
  std::string dir = SlowJobDir("killed");
  const std::string db = dir + "/out.db";
  ReelProcess run({"run", dir + "/job.yaml", "--workers", "1", "--log-format", "json"},
                  dir + "/run.err");
  ASSERT_TRUE(WaitForLock(db, run.pid()));
  ASSERT_TRUE(
      WaitFor([&] { return ReadText(dir + "/run.err").find("item_done") != std::string::npos; },
              std::chrono::seconds(10)));
  const int pid = run.pid();
  run.Signal(SIGKILL);
  EXPECT_EQ(run.Wait(), 128 + SIGKILL);
  ASSERT_EQ(QueryJson(db, "SELECT status FROM runs")[0]["status"], "running");
  CommandResult status = Reel("status --db out.db", dir);
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find("Run 1 is marked running but is not running: process " +
                            std::to_string(pid) + " is gone from this host (killed or crashed)"),
            std::string::npos)
      << status.out;
  EXPECT_NE(status.out.find("resumes its unfinished items"), std::string::npos) << status.out;
  EXPECT_EQ(status.out.find("Running now"), std::string::npos) << status.out;
  CommandResult json = Reel("status --db out.db --format json", dir);
  nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_NE(j["runs"][0]["message"].get<std::string>().find("is gone"), std::string::npos);
}

// A damaged video that still gives frames is done, with a partial sample: `reel status` counted
// it among the done items and said nothing more.
TEST(RunCommandTest, StatusListsItemsDoneWithAPartialSample) {
  std::string dir = ScratchDir("partial_status");
  std::string good = ReadText(GeneratedMedia("run_faststart.mp4",
                                             "-f lavfi -i testsrc2=s=160x120:r=25:d=4 -c:v libx264 "
                                             "-pix_fmt yuv420p -movflags +faststart"));
  WriteText(dir + "/media/half.mp4", good.substr(0, good.size() / 2));
  fs::copy_file(SmallClip(), dir + "/media/whole.mp4");
  WriteText(dir + "/job.yaml",
            "name: partial\ninputs: [media]\nsampling:\n  policy: count\n  count: 6\n"
            "storage:\n  database: out.db\n");
  CommandResult run = Reel("run job.yaml", dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  CommandResult status = Reel("status --db out.db", dir);
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find("Items: 2 (done 2, failed 0, pending 0, running 0)\n  1 of the done "
                            "items has a partial sample"),
            std::string::npos)
      << status.out;
  EXPECT_NE(status.out.find("Done with a partial sample"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find(dir + "/media/half.mp4\n"), std::string::npos) << status.out;
  EXPECT_EQ(status.out.find(dir + "/media/whole.mp4\n"), std::string::npos) << status.out;
  nlohmann::json j = nlohmann::json::parse(Reel("status --db out.db --format json", dir).out);
  EXPECT_EQ(j["items"]["partial"], 1);
  ASSERT_EQ(j["partial"].size(), 1u);
  EXPECT_EQ(j["partial"][0]["path"], dir + "/media/half.mp4");
  EXPECT_FALSE(j["partial"][0]["truncation"].is_null()) << j["partial"][0];
}

TEST(RunCommandTest, ShardsMergeIntoTheSameResultAsOneRun) {
  std::string dir = MakeJobDir("shards", 6, "  policy: count\n  count: 3\n", SmallClip());
  CommandResult full = Reel("run job.yaml --db full.db", dir);
  ASSERT_EQ(full.exit_code, 0) << full.err;
  CommandResult s0 = Reel("run job.yaml --shard 0/2", dir);
  ASSERT_EQ(s0.exit_code, 0) << s0.err;
  // The second shard comes from the environment, as in a Slurm array.
  CommandResult s1 =
      RunCommand("cd " + ShellQuote(dir) + " && SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=2 " +
                 ShellQuote(ReelPath()) + " run job.yaml");
  ASSERT_EQ(s1.exit_code, 0) << s1.err;
  const std::string shard0 = dir + "/out.shard-0-of-2.db", shard1 = dir + "/out.shard-1-of-2.db";
  ASSERT_TRUE(fs::exists(shard0));
  ASSERT_TRUE(fs::exists(shard1));
  const int64_t n0 = QueryInt(shard0, "SELECT count(*) FROM items");
  const int64_t n1 = QueryInt(shard1, "SELECT count(*) FROM items");
  EXPECT_EQ(n0 + n1, 7) << "the shards split the inputs";
  EXPECT_GT(n0, 0);
  EXPECT_GT(n1, 0);

  CommandResult merged = Reel("merge merged.db out.shard-0-of-2.db out.shard-1-of-2.db", dir);
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  CommandResult again = Reel("merge merged.db out.shard-0-of-2.db out.shard-1-of-2.db", dir);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const std::string items_sql = "SELECT path, status, kind, content_hash FROM items ORDER BY path";
  const std::string frames_sql =
      "SELECT i.path, f.sample_index, f.time_seconds, f.phash, f.thumbnail_hash FROM frames f "
      "JOIN items i ON i.id = f.item_id ORDER BY i.path, f.sample_index";
  const std::string segments_sql =
      "SELECT i.path, s.source, s.start_seconds, s.text FROM segments s JOIN items i ON "
      "i.id = s.item_id ORDER BY 1, 2, 3";
  EXPECT_EQ(QueryJson(dir + "/merged.db", items_sql), QueryJson(dir + "/full.db", items_sql));
  EXPECT_EQ(QueryJson(dir + "/merged.db", frames_sql), QueryJson(dir + "/full.db", frames_sql));
  EXPECT_EQ(QueryJson(dir + "/merged.db", segments_sql), QueryJson(dir + "/full.db", segments_sql));
  EXPECT_EQ(QueryInt(dir + "/merged.db", "SELECT count(*) FROM items"), 7);
  EXPECT_EQ(QueryInt(dir + "/merged.db", "SELECT count(*) FROM frames"), 18);
  EXPECT_EQ(QueryInt(dir + "/merged.db", "SELECT count(*) FROM runs"), 2);

  // Bad shard specifications are usage errors.
  EXPECT_EQ(Reel("run job.yaml --shard 2/2", dir).exit_code, 2);
  EXPECT_EQ(RunCommand("cd " + ShellQuote(dir) + " && JOB_COMPLETION_INDEX=0 " +
                       ShellQuote(ReelPath()) + " run job.yaml")
                .exit_code,
            2);
}

// `reel init DIR`: a commented starter job for the media there (videos in two folders, a side-car
// subtitle, a standalone one, a Markdown note, a file of no known kind) that `reel validate`
// accepts and `reel run` runs; a second init refuses to replace it unless --force.
TEST(InitCommandTest, WritesAStarterJobThatValidatesAndRuns) {
  std::string dir = ScratchDir("init");
  fs::remove_all(dir);
  fs::create_directories(dir + "/talks");
  fs::copy_file(SmallClip(), dir + "/a.mp4");
  fs::copy_file(SmallClip(), dir + "/talks/b.mp4");
  WriteText(dir + "/a.srt", "1\n00:00:00,000 --> 00:00:01,000\nHello\n");
  WriteText(dir + "/talks/lone.srt", "1\n00:00:00,000 --> 00:00:01,000\nAlone\n");
  WriteText(dir + "/notes.md", "# Notes\n\nSome notes.\n");
  WriteText(dir + "/todo.xyz", "not media");
  CommandResult init = Reel("init " + ShellQuote(dir));
  ASSERT_EQ(init.exit_code, 0) << init.err;
  const std::string job = ReadText(dir + "/job.yaml");
  EXPECT_NE(job.find("# A Reel job, written by `reel init`"), std::string::npos) << job;
  EXPECT_NE(job.find("2 videos, 1 document, 1 subtitle file"), std::string::npos) << job;
  EXPECT_NE(job.find("  - \"*.mp4\"\n"), std::string::npos) << job;
  EXPECT_NE(job.find("  - \"talks/*.mp4\"\n"), std::string::npos) << job;
  EXPECT_NE(job.find("  - \"talks/*.srt\"\n"), std::string::npos) << job;
  EXPECT_NE(job.find("  - \"*.md\"\n"), std::string::npos) << job;
  EXPECT_EQ(job.find("xyz"), std::string::npos) << job;
  EXPECT_NE(job.find("kind: chapters"), std::string::npos) << job;
  CommandResult valid = Reel("validate job.yaml", dir);
  EXPECT_EQ(valid.exit_code, 0) << valid.err;
  EXPECT_NE(valid.err.find("valid; 4 input files"), std::string::npos) << valid.err;
  CommandResult run = Reel("run job.yaml --log-format json", dir);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(LastJsonLine(run.err)["done"], 4) << run.err;
  // Never replaced without --force.
  WriteText(dir + "/job.yaml", "# mine\n" + job);
  CommandResult again = Reel("init", dir);
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("already exists"), std::string::npos) << again.err;
  EXPECT_EQ(ReadText(dir + "/job.yaml").substr(0, 7), "# mine\n");
  EXPECT_EQ(Reel("init --force", dir).exit_code, 0);
  EXPECT_EQ(ReadText(dir + "/job.yaml"), job);
  // No media: nothing is written.
  const std::string empty = ScratchDir("init_empty");
  fs::remove_all(empty);
  fs::create_directories(empty);
  CommandResult none = Reel("init " + ShellQuote(empty));
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_FALSE(fs::exists(empty + "/job.yaml"));
}

// A run that died (killed, the machine lost) is marked interrupted by the next run; its wall time
// ends at its last recorded activity, not when the next run noticed it hours later.
TEST(RunCommandTest, AnInterruptedRunEndsAtItsLastActivity) {
  std::string dir = ScratchDir("interrupted_end");
  fs::remove_all(dir);
  fs::create_directories(dir + "/media");
  fs::copy_file(SmallClip(), dir + "/media/a.mp4");
  WriteText(dir + "/job.yaml", "name: ended\ninputs: [media]\n");
  ASSERT_EQ(Reel("run job.yaml", dir).exit_code, 0);
  {
    Result<storage::Database> db = storage::Database::Open(dir + "/ended.db");
    ASSERT_TRUE(db.ok()) << db.status().message();
    ASSERT_TRUE(db->Execute("INSERT INTO runs (id, uid, job_id, spec_hash, status, started_at, "
                            "host, pid) VALUES (99, 'dead-run', 1, 'x', 'running', "
                            "'2026-01-01T00:00:00.000Z', 'gone-host', 1);"
                            "INSERT INTO events (uid, run_id, level, time, message) VALUES "
                            "('dead-event', 99, 'info', '2026-01-01T00:00:07.250Z', 'working')")
                    .ok());
  }
  ASSERT_EQ(Reel("run job.yaml", dir).exit_code, 0);
  nlohmann::json run =
      QueryJson(dir + "/ended.db", "SELECT status, finished_at FROM runs WHERE id = 99");
  ASSERT_EQ(run.size(), 1u);
  EXPECT_EQ(run[0]["status"], "interrupted");
  EXPECT_EQ(run[0]["finished_at"], "2026-01-01T00:00:07.250Z") << run.dump();
}

}  // namespace
}  // namespace reel::testing
