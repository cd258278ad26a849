// reel show ITEM [--db FILE] [--ask-db] [--job JOB.yaml|NAME] [--prompt ID] [--format text|md]
//
// Every answer about one item, in full and oldest first, each with its prompt, the question as
// asked (tasks.question), the model and time; a time the answer names (storage/answer_times)
// is followed by the frame it points at: `[frame N, MM:SS]` (N: the sample index, the frame's
// thumbnail in the report; `reel frames` decodes it). ITEM is an item id or a path (absolute, or
// a suffix of the stored path, e.g. `talk.mp4`).
#include <cstdio>
#include <iostream>
#include <map>

#include "base/terminal_text.h"
#include "base/utf8.h"
#include "jobs/cli/commands.h"
#include "jobs/cli/database_option.h"
#include "jobs/cli/table_output.h"
#include "llm/answers/answer_files.h"
#include "llm/answers/time_references.h"
#include "storage/prune.h"
#include "storage/query.h"
#include "storage/report_data.h"
#include "storage/store.h"

namespace reel::cli {
namespace {

struct ShowFlags {
  DatabaseChoice database;
  std::string item;
  std::optional<std::string> prompt;
  std::string format = "text";
};

std::string Str(const storage::Value& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (std::holds_alternative<std::monostate>(v)) return "";
  return storage::FormatValue(v);
}

// MM:SS (H:MM:SS from an hour).
std::string Clock(double seconds) {
  const int64_t s = static_cast<int64_t>(seconds + 0.5);
  char buffer[32];
  if (s >= 3600) {
    std::snprintf(buffer, sizeof(buffer), "%lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  } else {
    std::snprintf(buffer, sizeof(buffer), "%02lld:%02lld", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  }
  return buffer;
}

// The byte offset of code point `index` in UTF-8 `text` (answer_times counts code points).
size_t ByteOffset(const std::string& text, int64_t index) {
  size_t i = 0;
  int64_t n = 0;
  while (i < text.size() && n < index) {
    ++i;
    while (i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) ++i;
    ++n;
  }
  return i;
}

int RunShow(const ShowFlags& flags) {
  Result<ResolvedDatabase> db = ResolveDatabase(flags.database);
  if (!db.ok()) {
    std::fprintf(stderr, "reel show: %s\n", db.status().message().c_str());
    return db.status().code() == ErrorCode::kInvalidArgument ? kExitUsage : kExitFailed;
  }
  // Brings an older file to the current schema (tasks.question).
  if (Status ready = ReadyForReading(db->path); !ready.ok()) {
    std::fprintf(stderr, "reel show: %s\n", ready.message().c_str());
    return kExitFailed;
  }
  std::string where;
  storage::QueryOptions item_query;  // the values of the ?N in `where`
  const bool is_id =
      !flags.item.empty() && flags.item.find_first_not_of("0123456789") == std::string::npos;
  if (is_id) {
    where = "i.id = " + flags.item;
  } else {
    item_query.parameters = {flags.item, "%/" + flags.item};
    where = "(i.path = ?1 OR i.path LIKE ?2 ESCAPE '\\')";
  }
  if (db->job_name) {
    item_query.parameters.push_back(*db->job_name);
    where += " AND j.name = ?" + std::to_string(item_query.parameters.size());
  }
  Result<storage::Table> items = storage::Query(
      db->path,
      "SELECT i.id, i.path, j.name FROM items i JOIN jobs j ON j.id = i.job_id WHERE " + where +
          " ORDER BY i.id",
      item_query);
  if (!items.ok()) {
    std::fprintf(stderr, "reel show: %s\n", items.status().message().c_str());
    return kExitFailed;
  }
  if (items->rows.empty()) {
    std::fprintf(stderr, "reel show: no item %s in %s (`reel results --items` lists them)\n",
                 SafeUtf8(flags.item).c_str(), db->path.c_str());
    return kExitFailed;
  }
  if (items->rows.size() > 1) {
    std::string list;
    for (const auto& row : items->rows) {
      list += "\n  " + Str(row[0]) + "  " + SafeUtf8(Str(row[1])) + " (job " + Str(row[2]) + ")";
    }
    std::fprintf(stderr, "reel show: %s names several items; give the id:%s\n",
                 SafeUtf8(flags.item).c_str(), list.c_str());
    return kExitUsage;
  }
  const std::string item_id = Str(items->rows[0][0]);
  std::string sql =
      "SELECT response_id, prompt_id, question, model, created_at, content, step, segment_index, "
      "segment_count, start_seconds, end_seconds, finish_reason FROM answers WHERE item_id = " +
      item_id + " AND check_error IS NULL";
  storage::QueryOptions answer_query;
  if (flags.prompt) {
    sql += " AND prompt_id = ?1";
    answer_query.parameters = {*flags.prompt};
  }
  sql += " ORDER BY created_at, response_id";
  Result<storage::Table> answers = storage::Query(db->path, sql, answer_query);
  if (!answers.ok()) {
    std::fprintf(stderr, "reel show: %s\n", answers.status().message().c_str());
    return kExitFailed;
  }
  // The frames each answer's times point at.
  std::map<int64_t, std::vector<std::vector<storage::Value>>> times;
  Result<storage::Table> linked = storage::Query(
      db->path,
      "SELECT response_id, char_end, seconds, frame_index, frame_seconds, char_start FROM "
      "answer_time_frames "
      "WHERE item_id = " +
          item_id + " ORDER BY response_id, char_start");
  if (linked.ok()) {
    for (auto& row : linked->rows) {
      times[std::get<int64_t>(row[0])].push_back(std::move(row));
    }
  }
  // Answers asked over several files (reel ask a.mp4 b.mp4 ...): the files, for the times
  // (llm/answers/answer_files.h), and each other file's frames, read once.
  const int64_t id = std::stoll(item_id);
  Result<storage::ReportReader> reader = storage::ReportReader::Open(db->path);
  std::map<int64_t, std::vector<llm::AnswerFile>> files_of;
  if (reader.ok()) {
    if (auto read = reader->ReadAnswerFiles(id); read.ok()) {
      for (const auto& [response, files] : *read) {
        for (const storage::ReportAnswerFile& f : files) {
          files_of[response].push_back({f.path, f.kind != "image"});
        }
      }
    }
  }
  std::map<std::string, storage::ReportFileItem> other_files;
  auto other_file = [&](const std::string& path) -> const storage::ReportFileItem& {
    auto found = other_files.find(path);
    if (found == other_files.end()) {
      Result<storage::ReportFileItem> read = reader->ReadFileItem(id, path);
      found = other_files.emplace(path, read.ok() ? *read : storage::ReportFileItem{}).first;
    }
    return found->second;
  };
  const bool md = flags.format == "md";
  const bool terminal = IsTerminal(stdout);
  auto shown = [&](const std::string& text) {
    return terminal ? EscapeControlCharacters(text) : SafeUtf8(text);
  };
  std::string out;
  out += (md ? "# " : "") + shown(Str(items->rows[0][1])) + "\n";
  out += (md ? "\n" : "") + std::string("item ") + item_id + ", job " +
         shown(Str(items->rows[0][2])) + ", " + std::to_string(answers->rows.size()) +
         (answers->rows.size() == 1 ? " answer" : " answers") + "\n";
  if (storage::InputFileGone(Str(items->rows[0][1]))) {
    out += (md ? "\n" : "") +
           std::string(
               "The input file is gone (deleted or moved): `reel prune --yes` drops this item.\n");
  }
  for (const auto& row : answers->rows) {
    const int64_t response = std::get<int64_t>(row[0]);
    std::string heading = Str(row[1]);
    const std::string step = Str(row[6]);
    if (step == "map") {
      heading += " (segment " + std::to_string(std::get<int64_t>(row[7]) + 1) + " of " +
                 Str(row[8]) + ", " + Clock(std::get<double>(row[9])) + "-" +
                 Clock(std::get<double>(row[10])) + ")";
    } else if (step == "reduce") {
      heading += " (over the segments' answers)";
    }
    std::string meta = Str(row[4]);
    if (!Str(row[3]).empty()) meta = Str(row[3]) + ", " + meta;
    if (Str(row[11]) == "length") meta += ", cut at the output limit";
    out += "\n" + std::string(md ? "## " : "== ") + shown(heading) + (md ? "" : " ==") + "\n";
    out += (md ? "*" : "") + shown(meta) + (md ? "*\n\n" : "\n");
    const std::string question = Str(row[2]);
    if (!question.empty()) out += (md ? "**Question:** " : "Question: ") + shown(question) + "\n";
    const auto files = files_of.find(response);
    if (files != files_of.end()) {
      std::string list;
      for (size_t k = 0; k < files->second.size(); ++k) {
        list += (list.empty() ? "" : ", ") + llm::AnswerFileHeading(files->second, k) + " " +
                files->second[k].path;
      }
      out += (md ? "**Asked over:** " : "Asked over: ") + shown(list) + "\n";
    }
    out += md ? "\n" : "Answer:\n";
    // The answer with each linked time followed by its frame.
    std::string content = Str(row[5]);
    std::string annotated;
    size_t at = 0;
    for (const auto& t : times[response]) {
      const size_t end = ByteOffset(content, std::get<int64_t>(t[1]));
      if (end < at) continue;
      std::string link;  // " [frame N, MM:SS]"; another file's: " [b.mp4 frame N, MM:SS]"
      std::optional<size_t> file;
      if (files != files_of.end()) {
        file = llm::FileNamedBefore(content, ByteOffset(content, std::get<int64_t>(t[5])),
                                    files->second);
      }
      if (file && files->second[*file].path != Str(items->rows[0][1])) {
        // Another file's time: its nearest frame, as the report links it.
        const std::string& path = files->second[*file].path;
        const storage::ReportFileItem& other = other_file(path);
        std::optional<double> duration = other.duration_seconds;
        if (duration && *duration <= 0) duration.reset();
        if (std::optional<size_t> f =
                llm::NearestFrame(std::get<double>(t[2]), duration, other.frame_times)) {
          link = " [" + llm::AnswerFileName(path) + " frame " +
                 std::to_string(other.sample_indexes[*f]) + ", " + Clock(other.frame_times[*f]) +
                 "]";
        }
      } else if (!std::holds_alternative<std::monostate>(t[3])) {  // else outside the item
        link = " [frame " + Str(t[3]) + ", " + Clock(std::get<double>(t[4])) + "]";
      }
      if (link.empty()) continue;
      annotated += content.substr(at, end - at) + link;
      at = end;
    }
    annotated += content.substr(at);
    out += shown(annotated);
    if (!annotated.empty() && annotated.back() != '\n') out += "\n";
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return kExitOk;
}

}  // namespace

void AddShowCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ShowFlags>();
  CLI::App* cmd =
      app.add_subcommand("show", "Print every answer about one item in full, with its question");
  cmd->footer(
      "ITEM is an item id (`reel results` lists them) or a path (a suffix of the stored one, e.g.\n"
      "talk.mp4). Answers oldest first, each with its prompt, question as asked, model and time;\n"
      "a time the answer names is followed by the frame it points at, [frame N, MM:SS] (N the\n"
      "frame's sample index: the report's thumbnail, `reel frames` decodes it).\n"
      "Exit status: 0 ok, 1 no database or no such item, 2 bad options or several items match.");
  cmd->add_option("ITEM", flags->item, "Item id or path")->required();
  AddDatabaseOptions(cmd, &flags->database);
  cmd->add_option("--prompt", flags->prompt, "Answers to this prompt id only");
  cmd->add_option("--format", flags->format, "text or md (Markdown)")
      ->check(CLI::IsMember({"text", "md"}))
      ->default_val("text");
  cmd->callback([flags, &exit_code] { exit_code = RunShow(*flags); });
}

}  // namespace reel::cli
