// End-to-end tests of contexts: the context stage of `reel run` (stored after the item, rebuilt
// only when a prompt or a context setting changes) and `reel context` (breakdown, --json,
// --request with frames decoded once into the frame cache).
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "tests/cli/cli_test_util.h"

namespace reel::testing {
namespace {

namespace fs = std::filesystem;

// A job directory: one 3 s clip (320x180) with a side-car subtitle, one document, two prompts.
std::string MakeContextJob(const std::string& test, const std::string& context = "") {
  std::string dir = ScratchDir(test);
  fs::create_directories(dir + "/media");
  fs::copy_file(SmallClip(), dir + "/media/clip.mp4", fs::copy_options::overwrite_existing);
  WriteText(dir + "/media/clip.srt",
            "1\n00:00:00,500 --> 00:00:01,500\nA penguin waddles in\n\n"
            "2\n00:00:01,500 --> 00:00:02,500\nIt slides away\n");
  WriteText(dir + "/media/notes.md", "# Notes\n\nThe penguin is a bird.\n");
  WriteText(dir + "/job.yaml", "name: " + test +
                                   "\ninputs:\n  - media/*.mp4\n  - media/*.md\n"
                                   "sampling:\n  fps: 1\n"
                                   "storage:\n  database: out.db\n" +
                                   context +
                                   "prompts:\n"
                                   "  - id: what\n    question: What happens?\n"
                                   "  - id: who\n    question: Who is there?\n");
  return dir;
}

void Replace(const std::string& path, const std::string& from, const std::string& to) {
  std::string text = ReadText(path);
  size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  WriteText(path, text);
}

std::map<std::string, int64_t> ContextsByPrompt(const std::string& db) {
  std::map<std::string, int64_t> counts;
  for (const auto& row :
       QueryJson(db, "SELECT prompt_id, count(*) AS n FROM contexts GROUP BY prompt_id")) {
    counts[row["prompt_id"].get<std::string>()] = row["n"].get<int64_t>();
  }
  return counts;
}

TEST(ContextStageTest, StoredAfterTheItemAndRebuiltOnlyWhenAPromptOrSettingChanges) {
  std::string dir = MakeContextJob("context_rebuild");
  const std::string db = dir + "/out.db";
  CommandResult first = Reel("run job.yaml --log-format json", dir);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(LastJsonLine(first.err)["done"], 2);
  // One context per item and prompt, with how it was counted and what it was built from.
  nlohmann::json rows =
      QueryJson(db,
                "SELECT c.prompt_id, c.count_method, c.transport, c.settings_key, c.segment_index, "
                "c.segment_count, c.total_tokens, c.text_tokens, c.image_tokens, c.video_tokens, "
                "c.manifest_json, i.kind FROM contexts c JOIN items i ON i.id = c.item_id");
  ASSERT_EQ(rows.size(), 4u);
  for (const auto& row : rows) {
    EXPECT_EQ(row["count_method"], "estimate");
    EXPECT_EQ(row["transport"], "images");
    EXPECT_EQ(row["segment_index"], 0);
    EXPECT_EQ(row["segment_count"], 1);
    EXPECT_EQ(row["settings_key"].get<std::string>().size(), 64u);
    EXPECT_EQ(row["total_tokens"].get<int64_t>(), row["text_tokens"].get<int64_t>() +
                                                      row["image_tokens"].get<int64_t>() +
                                                      row["video_tokens"].get<int64_t>());
    nlohmann::json manifest = nlohmann::json::parse(row["manifest_json"].get<std::string>());
    EXPECT_EQ(manifest["tokens"]["total"], row["total_tokens"]);
    EXPECT_FALSE(manifest["count"]["exact"].get<bool>());
    if (row["kind"] == "video") {
      // 4 frames (0, 1, 2 s and the last) at the stored size, each an image pair of itself.
      EXPECT_EQ(manifest["frames"]["kept"], 4);
      EXPECT_GT(row["image_tokens"].get<int64_t>(), 0);
    } else {
      EXPECT_EQ(row["image_tokens"], 0);
    }
  }
  const nlohmann::json items_before = QueryJson(db, "SELECT id, attempts, finished_at FROM items");
  const int64_t frames_before = QueryInt(db, "SELECT count(*) FROM frames");

  // Unchanged: nothing is redone, no context is added.
  CommandResult second = Reel("run job.yaml --log-format json", dir);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(LastJsonLine(second.err)["skipped"], 2);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM contexts"), 4);

  // A changed question: the items are skipped, only that prompt's contexts are built again (and
  // its old ones deleted: no question about them was sent; ContextCleanupTest).
  const nlohmann::json what_before =
      QueryJson(db, "SELECT id FROM contexts WHERE prompt_id = 'what'");
  Replace(dir + "/job.yaml", "Who is there?", "Who is there, and why?");
  CommandResult third = Reel("run job.yaml --log-format json", dir);
  ASSERT_EQ(third.exit_code, 0) << third.err;
  EXPECT_EQ(LastJsonLine(third.err)["done"], 0);
  EXPECT_EQ(LastJsonLine(third.err)["skipped"], 2);
  EXPECT_EQ(ContextsByPrompt(db), (std::map<std::string, int64_t>{{"what", 2}, {"who", 2}}));
  EXPECT_EQ(QueryJson(db, "SELECT id FROM contexts WHERE prompt_id = 'what'"), what_before);

  // A changed context setting: every prompt's contexts again, still no item redone.
  Replace(dir + "/job.yaml",
          "storage:", "context:\n  transport: video\n  server_num_frames: 0\nstorage:");
  CommandResult fourth = Reel("run job.yaml --log-format json", dir);
  ASSERT_EQ(fourth.exit_code, 0) << fourth.err;
  EXPECT_EQ(LastJsonLine(fourth.err)["done"], 0);
  EXPECT_EQ(ContextsByPrompt(db), (std::map<std::string, int64_t>{{"what", 2}, {"who", 2}}));
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM contexts WHERE transport = 'video'"), 4);
  EXPECT_EQ(QueryJson(db, "SELECT id, attempts, finished_at FROM items"), items_before);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM frames"), frames_before);
}

TEST(ContextStageTest, AContextThatCannotFitWarnsAndKeepsTheItem) {
  std::string dir =
      MakeContextJob("context_too_big", "context:\n  token_budget: 17000\n  fit_strategy: fail\n");
  const std::string db = dir + "/out.db";
  CommandResult run = Reel("run job.yaml --log-format json", dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(LastJsonLine(run.err)["done"], 2);
  EXPECT_NE(run.err.find("clip.mp4: no context: prompt 'what'"), std::string::npos) << run.err;
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(*) FROM events WHERE level = 'warning' AND message LIKE "
                     "'%clip.mp4: no context%'"),
            1);
  // The document fits; the video's contexts are missing, its frames are kept.
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM contexts"), 2);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM frames"), 4);
  CommandResult shown = Reel("context job.yaml clip.mp4", dir);
  EXPECT_EQ(shown.exit_code, 1);
  EXPECT_NE(shown.err.find("clip.mp4: needs "), std::string::npos) << shown.err;
}

TEST(ContextStageTest, ABadTokenizerFileStopsTheRunBeforeAnyItem) {
  std::string dir =
      MakeContextJob("context_bad_tokenizer", "context:\n  tokenizer: tokenizer.json\n");
  WriteText(dir + "/tokenizer.json", "{\"model\": {\"type\": \"WordPiece\"}}");
  CommandResult run = Reel("run job.yaml", dir);
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("tokenizer.json"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("WordPiece"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(dir + "/out.db")) << "nothing is done before the job is valid";
}

size_t FilesUnder(const std::string& dir) {
  size_t n = 0;
  if (!fs::is_directory(dir)) return 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) n += entry.is_regular_file();
  return n;
}

// Contexts the job no longer builds (a changed prompt, context setting or item) are deleted with
// the questions about them that were never sent, and so are their frame files that no current
// context uses; `reel context` shows the current ones, all stored.
TEST(ContextCleanupTest, SupersededContextsAndTheirFramesAreDeleted) {
  std::string dir = MakeContextJob("context_cleanup");
  const std::string db = dir + "/out.db";
  ASSERT_EQ(Reel("run job.yaml", dir).exit_code, 0);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM contexts"), 4);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM tasks WHERE status = 'waiting'"), 4);
  for (const char* prompt : {"what", "who"}) {
    CommandResult request = Reel(std::string("context job.yaml clip.mp4 --prompt ") + prompt +
                                     " --request " + prompt + ".json",
                                 dir);
    ASSERT_EQ(request.exit_code, 0) << request.err;
  }
  EXPECT_EQ(FilesUnder(dir + "/out.db.frames"), 4u) << "both prompts send the same 4 frames";

  // A changed question: that prompt's old contexts and its unsent questions go; the frames stay
  // (the other prompt's context sends them).
  Replace(dir + "/job.yaml", "Who is there?", "Who is there, and why?");
  CommandResult changed = Reel("run job.yaml", dir);
  ASSERT_EQ(changed.exit_code, 0) << changed.err;
  EXPECT_EQ(ContextsByPrompt(db), (std::map<std::string, int64_t>{{"what", 2}, {"who", 2}}));
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM tasks"), 4);
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(*) FROM tasks t JOIN contexts c ON c.id = t.context_id "
                     "WHERE c.superseded_at IS NULL"),
            4);
  EXPECT_EQ(FilesUnder(dir + "/out.db.frames"), 4u);

  // A changed sampling setting: the video is sampled again; every context of it is replaced, and
  // the frame files of the old sample are deleted.
  Replace(dir + "/job.yaml", "fps: 1", "fps: 2");
  CommandResult resampled = Reel("run job.yaml --log-format json", dir);
  ASSERT_EQ(resampled.exit_code, 0) << resampled.err;
  EXPECT_EQ(LastJsonLine(resampled.err)["done"], 1);  // the video
  EXPECT_EQ(ContextsByPrompt(db), (std::map<std::string, int64_t>{{"what", 2}, {"who", 2}}));
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM tasks"), 4);
  EXPECT_EQ(FilesUnder(dir + "/out.db.frames"), 0u);

  // `reel context` shows the current contexts, each stored.
  CommandResult shown = Reel("context job.yaml --json", dir);
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  nlohmann::json contexts = nlohmann::json::parse(shown.out);
  ASSERT_EQ(contexts.size(), 4u);
  std::set<std::string> keys;
  for (const auto& c : contexts) {
    EXPECT_TRUE(c["stored"].get<bool>()) << c.dump();
    keys.insert(c["settings_key"].get<std::string>());
  }
  std::set<std::string> stored;
  for (const auto& row : QueryJson(db, "SELECT DISTINCT settings_key FROM contexts")) {
    stored.insert(row["settings_key"].get<std::string>());
  }
  EXPECT_EQ(keys, stored);
}

// Questions an older version asked that the job no longer asks (chapters of a document: no
// timeline) stop waiting for a model: the next run deletes the never-sent one and retires the one
// that was sent before (kept with its request), so `reel status` no longer counts them.
TEST(ContextCleanupTest, ChaptersQuestionsAnOlderVersionAskedAboutADocumentStopWaiting) {
  std::string dir = MakeContextJob("context_stale_chapters");
  WriteText(dir + "/job.yaml", ReadText(dir + "/job.yaml") + "  - kind: chapters\n");
  const std::string db = dir + "/out.db";
  CommandResult first = Reel("run job.yaml", dir);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string notes = "(SELECT id FROM items WHERE path LIKE '%notes.md')";
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM tasks WHERE prompt_id = 'chapters' AND item_id = " +
                             notes),
            0);
  const int64_t waiting = QueryInt(db, "SELECT count(*) FROM tasks WHERE status = 'waiting'");
  ASSERT_EQ(waiting, 5) << "what, who, chapters of the clip; what, who of the document";
  // What an older version left: a chapters context of the document, a question about it never
  // sent, and one whose send was stopped (back to waiting).
  const std::string old_rows =
      "INSERT INTO contexts(item_id, prompt_id, context_hash, manifest_json, settings_key, "
      "base_key) VALUES (" +
      notes +
      ", 'chapters', 'old', '{}', 'old-key', 'old-key');"
      "INSERT INTO tasks(custom_id, item_id, prompt_id, context_id, step) SELECT 'old-' || n, "
      "c.item_id, 'chapters', c.id, 'ask' FROM contexts c, (SELECT 'never-sent' AS n UNION ALL "
      "SELECT 'stopped') WHERE c.context_hash = 'old';"
      "INSERT INTO requests(uid, item_id, context_id, prompt_id, status, outcome, task_id) "
      "SELECT 'old-request', item_id, context_id, 'chapters', 'failed', 'cancelled', id FROM "
      "tasks WHERE custom_id = 'old-stopped';"
      "UPDATE tasks SET request_id = (SELECT id FROM requests WHERE uid = 'old-request') WHERE "
      "custom_id = 'old-stopped';";
  ASSERT_EQ(RunCommand("sqlite3 " + ShellQuote(db) + " " + ShellQuote(old_rows)).exit_code, 0);
  CommandResult before = Reel("status --db out.db", dir);
  EXPECT_NE(before.out.find("0 answered, 0 failed, 7 waiting for a model"), std::string::npos)
      << before.out;

  CommandResult again = Reel("run job.yaml", dir);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  CommandResult after = Reel("status --db out.db", dir);
  EXPECT_NE(after.out.find("0 answered, 0 failed, 5 waiting for a model"), std::string::npos)
      << after.out;
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM tasks WHERE custom_id = 'old-never-sent'"), 0);
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(*) FROM tasks WHERE custom_id = 'old-stopped' AND "
                     "retired_at IS NOT NULL"),
            1);
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM requests WHERE uid = 'old-request'"), 1);
  EXPECT_EQ(QueryInt(db,
                     "SELECT count(*) FROM contexts WHERE context_hash = 'old' AND "
                     "superseded_at IS NOT NULL"),
            1)
      << "kept for its request's history";
}

// The width and height of a baseline or progressive JPEG (its SOF marker).
std::pair<int, int> JpegSize(const std::string& jpeg) {
  for (size_t i = 2; i + 9 < jpeg.size();) {
    if (static_cast<unsigned char>(jpeg[i]) != 0xFF) return {0, 0};
    unsigned char marker = static_cast<unsigned char>(jpeg[i + 1]);
    size_t length =
        (static_cast<unsigned char>(jpeg[i + 2]) << 8) | static_cast<unsigned char>(jpeg[i + 3]);
    if (marker == 0xC0 || marker == 0xC2) {
      int h =
          (static_cast<unsigned char>(jpeg[i + 5]) << 8) | static_cast<unsigned char>(jpeg[i + 6]);
      int w =
          (static_cast<unsigned char>(jpeg[i + 7]) << 8) | static_cast<unsigned char>(jpeg[i + 8]);
      return {w, h};
    }
    i += 2 + length;
  }
  return {0, 0};
}

std::string Unbase64(const std::string& in) {
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    size_t v = kAlphabet.find(c);
    if (v == std::string::npos) return "";
    buffer = (buffer << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xFF));
    }
  }
  return out;
}

TEST(ContextCommandTest, BreakdownJsonAndAnExactRequestBody) {
  std::string dir = MakeContextJob("context_command");
  const std::string db = dir + "/out.db";
  ASSERT_EQ(Reel("run job.yaml", dir).exit_code, 0);

  CommandResult text = Reel("context job.yaml", dir);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("clip.mp4  prompt what"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("notes.md  prompt who"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("frames     4 sampled, 4 kept"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("stored     yes"), std::string::npos) << text.out;

  // --json: the manifests, which are what the run stored.
  CommandResult json = Reel("context job.yaml clip.mp4 --prompt what --json", dir);
  ASSERT_EQ(json.exit_code, 0) << json.err;
  nlohmann::json shown = nlohmann::json::parse(json.out);
  ASSERT_EQ(shown.size(), 1u);
  EXPECT_TRUE(shown[0]["stored"].get<bool>());
  nlohmann::json stored =
      QueryJson(db,
                "SELECT manifest_json, settings_key FROM contexts WHERE prompt_id = 'what' AND "
                "item_id = " +
                    std::to_string(shown[0]["item_id"].get<int64_t>()));
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(shown[0]["segments"][0],
            nlohmann::json::parse(stored[0]["manifest_json"].get<std::string>()));
  EXPECT_EQ(shown[0]["settings_key"], stored[0]["settings_key"]);

  // --request: the whole body; the frames are decoded once, then read from the cache.
  CommandResult request = Reel("context job.yaml clip.mp4 --prompt what --request a.json", dir);
  ASSERT_EQ(request.exit_code, 0) << request.err;
  EXPECT_NE(request.err.find("0 from the cache, 4 decoded"), std::string::npos) << request.err;
  CommandResult again = Reel("context job.yaml clip.mp4 --prompt what --request b.json", dir);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("4 from the cache, 0 decoded"), std::string::npos) << again.err;
  const std::string body = ReadText(dir + "/a.json");
  EXPECT_EQ(body, ReadText(dir + "/b.json")) << "the same inputs give the same bytes";
  nlohmann::json j = nlohmann::json::parse(body);
  EXPECT_EQ(j["model"], "MiniMax-M3");
  EXPECT_EQ(j["max_completion_tokens"], 16384);
  EXPECT_EQ(j["chat_template_kwargs"]["thinking_mode"], "adaptive");
  ASSERT_EQ(j["messages"].size(), 2u);
  EXPECT_EQ(j["messages"][0]["role"], "system");
  const nlohmann::json& parts = j["messages"][1]["content"];
  nlohmann::json frames =
      QueryJson(db,
                "SELECT f.width, f.height FROM frames f JOIN items i ON i.id = f.item_id "
                "WHERE i.path LIKE '%clip.mp4' ORDER BY f.sample_index");
  ASSERT_EQ(frames.size(), 4u);
  std::vector<std::string> labels;
  size_t images = 0;
  for (const auto& part : parts) {
    if (part["type"] == "text") {
      labels.push_back(part["text"]);
      continue;
    }
    ASSERT_EQ(part["type"], "image_url");
    std::string url = part["image_url"]["url"];
    ASSERT_EQ(url.rfind("data:image/jpeg;base64,", 0), 0u);
    std::string jpeg = Unbase64(url.substr(23));
    ASSERT_GT(jpeg.size(), 100u);
    EXPECT_EQ(JpegSize(jpeg), std::make_pair(frames[images]["width"].get<int>(),
                                             frames[images]["height"].get<int>()));
    ++images;
  }
  EXPECT_EQ(images, 4u);
  EXPECT_EQ(labels.front(), "Frame at 0.0 s:\n");
  EXPECT_EQ(labels[1], "[0.5-1.5 s] A penguin waddles in\nFrame at 1.0 s:\n");
  EXPECT_EQ(labels.back().substr(labels.back().size() - 13), "What happens?");
  // The cache holds the four frames once.
  size_t cached = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir + "/out.db.frames")) {
    cached += entry.is_regular_file() ? 1 : 0;
  }
  EXPECT_EQ(cached, 4u);

  // One item and one prompt, or a clear refusal.
  CommandResult two = Reel("context job.yaml --request c.json", dir);
  EXPECT_EQ(two.exit_code, 2);
  EXPECT_NE(two.err.find("--request writes one request"), std::string::npos) << two.err;
  CommandResult missing = Reel("context job.yaml nosuch.mp4", dir);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("no item 'nosuch.mp4'"), std::string::npos) << missing.err;
}

TEST(ContextCommandTest, AChaptersPromptSendsItsQuestionAndSchema) {
  std::string dir = MakeContextJob("context_chapters");
  Replace(dir + "/job.yaml", "prompts:\n", "prompts:\n  - id: chapters\n    kind: chapters\n");
  ASSERT_EQ(Reel("run job.yaml", dir).exit_code, 0);
  CommandResult request = Reel("context job.yaml clip.mp4 --prompt chapters --request c.json", dir);
  ASSERT_EQ(request.exit_code, 0) << request.err;
  nlohmann::json j = nlohmann::json::parse(ReadText(dir + "/c.json"));
  const std::string question = j["messages"].back()["content"].back()["text"];
  EXPECT_NE(question.find("Divide this video into chapters"), std::string::npos) << question;
  EXPECT_NE(question.find("The video is 00:03 long, so give times to a tenth of a second."),
            std::string::npos)
      << question;
  EXPECT_EQ(j["response_format"]["type"], "json_schema") << j.dump().substr(0, 300);
  // The stored context counted that question; the document (no timeline) has no chapters
  // context, and `reel context` says it is not asked.
  EXPECT_EQ(QueryInt(dir + "/out.db", "SELECT count(*) FROM contexts WHERE prompt_id = 'chapters'"),
            1);
  CommandResult notes = Reel("context job.yaml notes.md --prompt chapters", dir);
  EXPECT_EQ(notes.exit_code, 0) << notes.err;
  EXPECT_NE(notes.err.find("prompt 'chapters' is not asked about this item (a chapters prompt "
                           "needs a video's timeline)"),
            std::string::npos)
      << notes.err;
  EXPECT_EQ(Reel("context job.yaml notes.md --prompt chapters --request n.json", dir).exit_code, 1);
}

TEST(ContextCommandTest, AnImageItemIsOneImageAtItsStoredSize) {
  std::string dir = ScratchDir("context_image");
  fs::copy_file(GeneratedMedia("context_image_1280x720.jpg",
                               "-f lavfi -i testsrc2=size=1280x720 -frames:v 1"),
                dir + "/photo.jpg");
  WriteText(dir + "/job.yaml",
            "name: img\ninputs: [photo.jpg]\nstorage:\n  database: out.db\n"
            "prompts:\n  - id: what\n    question: What is this?\n");
  ASSERT_EQ(Reel("run job.yaml", dir).exit_code, 0);
  nlohmann::json frame = QueryJson(dir + "/out.db", "SELECT width, height FROM frames");
  ASSERT_EQ(frame.size(), 1u);
  CommandResult request = Reel("context job.yaml photo.jpg --request body.json", dir);
  ASSERT_EQ(request.exit_code, 0) << request.err;
  EXPECT_NE(request.err.find("0 from the cache, 1 decoded"), std::string::npos) << request.err;
  nlohmann::json j = nlohmann::json::parse(ReadText(dir + "/body.json"));
  std::vector<std::string> urls;
  for (const auto& part : j["messages"].back()["content"]) {
    if (part["type"] == "image_url") urls.push_back(part["image_url"]["url"]);
  }
  ASSERT_EQ(urls.size(), 1u);
  EXPECT_EQ(JpegSize(Unbase64(urls[0].substr(23))),
            std::make_pair(frame[0]["width"].get<int>(), frame[0]["height"].get<int>()));
  // The stored context counts it as one pair of itself: (H/28)(W/28) + start + end.
  int64_t image_tokens =
      QueryInt(dir + "/out.db", "SELECT image_tokens FROM contexts WHERE prompt_id = 'what'");
  EXPECT_EQ(image_tokens,
            (frame[0]["width"].get<int64_t>() / 28) * (frame[0]["height"].get<int64_t>() / 28) + 2);
}

}  // namespace
}  // namespace reel::testing
