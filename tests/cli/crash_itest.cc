// Crash safety: `reel run` killed with SIGKILL at many points, then run again. The job must
// complete with no duplicate rows, an intact database, and no finished item redone.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <random>

#include "tests/cli/cli_test_util.h"

namespace reel::testing {
namespace {

namespace fs = std::filesystem;

constexpr int kVideos = 16;

// path -> "attempts|finished_at" of every done item.
std::map<std::string, std::string> DoneItems(const std::string& db) {
  std::map<std::string, std::string> done;
  for (const auto& row :
       QueryJson(db, "SELECT path, attempts, finished_at FROM items WHERE status = 'done'")) {
    done[row["path"].get<std::string>()] = std::to_string(row["attempts"].get<int64_t>()) + "|" +
                                           row["finished_at"].get<std::string>();
  }
  return done;
}

void ExpectStillDone(const std::map<std::string, std::string>& before,
                     const std::map<std::string, std::string>& now, int point) {
  for (const auto& [path, stamp] : before) {
    auto it = now.find(path);
    ASSERT_NE(it, now.end()) << "kill point " << point << ": " << path << " is no longer done";
    EXPECT_EQ(it->second, stamp) << "kill point " << point << ": " << path << " was redone";
  }
}

TEST(CrashTest, KilledRunsResumeWithoutDuplicatesOrRedoneWork) {
  std::string dir = ScratchDir("crash");
  const std::string clip = SmallClip(6, "640x360");
  fs::create_directories(dir + "/media");
  for (int i = 0; i < kVideos; ++i) {
    fs::copy_file(clip, dir + "/media/c" + std::to_string(100 + i) + ".mp4");
  }
  WriteText(dir + "/job.yaml",
            "name: crash\ninputs: [media/*.mp4]\nsampling:\n  policy: fps\n  fps: 4\n");
  const std::string db = dir + "/crash.db";

  // Calibrate: how long one uninterrupted run of the whole job takes here and now (sanitizers and
  // a loaded machine slow it down several times), in a separate database.
  const auto t0 = std::chrono::steady_clock::now();
  CommandResult calibration = Reel("run job.yaml --workers 2 --db " + dir + "/calibration.db", dir);
  ASSERT_EQ(calibration.exit_code, 0) << calibration.err;
  const double full_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  // Each killed run is killed a random moment after it has registered itself (its row in `runs`)
  // and before it could have finished about one item's worth of work, so the 14 kills land at
  // different stages (planning, sampling, storing an item) while the job creeps forward. The seed
  // is fixed so a failure reproduces.
  std::mt19937 rng(20240501);
  std::uniform_real_distribution<double> fraction(0.0, 1.0);
  std::map<std::string, std::string> done_before;
  int kills_during_work = 0;
  const int kPoints = 14;
  for (int point = 0; point < kPoints; ++point) {
    const std::string err_path = dir + "/run.err";
    ReelProcess run({"run", dir + "/job.yaml", "--workers", "2", "--log-format", "json"}, err_path);
    // Wait (at most the calibrated run time) for the run to register (`run_started` comes right
    // after its row in `runs` is written), then a random share of one item's time. Point 0 is
    // killed at once, before anything is written.
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(static_cast<int>(full_ms) + 1000);
    while (point > 0 && std::chrono::steady_clock::now() < deadline && run.Running()) {
      std::ifstream err(err_path);
      std::string text((std::istreambuf_iterator<char>(err)), {});
      if (text.find("\"run_started\"") != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::this_thread::sleep_for(
        std::chrono::microseconds(static_cast<int>(fraction(rng) * full_ms / kVideos * 1000)));
    run.Signal(SIGKILL);
    int code = run.Wait();
    if (code == 128 + SIGKILL) ++kills_during_work;
    // Killed before the database (or its schema: migrations are transactions) was created:
    // readers refuse such a file, naming it.
    if (!fs::exists(db)) continue;
    CommandResult probe = Reel("query --db " + ShellQuote(db) + " 'SELECT 1' --format json");
    if (probe.exit_code != 0) {
      EXPECT_NE(probe.err.find("not a Reel results database yet"), std::string::npos) << probe.err;
      continue;
    }
    auto done_now = DoneItems(db);
    ExpectStillDone(done_before, done_now, point);
    done_before = std::move(done_now);
  }
  EXPECT_GE(kills_during_work, 10) << "most kill points must land while the run works";

  CommandResult last = Reel("run job.yaml --log-format json", dir);
  ASSERT_EQ(last.exit_code, 0) << last.err;
  EXPECT_EQ(LastJsonLine(last.err)["skipped"].get<int64_t>() +
                LastJsonLine(last.err)["done"].get<int64_t>(),
            kVideos);
  ExpectStillDone(done_before, DoneItems(db), kPoints);

  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM items"), kVideos);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM items WHERE status = 'done'"), kVideos);
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(*) - count(DISTINCT item_id || '/' || sample_index) "
                     "FROM frames"),
            0);
  // Every item has the frames of the clean run of the same clip (4 fps over 6 s: over 20), not
  // fewer: the clean run's count, the same for every copy, is the reference.
  const std::string frames_per_item = "SELECT count(*) AS n FROM frames GROUP BY item_id";
  nlohmann::json per_item = QueryJson(db, frames_per_item);
  nlohmann::json clean = QueryJson(dir + "/calibration.db", frames_per_item);
  ASSERT_EQ(per_item.size(), static_cast<size_t>(kVideos));
  ASSERT_EQ(clean.size(), static_cast<size_t>(kVideos));
  const int64_t clean_frames = clean[0]["n"].get<int64_t>();
  EXPECT_GT(clean_frames, 20);
  for (const auto& row : clean) EXPECT_EQ(row["n"], clean_frames) << "the clean run";
  for (const auto& row : per_item)
    EXPECT_EQ(row["n"], clean_frames) << "the killed and resumed runs";
  EXPECT_EQ(QueryJson(db, "PRAGMA integrity_check")[0]["integrity_check"], "ok");
  EXPECT_EQ(QueryJson(db, "PRAGMA foreign_key_check").size(), 0u);
  // Killed runs were marked interrupted by the next run; only the last one succeeded.
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM runs WHERE status = 'running'"), 0);
  EXPECT_GE(QueryInt(db, "SELECT count(*) FROM runs WHERE status = 'interrupted'"), 5);
  EXPECT_GE(QueryInt(db, "SELECT count(*) FROM runs WHERE status = 'succeeded'"), 1);
}

}  // namespace
}  // namespace reel::testing
