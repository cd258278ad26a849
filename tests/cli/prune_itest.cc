// An item whose input file is gone: marked where people read results (`reel results`, `reel
// show`, `reel status`, the report), listed by `reel prune`, dropped by `reel prune --yes` with
// everything stored only for it.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/cli/cli_test_util.h"
#include "tests/support/fake_model_server.h"

namespace reel::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Blobs that no frame or feature names, and frame thumbnails whose blob is missing.
constexpr const char* kUnusedBlobs =
    "SELECT count(*) FROM blobs WHERE hash NOT IN (SELECT thumbnail_hash FROM frames WHERE "
    "thumbnail_hash IS NOT NULL) AND hash NOT IN (SELECT blob_hash FROM features)";
constexpr const char* kMissingThumbnails =
    "SELECT count(*) FROM frames WHERE thumbnail_hash IS NOT NULL AND thumbnail_hash NOT IN "
    "(SELECT hash FROM blobs)";

TEST(PruneCommandTest, MarksListsThenDropsItemsWhoseInputIsGone) {
  FakeModelServer server;
  ASSERT_TRUE(server.started());
  const std::string dir = ScratchDir("prune");
  fs::remove_all(dir);
  fs::create_directories(dir + "/clips");
  // c.mp4 is a.mp4's copy (their thumbnails are the same blobs); b.mp4 has pictures of its own.
  fs::copy_file(SmallClip(3), dir + "/clips/a.mp4");
  fs::copy_file(SmallClip(2, "256x144"), dir + "/clips/b.mp4");
  fs::copy_file(SmallClip(3), dir + "/clips/c.mp4");
  WriteText(dir + "/notes.md", "# Notes\n\nA test pattern.\n");
  WriteText(dir + "/job.yaml",
            "name: p\ninputs: [clips/*.mp4, notes.md]\nsampling: {fps: 1}\n"
            "model: {endpoint: '${EP:-}', max_output_tokens: 16}\n"
            "prompts:\n  - {id: describe, question: Describe it.}\n");
  auto run = [&] {
    return RunCommand("cd " + ShellQuote(dir) + " && EP=" + ShellQuote(server.endpoint()) + " " +
                      ShellQuote(ReelPath()) + " run job.yaml");
  };
  CommandResult first = run();
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string db = dir + "/p.db";
  ASSERT_EQ(QueryInt(db, "SELECT count(*) FROM items"), 4);
  ASSERT_EQ(QueryInt(db, "SELECT count(*) FROM responses"), 4);
  const int64_t blobs_before = QueryInt(db, "SELECT count(*) FROM blobs");

  CommandResult none = Reel("prune --db p.db", dir);
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_NE(none.err.find("nothing to drop"), std::string::npos) << none.err;

  fs::remove(dir + "/clips/a.mp4");
  fs::remove(dir + "/clips/b.mp4");

  // Marked for people, not in machine formats.
  CommandResult items = Reel("results --db p.db --items --width 0", dir);
  ASSERT_EQ(items.exit_code, 0) << items.err;
  EXPECT_EQ(CountOccurrences(items.out, "[deleted] "), 2u) << items.out;
  EXPECT_NE(items.out.find("[deleted] " + dir + "/clips/a.mp4"), std::string::npos) << items.out;
  EXPECT_EQ(Reel("results --db p.db --format csv", dir).out.find("[deleted]"), std::string::npos);
  EXPECT_NE(Reel("show --db p.db b.mp4", dir).out.find("The input file is gone"),
            std::string::npos);
  EXPECT_EQ(Reel("show --db p.db c.mp4", dir).out.find("The input file is gone"),
            std::string::npos);
  CommandResult status = Reel("status --db p.db", dir);
  EXPECT_NE(status.out.find("2 items' input files are gone"), std::string::npos) << status.out;
  EXPECT_EQ(json::parse(Reel("status --db p.db --format json", dir).out)["items"]["input_gone"], 2);
  const std::string site = dir + "/site";
  ASSERT_EQ(Reel("report --db p.db -o " + ShellQuote(site), dir).exit_code, 0);
  EXPECT_EQ(CountOccurrences(ReadText(site + "/index.html"), "input deleted"), 2u);

  // Listed, nothing dropped without --yes.
  CommandResult listed = Reel("prune --db p.db --format json", dir);
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  json gone = json::parse(listed.out);
  ASSERT_EQ(gone.size(), 2u) << listed.out;
  EXPECT_EQ(gone[0]["path"], dir + "/clips/a.mp4");
  EXPECT_EQ(gone[1]["path"], dir + "/clips/b.mp4");
  EXPECT_EQ(gone[0]["answers"], 1);
  EXPECT_NE(listed.err.find("`reel prune --yes` drops them"), std::string::npos) << listed.err;
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM items"), 4);

  // Never under a running `reel run`.
  {
    WriteText(db + ".lock", "4242 somehost 2024-05-01T12:00:00Z\n");
    int fd = open((db + ".lock").c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(flock(fd, LOCK_EX | LOCK_NB), 0);
    CommandResult locked = Reel("prune --db p.db --yes", dir);
    close(fd);
    EXPECT_EQ(locked.exit_code, 4) << locked.err;
    EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM items"), 4);
  }

  CommandResult dropped = Reel("prune --db p.db --yes", dir);
  ASSERT_EQ(dropped.exit_code, 0) << dropped.err;
  EXPECT_NE(dropped.err.find("dropped 2 item(s), 2 answer(s)"), std::string::npos) << dropped.err;
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM items"), 2);
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(*) FROM items WHERE path LIKE '%/a.mp4' OR path LIKE "
                     "'%/b.mp4'"),
            0);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM responses"), 2);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM responses_fts"), 2);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM frames WHERE item_id NOT IN (SELECT id FROM items)"),
            0);
  // b's pictures went; a's, which c shares, stayed.
  EXPECT_LT(QueryInt(db, "SELECT count(*) FROM blobs"), blobs_before);
  EXPECT_EQ(QueryInt(db, kUnusedBlobs), 0);
  EXPECT_EQ(QueryInt(db, kMissingThumbnails), 0);
  EXPECT_GT(QueryInt(db, "SELECT count(*) FROM frames WHERE thumbnail_hash IS NOT NULL"), 0);

  // Nothing left to drop; the next run redoes nothing for the items that stayed.
  EXPECT_NE(Reel("prune --db p.db", dir).err.find("nothing to drop"), std::string::npos);
  CommandResult again = run();
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM items"), 2);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM responses"), 2);
}

}  // namespace
}  // namespace reel::testing
