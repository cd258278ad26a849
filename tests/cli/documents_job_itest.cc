// Documents in a job, end to end: PDFs, a web page, an e-book and office files as items of
// `reel run` (one segment per page, page pictures as frames), found page by page by `reel
// search`, sent to the model with page markers and pictures, a damaged PDF failing alone, and
// reruns that redo only what a changed setting touches.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <map>

#include "tests/cli/cli_test_util.h"
#include "tests/support/test_documents.h"

namespace reel::testing {
namespace {

namespace fs = std::filesystem;

class DocumentsJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    docs_ = TestDocuments(&why);
    if (docs_.empty()) GTEST_SKIP() << why;
  }

  // A job over the generated documents (and a damaged PDF and a Markdown note) with one prompt.
  std::string MakeJob(const std::string& test, const std::string& extra = "") {
    const std::string dir = ScratchDir(test);
    fs::create_directories(dir + "/media");
    for (const char* name : {"text.pdf", "scanned.pdf", "truncated.pdf", "page.html", "book.epub",
                             "doc.docx", "deck.pptx"}) {
      fs::copy_file(fs::path(docs_) / name, dir + "/media/" + name,
                    fs::copy_options::overwrite_existing);
    }
    WriteText(dir + "/media/notes.md", "# Notes\n\nThe penguin is a bird.\n");
    WriteText(dir + "/job.yaml", "name: " + test +
                                     "\ninputs: [media]\n"
                                     "storage:\n  database: out.db\n" +
                                     extra +
                                     "prompts:\n  - id: what\n    question: What is on the "
                                     "pages?\n");
    return dir;
  }

  std::string docs_;
};

std::map<std::string, nlohmann::json> Items(const std::string& db) {
  std::map<std::string, nlohmann::json> items;
  for (const auto& row :
       QueryJson(db, "SELECT id, path, status, error, settings_hash, finished_at FROM items")) {
    items[fs::path(row["path"].get<std::string>()).filename().string()] = row;
  }
  return items;
}

TEST_F(DocumentsJobTest, PagesAreSegmentsAndFramesSearchableByPage) {
  const std::string dir = MakeJob("documents_job");
  const std::string db = dir + "/out.db";
  // The plan counts a document's page pictures before anything is read (was 0 for documents).
  CommandResult plan = Reel("plan job.yaml --format json", dir);
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  std::map<std::string, nlohmann::json> planned;
  for (const auto& row : nlohmann::json::parse(plan.out)) {
    planned[fs::path(row["path"].get<std::string>()).filename().string()] = row["est_frames"];
  }
  EXPECT_EQ(planned["text.pdf"], 3) << plan.out;
  EXPECT_EQ(planned["notes.md"], 0) << plan.out;
  EXPECT_TRUE(planned["truncated.pdf"].is_null()) << "unknown until read: " << plan.out;
  CommandResult run = Reel("run job.yaml --log-format json", dir);
  EXPECT_EQ(run.exit_code, 1) << "the damaged PDF fails\n" << run.err;
  nlohmann::json summary = LastJsonLine(run.err);
  EXPECT_EQ(summary["done"], 7) << run.err;
  EXPECT_EQ(summary["failed"], 1) << run.err;
  auto items = Items(db);
  ASSERT_EQ(items.size(), 8u);
  for (const auto& [name, item] : items) {
    if (name == "truncated.pdf") continue;
    EXPECT_EQ(item["status"], "done") << name << ": " << item["error"];
  }
  EXPECT_EQ(items["truncated.pdf"]["status"], "failed");
  const std::string error = items["truncated.pdf"]["error"].get<std::string>();
  EXPECT_NE(error.find(dir + "/media/truncated.pdf"), std::string::npos) << error;

  // text.pdf: three pages, each a segment with the page number as its time, labelled i, ii, 1.
  const std::string text_id = std::to_string(items["text.pdf"]["id"].get<int64_t>());
  nlohmann::json segments = QueryJson(
      db, "SELECT source, start_seconds, end_seconds, text FROM segments WHERE item_id = " +
              text_id + " ORDER BY start_seconds");
  ASSERT_EQ(segments.size(), 3u);
  const std::vector<std::string> want = SplitPages(ReadText(docs_ + "/text.pdf.expected.txt"));
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(segments[i]["source"], "pdf");
    EXPECT_EQ(segments[i]["start_seconds"], i + 1.0);
    EXPECT_EQ(segments[i]["end_seconds"], i + 1.0);
    EXPECT_EQ(NormalizeSpace(segments[i]["text"]), NormalizeSpace(want[i])) << i;
  }
  nlohmann::json media = nlohmann::json::parse(
      QueryJson(db, "SELECT media_json FROM items WHERE id = " + text_id)[0]["media_json"]
          .get<std::string>());
  EXPECT_EQ(media["document"]["format"], "pdf");
  EXPECT_EQ(media["document"]["page_count"], 3);
  ASSERT_EQ(media["pages"].size(), 3u);
  EXPECT_EQ(media["pages"][0]["label"], "i");
  EXPECT_EQ(media["pages"][2]["label"], "1");

  // Its pictures are frames: sample index = page index, time = page number, with thumbnails.
  nlohmann::json frames = QueryJson(
      db,
      "SELECT sample_index, time_seconds, width, height, thumbnail_hash FROM frames WHERE "
      "item_id = " +
          text_id + " ORDER BY sample_index");
  ASSERT_EQ(frames.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(frames[i]["sample_index"], i);
    EXPECT_EQ(frames[i]["time_seconds"], i + 1.0);
    EXPECT_EQ(frames[i]["width"].get<int>() % 28, 0);
    EXPECT_LE(frames[i]["width"].get<int64_t>() * frames[i]["height"].get<int64_t>(), 451584);
    EXPECT_FALSE(frames[i]["thumbnail_hash"].is_null());
  }

  // The scanned PDF was read by OCR; the markup formats by their own names, without pictures.
  auto sources = [&](const std::string& name) {
    std::set<std::string> out;
    for (const auto& row : QueryJson(db, "SELECT DISTINCT source FROM segments WHERE item_id = " +
                                             std::to_string(items[name]["id"].get<int64_t>()))) {
      out.insert(row["source"].get<std::string>());
    }
    return out;
  };
  EXPECT_EQ(sources("scanned.pdf"), std::set<std::string>{"ocr"});
  EXPECT_EQ(sources("page.html"), std::set<std::string>{"html"});
  EXPECT_EQ(sources("book.epub"), std::set<std::string>{"epub"});
  EXPECT_EQ(sources("doc.docx"), std::set<std::string>{"docx"});
  EXPECT_EQ(sources("deck.pptx"), std::set<std::string>{"pptx"});
  EXPECT_EQ(sources("notes.md"), std::set<std::string>{"document"}) << "text documents as before";
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM segments WHERE item_id = " +
                             std::to_string(items["book.epub"]["id"].get<int64_t>())),
            2);

  // `reel search` finds a word and names the item and the page.
  CommandResult search = Reel("search --db out.db symbols --format json", dir);
  ASSERT_EQ(search.exit_code, 0) << search.err;
  nlohmann::json hits = nlohmann::json::parse(search.out);
  ASSERT_EQ(hits.size(), 1u) << search.out;
  EXPECT_EQ(fs::path(hits[0]["path"].get<std::string>()).filename(), "text.pdf");
  EXPECT_EQ(hits[0]["source"], "pdf");
  EXPECT_EQ(hits[0]["where"], "page 2");
  CommandResult ocr_search = Reel("search --db out.db Tesseract --format json", dir);
  ASSERT_EQ(ocr_search.exit_code, 0) << ocr_search.err;
  nlohmann::json ocr_hits = nlohmann::json::parse(ocr_search.out);
  ASSERT_EQ(ocr_hits.size(), 1u) << ocr_search.out;
  EXPECT_EQ(ocr_hits[0]["where"], "page 1");
  EXPECT_EQ(ocr_hits[0]["source"], "ocr");
}

TEST_F(DocumentsJobTest, RerunRedoesNothingAndADocumentsSettingRedoesOnlyDocuments) {
  const std::string dir = MakeJob("documents_rerun");
  const std::string db = dir + "/out.db";
  ASSERT_EQ(Reel("run job.yaml", dir).exit_code, 1);
  auto before = Items(db);
  CommandResult again = Reel("run job.yaml --log-format json", dir);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(LastJsonLine(again.err)["done"], 0) << again.err;
  EXPECT_EQ(LastJsonLine(again.err)["skipped"], 8) << again.err;
  EXPECT_EQ(Items(db), before) << "a rerun changes no item";

  // pages: text drops the pictures: the documents read by pages are redone, the note is not.
  WriteText(dir + "/job.yaml",
            ReadText(dir + "/job.yaml") + "documents:\n  pages: text\n  page_range: 1-2\n");
  CommandResult changed = Reel("run job.yaml --log-format json", dir);
  nlohmann::json summary = LastJsonLine(changed.err);
  auto after = Items(db);
  EXPECT_EQ(after["notes.md"], before["notes.md"]);
  for (const char* name :
       {"text.pdf", "scanned.pdf", "page.html", "book.epub", "doc.docx", "deck.pptx"}) {
    EXPECT_NE(after[name]["settings_hash"], before[name]["settings_hash"]) << name;
    EXPECT_EQ(after[name]["status"], "done") << name << ": " << after[name]["error"];
  }
  const std::string text_id = std::to_string(after["text.pdf"]["id"].get<int64_t>());
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM frames WHERE item_id = " + text_id), 0);
  EXPECT_EQ(QueryInt(db, "SELECT max(start_seconds) FROM segments WHERE item_id = " + text_id), 2);
  EXPECT_EQ(summary["done"], 6) << changed.err;
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM frames"), 0);

  // `reel validate` prints the section resolved; a misspelt key gets a suggestion.
  CommandResult validate = Reel("validate job.yaml", dir);
  ASSERT_EQ(validate.exit_code, 0) << validate.err;
  EXPECT_NE(validate.out.find("documents:\n  pages: text\n  first_page: 1\n  last_page: 2\n"),
            std::string::npos)
      << validate.out;
  WriteText(dir + "/bad.yaml", "name: bad\ninputs: [media]\ndocuments:\n  max_page: 3\n");
  CommandResult bad = Reel("validate bad.yaml", dir);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("max_pages"), std::string::npos) << bad.err;
}

TEST_F(DocumentsJobTest, AContextHoldsPageMarkersTextAndPicturesInPageOrder) {
  const std::string dir = MakeJob("documents_context");
  ASSERT_EQ(Reel("run job.yaml", dir).exit_code, 1);
  CommandResult request = Reel("context job.yaml text.pdf --prompt what --request a.json", dir);
  ASSERT_EQ(request.exit_code, 0) << request.err;
  EXPECT_NE(request.err.find("0 from the cache, 3 decoded"), std::string::npos) << request.err;
  nlohmann::json body = nlohmann::json::parse(ReadText(dir + "/a.json"));
  const nlohmann::json& parts = body["messages"][1]["content"];
  std::vector<std::string> order;
  for (const auto& part : parts) {
    if (part["type"] == "text") {
      order.push_back(part["text"]);
    } else {
      EXPECT_EQ(part["image_url"]["url"].get<std::string>().rfind("data:image/jpeg;base64,", 0),
                0u);
      order.push_back("<picture>");
    }
  }
  ASSERT_EQ(order.size(), 7u);
  EXPECT_EQ(order[0].rfind("Page 1 (label i):\nThe quick brown fox", 0), 0u) << order[0];
  EXPECT_EQ(order[1], "<picture>");
  EXPECT_EQ(order[2].rfind("Page 2 (label ii):\n", 0), 0u) << order[2];
  EXPECT_EQ(order[3], "<picture>");
  EXPECT_EQ(order[4].rfind("Page 3 (label 1):\nChapter three", 0), 0u) << order[4];
  EXPECT_EQ(order[5], "<picture>");
  EXPECT_NE(order[6].find("What is on the pages?"), std::string::npos);
  // The second time the page pictures come from the cache.
  CommandResult again = Reel("context job.yaml text.pdf --prompt what --request b.json", dir);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("3 from the cache, 0 decoded"), std::string::npos) << again.err;
  EXPECT_EQ(ReadText(dir + "/a.json"), ReadText(dir + "/b.json"));
}

TEST_F(DocumentsJobTest, ADocumentOverItsBudgetDropsTextPagePicturesFirst) {
  // Room for the text and about one picture: the three text pages' pictures go first.
  const std::string dir = MakeJob("documents_fit",
                                  "model:\n  max_output_tokens: 1000\ncontext:\n  token_budget: "
                                  "2200\n");
  ASSERT_EQ(Reel("run job.yaml", dir).exit_code, 1);
  CommandResult shown = Reel("context job.yaml text.pdf --prompt what --json", dir);
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  nlohmann::json manifest = nlohmann::json::parse(shown.out)[0]["segments"][0];
  ASSERT_GE(manifest["fit"].size(), 1u) << manifest.dump();
  EXPECT_EQ(manifest["fit"][0]["step"], "drop_page_pictures") << manifest.dump();
  EXPECT_LT(manifest["frames"]["kept"].get<int>(), 3) << manifest.dump();
  EXPECT_EQ(manifest["page_range"], nlohmann::json::array({1, 3})) << manifest.dump();
  // The scanned page's picture is kept: its text is only what OCR read.
  CommandResult scanned = Reel("context job.yaml scanned.pdf --prompt what --json", dir);
  ASSERT_EQ(scanned.exit_code, 0) << scanned.err;
  nlohmann::json scanned_manifest = nlohmann::json::parse(scanned.out)[0]["segments"][0];
  EXPECT_EQ(scanned_manifest["frames"]["kept"], 1) << scanned_manifest.dump();
}

TEST_F(DocumentsJobTest, ATalkAndItsSlideDeckAreOneItemAskedTogether) {
  const std::string dir = ScratchDir("documents_talk");
  fs::create_directories(dir + "/media");
  fs::copy_file(SmallClip(), dir + "/media/talk.mp4", fs::copy_options::overwrite_existing);
  fs::copy_file(fs::path(docs_) / "text.pdf", dir + "/media/talk.pdf",
                fs::copy_options::overwrite_existing);
  WriteText(dir + "/job.yaml",
            "name: talk\ninputs: [media]\nsampling:\n  fps: 1\nstorage:\n  database: out.db\n"
            "prompts:\n  - id: what\n    question: Which slide is shown?\n");
  CommandResult run = Reel("run job.yaml --log-format json", dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string db = dir + "/out.db";
  auto items = Items(db);
  ASSERT_EQ(items.size(), 1u) << "the deck is the talk's side-car, not an item";
  ASSERT_TRUE(items.count("talk.mp4"));
  nlohmann::json slides = QueryJson(
      db,
      "SELECT start_seconds, text FROM segments WHERE source = 'slides:talk.pdf' ORDER BY "
      "start_seconds");
  ASSERT_EQ(slides.size(), 3u);
  EXPECT_EQ(slides[0]["start_seconds"], 1.0);
  EXPECT_EQ(slides[2]["start_seconds"], 3.0);
  CommandResult search = Reel("search --db out.db symbols --format json", dir);
  ASSERT_EQ(search.exit_code, 0) << search.err;
  nlohmann::json hits = nlohmann::json::parse(search.out);
  ASSERT_EQ(hits.size(), 1u) << search.out;
  EXPECT_EQ(fs::path(hits[0]["path"].get<std::string>()).filename(), "talk.mp4");
  EXPECT_EQ(hits[0]["where"], "page 2");
  // One context: the deck as a document with page markers, then the video's frames.
  CommandResult request = Reel("context job.yaml talk.mp4 --prompt what --request a.json", dir);
  ASSERT_EQ(request.exit_code, 0) << request.err;
  nlohmann::json body = nlohmann::json::parse(ReadText(dir + "/a.json"));
  const std::string first = body["messages"][1]["content"][0]["text"];
  EXPECT_EQ(first.rfind("Document (slides:talk.pdf):\nPage 1:\nThe quick brown fox", 0), 0u)
      << first;
  EXPECT_NE(first.find("Page 3:\nChapter three"), std::string::npos) << first;
  EXPECT_NE(first.find("Frame at 0.0 s:"), std::string::npos) << first;
  // A changed deck redoes the talk.
  fs::copy_file(fs::path(docs_) / "scanned.pdf", dir + "/media/talk.pdf",
                fs::copy_options::overwrite_existing);
  CommandResult again = Reel("run job.yaml --log-format json", dir);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(LastJsonLine(again.err)["done"], 1) << again.err;
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM segments WHERE source = 'slides:talk.pdf'"), 1);
}

TEST(DocumentsRealJobTest, DebianMaintGuideAsAJob) {
  const std::string pdf = DebianPackageFile(
      "maint-guide", "usr/share/doc/maint-guide/maint-guide.en.pdf", "maint-guide.en.pdf");
  if (pdf.empty()) GTEST_SKIP() << "maint-guide could not be fetched";
  const std::string dir = ScratchDir("documents_real_job");
  fs::create_directories(dir + "/media");
  fs::copy_file(pdf, dir + "/media/maint-guide.en.pdf", fs::copy_options::overwrite_existing);
  WriteText(dir + "/job.yaml",
            "name: maint\ninputs: [media]\nstorage:\n  database: out.db\n"
            "documents:\n  page_range: 1-12\n");
  CommandResult run = Reel("run job.yaml --log-format json", dir);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string db = dir + "/out.db";
  EXPECT_EQ(QueryInt(db, "SELECT count(*) FROM frames"), 12);
  EXPECT_EQ(QueryInt(db, "SELECT count(DISTINCT start_seconds) FROM segments"),
            QueryInt(db, "SELECT count(*) FROM segments"));
  EXPECT_GE(QueryInt(db, "SELECT count(*) FROM segments WHERE source = 'pdf'"), 10);
  // The text of page 5 is pdftotext's.
  CommandResult reference = RunCommand("pdftotext -f 5 -l 5 -enc UTF-8 " + ShellQuote(pdf) + " -");
  ASSERT_EQ(reference.exit_code, 0);
  nlohmann::json page5 = QueryJson(db, "SELECT text FROM segments WHERE start_seconds = 5");
  ASSERT_EQ(page5.size(), 1u);
  EXPECT_EQ(NormalizeSpace(page5[0]["text"]), NormalizeSpace(reference.out));
  CommandResult search = Reel("search --db out.db debhelper --format json -n 100", dir);
  ASSERT_EQ(search.exit_code, 0) << search.err;
  nlohmann::json hits = nlohmann::json::parse(search.out);
  ASSERT_FALSE(hits.empty());
  for (const auto& hit : hits) {
    EXPECT_EQ(hit["where"].get<std::string>().rfind("page ", 0), 0u) << hit.dump();
  }
}

}  // namespace
}  // namespace reel::testing
