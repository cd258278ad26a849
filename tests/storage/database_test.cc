#include "storage/database.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "storage/internal/sqlite.h"
#include "storage/query.h"
#include "storage/store.h"
#include "tests/support/test_media.h"

namespace reel::storage {
namespace {

// The single value of a one-row, one-column query on `db`'s connection.
std::string One(Database& db, const std::string& sql) {
  auto text = internal::QueryText(db.handle(), sql);
  EXPECT_TRUE(text.ok()) << sql << ": " << text.status().ToString();
  return text.ok() ? *text : "";
}

TEST(DatabaseTest, MigratesFromEmptyAndReopenIsIdempotent) {
  std::string path = testing::ScratchDir("DatabaseTest.Migrate") + "/reel.db";
  {
    auto db = Database::Open(path);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    EXPECT_EQ(db->SchemaVersion().value(), Database::LatestSchemaVersion());
    EXPECT_GE(Database::LatestSchemaVersion(), 1);
    EXPECT_EQ(One(*db,
                  "SELECT count(*) FROM sqlite_schema WHERE name IN ('jobs', 'runs', "
                  "'items', 'frames', 'segments', 'features', 'contexts', 'requests', "
                  "'responses', 'events', 'blobs', 'responses_fts', 'segments_fts', "
                  "'latest_answers', 'failures', 'item_summary', 'job_summary')"),
              "17");
    ASSERT_TRUE(
        db->Execute("INSERT INTO jobs(name, spec_text, spec_hash) VALUES ('j', 's', 'h')").ok());
  }
  auto again = Database::Open(path);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->SchemaVersion().value(), Database::LatestSchemaVersion());
  EXPECT_EQ(One(*again, "SELECT count(*) FROM jobs"), "1");  // data survives, nothing re-created
  EXPECT_TRUE(again->CheckIntegrity().ok());
}

TEST(DatabaseTest, RefusesNewerSchemaAndNonDatabases) {
  std::string dir = testing::ScratchDir("DatabaseTest.Refuse");
  {
    auto db = Database::Open(dir + "/new.db");
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->Execute("PRAGMA user_version = 999").ok());
  }
  auto newer = Database::Open(dir + "/new.db");
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.status().code(), ErrorCode::kUnsupported);

  {
    FILE* f = fopen((dir + "/junk.db").c_str(), "wb");
    ASSERT_NE(f, nullptr);
    fputs("this is not a database, just some text that is long enough to matter.......", f);
    fputs("................................................................................", f);
    fclose(f);
  }
  auto junk = Database::Open(dir + "/junk.db");
  ASSERT_FALSE(junk.ok());
  EXPECT_EQ(junk.status().code(), ErrorCode::kCorruptData) << junk.status().ToString();
  EXPECT_NE(junk.status().message().find("junk.db"), std::string::npos);

  auto missing = Database::OpenReadOnly(dir + "/missing.db");
  EXPECT_FALSE(missing.ok());
  DatabaseOptions no_create;
  no_create.create_if_missing = false;
  EXPECT_FALSE(Database::Open(dir + "/missing.db", no_create).ok());
}

// Readers (status, results, search, query, plan) refuse what the writer refuses, and say which
// file has no tables instead of SQLite's "no such table: runs".
TEST(DatabaseTest, ReadOnlyRefusesNewerSchemaAndNamesFilesWithoutTables) {
  std::string dir = testing::ScratchDir("DatabaseTest.ReadOnlyRefuse");
  {
    auto db = Database::Open(dir + "/new.db");
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(db->Execute("PRAGMA user_version = 999").ok());
  }
  auto newer = Database::OpenReadOnly(dir + "/new.db");
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(newer.status().message().find(dir + "/new.db: schema version 999 is newer"),
            std::string::npos)
      << newer.status().message();
  auto queried = Query(dir + "/new.db", "SELECT 1");
  ASSERT_FALSE(queried.ok());
  EXPECT_EQ(queried.status().code(), ErrorCode::kUnsupported);

  {
    FILE* f = fopen((dir + "/empty.db").c_str(), "wb");
    ASSERT_NE(f, nullptr);
    fclose(f);
  }
  auto empty = Database::OpenReadOnly(dir + "/empty.db");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(empty.status().message().starts_with(dir + "/empty.db: not a Reel results database"))
      << empty.status().message();

  // Half-created: a writer has set WAL but not yet committed the first migration.
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open((dir + "/half.db").c_str(), &raw), SQLITE_OK);
    internal::UniqueConnection conn(raw);
    ASSERT_TRUE(internal::Exec(raw,
                               "PRAGMA journal_mode = WAL; BEGIN IMMEDIATE; "
                               "CREATE TABLE jobs(id INTEGER PRIMARY KEY)")
                    .ok());
    auto half = Database::OpenReadOnly(dir + "/half.db");
    ASSERT_FALSE(half.ok());
    EXPECT_EQ(half.status().code(), ErrorCode::kNotFound);
    EXPECT_NE(half.status().message().find(dir + "/half.db: "), std::string::npos)
        << half.status().message();
    auto store_read = Query(dir + "/half.db", "SELECT * FROM runs");
    ASSERT_FALSE(store_read.ok());
    EXPECT_EQ(store_read.status().code(), ErrorCode::kNotFound);
    EXPECT_EQ(store_read.status().message().find("no such table"), std::string::npos);
  }
  // The writer still opens (and creates the schema in) an empty file.
  auto writer = Database::Open(dir + "/empty.db");
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  EXPECT_TRUE(Database::OpenReadOnly(dir + "/empty.db").ok());
}

// A value past SQLite's length limit used to fail with "bind: not an error" (the message of
// the bind call was reset by the binds after it).
TEST(DatabaseTest, OversizeBindSaysWhatWasTooBig) {
  auto db = Database::Open(testing::ScratchDir("DatabaseTest.TooBig") + "/reel.db");
  ASSERT_TRUE(db.ok());
  sqlite3_limit(db->handle(), SQLITE_LIMIT_LENGTH, 1000);
  auto stmt = internal::Statement::Prepare(
      db->handle(), "INSERT INTO jobs(name, spec_text, spec_hash) VALUES (?1, ?2, ?3)");
  ASSERT_TRUE(stmt.ok());
  stmt->Bind(1, "j").Bind(2, std::string(5000, 's')).Bind(3, "h");
  Status run = stmt->Run();
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.code(), ErrorCode::kLimitExceeded) << run.ToString();
  EXPECT_EQ(run.message().find("not an error"), std::string::npos) << run.message();
  EXPECT_NE(run.message().find("parameter 2 (5000 bytes; the limit is 1000 bytes)"),
            std::string::npos)
      << run.message();
  EXPECT_NE(run.message().find("too big"), std::string::npos) << run.message();
}

TEST(DatabaseTest, PragmasAreInForce) {
  std::string path = testing::ScratchDir("DatabaseTest.Pragmas") + "/reel.db";
  auto db = Database::Open(path);
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(One(*db, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(One(*db, "PRAGMA foreign_keys"), "1");
  EXPECT_EQ(One(*db, "PRAGMA busy_timeout"), "10000");
  EXPECT_EQ(One(*db, "PRAGMA synchronous"), "1");  // NORMAL
  // Every table of ours is STRICT.
  EXPECT_EQ(One(*db,
                "SELECT count(*) FROM pragma_table_list WHERE schema = 'main' AND "
                "type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%_fts%' "
                "AND strict = 0"),
            "0");
  // Foreign keys are enforced: a frame for a missing item is refused.
  Status orphan = db->Execute(
      "INSERT INTO frames(item_id, sample_index, time_seconds, width, height) "
      "VALUES (42, 0, 0.0, 1, 1)");
  EXPECT_FALSE(orphan.ok());
  EXPECT_NE(orphan.message().find("FOREIGN KEY"), std::string::npos) << orphan.message();
}

TEST(DatabaseTest, StrictTablesRejectWrongTypes) {
  auto db = Database::Open(testing::ScratchDir("DatabaseTest.Strict") + "/reel.db");
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(
      db->Execute("INSERT INTO jobs(name, spec_text, spec_hash) VALUES ('j', 's', 'h')").ok());
  Status wrong = db->Execute(
      "INSERT INTO items(job_id, path, kind, settings_hash, size_bytes) "
      "VALUES (1, 'a.mp4', 'video', 'x', 'not a number')");
  EXPECT_FALSE(wrong.ok());
  EXPECT_NE(wrong.message().find("cannot store TEXT value in INTEGER column"), std::string::npos)
      << wrong.message();
  // CHECK constraints on enumerations and JSON.
  EXPECT_FALSE(db->Execute("INSERT INTO items(job_id, path, kind, settings_hash) "
                           "VALUES (1, 'b.mp4', 'hologram', 'x')")
                   .ok());
  EXPECT_FALSE(db->Execute("INSERT INTO items(job_id, path, kind, settings_hash, media_json) "
                           "VALUES (1, 'c.mp4', 'video', 'x', '{not json')")
                   .ok());
  EXPECT_TRUE(db->Execute("INSERT INTO items(job_id, path, kind, settings_hash, size_bytes) "
                          "VALUES (1, 'd.mp4', 'video', 'x', 10)")
                  .ok());
}

TEST(DatabaseTest, TransactionRollsBackUnlessCommitted) {
  auto db = Database::Open(testing::ScratchDir("DatabaseTest.Txn") + "/reel.db");
  ASSERT_TRUE(db.ok());
  {
    auto txn = internal::Transaction::Begin(db->handle());
    ASSERT_TRUE(txn.ok());
    ASSERT_TRUE(
        db->Execute("INSERT INTO jobs(name, spec_text, spec_hash) VALUES ('lost', 's', 'h')").ok());
  }  // destroyed without Commit
  EXPECT_EQ(One(*db, "SELECT count(*) FROM jobs"), "0");
  {
    auto txn = internal::Transaction::Begin(db->handle());
    ASSERT_TRUE(txn.ok());
    ASSERT_TRUE(
        db->Execute("INSERT INTO jobs(name, spec_text, spec_hash) VALUES ('kept', 's', 'h')").ok());
    ASSERT_TRUE(txn->Commit().ok());
    EXPECT_FALSE(txn->Commit().ok());  // only once
  }
  EXPECT_EQ(One(*db, "SELECT group_concat(name) FROM jobs"), "kept");
}

TEST(DatabaseTest, StatementRejectsTrailingStatements) {
  auto db = Database::Open(testing::ScratchDir("DatabaseTest.Prepare") + "/reel.db");
  ASSERT_TRUE(db.ok());
  EXPECT_TRUE(internal::Statement::Prepare(db->handle(), "SELECT 1; -- comment\n").ok());
  auto two = internal::Statement::Prepare(db->handle(), "SELECT 1; DELETE FROM jobs");
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(two.status().code(), ErrorCode::kInvalidArgument);
}

TEST(DatabaseTest, MovedDatabaseKeepsTheConnection) {
  auto opened = Database::Open(testing::ScratchDir("DatabaseTest.Move") + "/reel.db");
  ASSERT_TRUE(opened.ok());
  Database a = std::move(opened).value();
  Database b = std::move(a);
  EXPECT_TRUE(b.Execute("SELECT 1").ok());
  EXPECT_EQ(a.handle(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state
}

// Two connections in two threads write interleaved transactions; WAL lets them read while the
// other writes and the busy timeout queues the writers, so every write succeeds.
TEST(DatabaseTest, ConcurrentWritersBothSucceed) {
  std::string path = testing::ScratchDir("DatabaseTest.Concurrent") + "/reel.db";
  auto setup = Store::Open(path);
  ASSERT_TRUE(setup.ok());
  auto job = setup->UpsertJob({.name = "j", .spec_text = "spec"});
  ASSERT_TRUE(job.ok());
  constexpr int kItemsPerWriter = 150;
  auto writer = [&](int which, Status* result) {
    auto store = Store::Open(path);
    if (!store.ok()) {
      *result = store.status();
      return;
    }
    for (int i = 0; i < kItemsPerWriter; ++i) {
      ItemRecord item;
      item.job_id = *job;
      item.path = "w" + std::to_string(which) + "/" + std::to_string(i) + ".mp4";
      item.settings_hash = "s";
      auto id = store->UpsertItem(item);
      if (!id.ok()) {
        *result = id.status();
        return;
      }
      Status s = store->MarkItemRunning(*id, std::nullopt);
      if (s.ok()) {
        s = store->MarkItemDone(*id, {.frames = {{.sample_index = 0, .width = 4, .height = 4}}});
      }
      if (s.ok()) s = store->LogEvent({.item_id = *id, .message = "done"});
      if (!s.ok()) {
        *result = s;
        return;
      }
    }
  };
  Status a, b;
  std::thread ta(writer, 0, &a);
  std::thread tb(writer, 1, &b);
  ta.join();
  tb.join();
  EXPECT_TRUE(a.ok()) << a.ToString();
  EXPECT_TRUE(b.ok()) << b.ToString();
  auto counts = Query(path,
                      "SELECT (SELECT count(*) FROM items WHERE status = 'done'), "
                      "(SELECT count(*) FROM frames), (SELECT count(*) FROM events)");
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_EQ(std::get<int64_t>(counts->rows[0][0]), 2 * kItemsPerWriter);
  EXPECT_EQ(std::get<int64_t>(counts->rows[0][1]), 2 * kItemsPerWriter);
  EXPECT_EQ(std::get<int64_t>(counts->rows[0][2]), 2 * kItemsPerWriter);
  EXPECT_TRUE(setup->database().CheckIntegrity().ok());
}

// The same across processes: a forked child and the parent log events into one file at once.
// Also checks that random uids differ between parent and child after fork().
TEST(DatabaseTest, ConcurrentProcessesBothSucceed) {
  std::string path = testing::ScratchDir("DatabaseTest.Fork") + "/reel.db";
  {
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE(store->LogEvent({.message = "before fork"}).ok());  // seeds the parent's uids
  }
  constexpr int kEvents = 200;
  auto write = [&path](const char* who) {
    auto store = Store::Open(path);
    if (!store.ok()) return false;
    for (int i = 0; i < kEvents; ++i) {
      if (!store->LogEvent({.message = std::string(who) + " " + std::to_string(i)}).ok()) {
        return false;
      }
    }
    return true;
  };
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(write("child") ? 0 : 1);
  bool parent_ok = write("parent");
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(parent_ok);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  auto counts = Query(path, "SELECT count(*), count(DISTINCT uid) FROM events");
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(std::get<int64_t>(counts->rows[0][0]), 2 * kEvents + 1);
  EXPECT_EQ(std::get<int64_t>(counts->rows[0][1]), 2 * kEvents + 1);
}

// Several connections creating the same new file at once all see one fully migrated schema.
TEST(DatabaseTest, ConcurrentFirstOpenMigratesOnce) {
  std::string path = testing::ScratchDir("DatabaseTest.FirstOpen") + "/reel.db";
  std::vector<Status> results(4);
  std::vector<std::thread> threads;
  for (auto& result : results) {
    threads.emplace_back([&path, &result] {
      auto db = Database::Open(path);
      result = db.ok() ? Status::Ok() : db.status();
    });
  }
  for (auto& t : threads) t.join();
  for (const Status& s : results) EXPECT_TRUE(s.ok()) << s.ToString();
  auto db = Database::Open(path);
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(db->SchemaVersion().value(), Database::LatestSchemaVersion());
}

}  // namespace
}  // namespace reel::storage
