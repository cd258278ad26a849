// Schema 12: items of kind 'audio'. A database of the previous schema keeps every row (no cascade
// through the items it widens), admits audio items in the connection that migrated it and in
// any other, and still refuses a kind that is not one.
#include <gtest/gtest.h>

#include <fstream>

#include "storage/database.h"
#include "storage/internal/schema.h"
#include "storage/query.h"
#include "storage/store.h"
#include "tests/support/subprocess.h"
#include "tests/support/test_media.h"

namespace reel::storage {
namespace {

int64_t Int(const std::string& db, const std::string& sql) {
  Result<Table> t = Query(db, sql);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok() || t->rows.empty()) return -1;
  return std::get<int64_t>(t->rows[0][0]);
}

TEST(AudioKindTest, AVersionElevenFileTakesAudioItemsAndKeepsItsRows) {
  const std::string dir = reel::testing::ScratchDir("audio_kind");
  const std::string path = dir + "/v11.db";
  std::string sql;
  for (const internal::Migration& m : internal::Migrations()) {
    if (m.version > 11) break;
    sql += std::string(m.sql) + "\n";
  }
  sql +=
      "PRAGMA user_version = 11;"
      "INSERT INTO jobs(name, spec_text, spec_hash) VALUES ('j', '{}', 'h');"
      "INSERT INTO items(job_id, path, kind, settings_hash, status) "
      "VALUES (1, 'v.mp4', 'video', 's', 'done');"
      "INSERT INTO frames(item_id, sample_index, time_seconds, width, height) "
      "VALUES (1, 0, 0, 8, 8), (1, 1, 1, 8, 8);"
      "INSERT INTO segments(item_id, source, start_seconds, end_seconds, text, text_hash) "
      "VALUES (1, 'speech', 0.5, 1.5, 'hello there', 'x');"
      "INSERT INTO transcripts(item_id, settings_key, backend, model, status) "
      "VALUES (1, 'k', 'pocketsphinx', '', 'done');";
  std::ofstream(dir + "/v11.sql") << sql;
  reel::testing::CommandResult made =
      reel::testing::RunCommand("sqlite3 " + reel::testing::ShellQuote(path) + " < " +
                                reel::testing::ShellQuote(dir + "/v11.sql"));
  ASSERT_EQ(made.exit_code, 0) << made.err;
  // Before: the old constraint refuses 'audio'.
  reel::testing::CommandResult refused = reel::testing::RunCommand(
      "sqlite3 " + reel::testing::ShellQuote(path) +
      " \"INSERT INTO items(job_id, path, kind, settings_hash) VALUES (1, 'a', 'audio', 's')\"");
  EXPECT_NE(refused.exit_code, 0) << "the test's old file is not the old schema";

  Result<Store> store = Store::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ(store->database().SchemaVersion().value(), 12);
  // The connection that migrated takes an audio item at once.
  ItemRecord audio;
  audio.job_id = 1;
  audio.path = "podcast.mp3";
  audio.kind = ItemKind::kAudio;
  audio.settings_hash = "s";
  Result<int64_t> id = store->UpsertItem(audio);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  Result<std::optional<ItemRecord>> read = store->GetItem(*id);
  ASSERT_TRUE(read.ok() && read->has_value());
  EXPECT_EQ((*read)->kind, ItemKind::kAudio);
  // Another connection too; and a kind that is none is still refused.
  Result<Store> other = Store::Open(path);
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  audio.path = "meeting.wav";
  EXPECT_TRUE(other->UpsertItem(audio).ok());
  EXPECT_FALSE(other->database()
                   .Execute("INSERT INTO items(job_id, path, kind, settings_hash) "
                            "VALUES (1, 'x', 'hologram', 's')")
                   .ok());
  // Nothing of the old rows is lost; the file is sound.
  EXPECT_EQ(Int(path, "SELECT count(*) FROM frames"), 2);
  EXPECT_EQ(Int(path, "SELECT count(*) FROM segments"), 1);
  EXPECT_EQ(Int(path, "SELECT count(*) FROM transcripts"), 1);
  EXPECT_EQ(Int(path, "SELECT count(*) FROM items WHERE kind = 'audio'"), 2);
  EXPECT_EQ(Int(path, "SELECT count(*) FROM sqlite_schema WHERE name = 'reel_schema_bump'"), 0);
  reel::testing::CommandResult check =
      reel::testing::RunCommand("sqlite3 " + reel::testing::ShellQuote(path) +
                                " 'PRAGMA integrity_check; PRAGMA foreign_key_check;'");
  EXPECT_EQ(check.exit_code, 0) << check.err;
  EXPECT_EQ(check.out, "ok\n");
}

}  // namespace
}  // namespace reel::storage
