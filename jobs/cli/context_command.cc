// reel context JOB.yaml [ITEM] [--prompt ID] [--json | --request FILE] [--segment N]
//   [--dialect D] [--db FILE]
// reel context --ask-db [ITEM] ...
//
// Builds the contexts of a job's stored items with the job's current settings (what the next run
// stores and sends) and shows their token breakdown and fit steps, or writes one exact request
// body. Reads the database; --request also fills the frame cache (jobs/context/context_frames.h).
// With --ask-db, the job is `reel ask`'s as its database stores it (the newest ask's question and
// files): a question over several files shows the one context over all of them, on the first
// file's item (the others are read into it, never asked about alone).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "base/utf8.h"
#include "jobs/cli/commands.h"
#include "jobs/cli/database_option.h"
#include "jobs/context/group_context.h"
#include "jobs/context/item_context.h"
#include "jobs/run/runner.h"
#include "jobs/spec/prompt_kinds.h"
#include "llm/answers/answer_files.h"
#include "llm/client/chat_request.h"
#include "llm/client/dialect.h"
#include "storage/query.h"

namespace reel::cli {
namespace {

struct ContextFlags {
  std::string job_file;
  std::optional<std::string> item;
  std::optional<std::string> prompt;
  bool json = false;
  std::optional<std::string> request;
  size_t segment = 0;
  std::string dialect = "vllm";
  std::optional<std::string> db;
  bool ask_db = false;
};

struct StoredItem {
  int64_t id = 0;
  std::string path;
  std::string status;
};

// The job's items in the database; with `wanted`, the one it names: an item id, the stored
// path, the path as given (resolved against the current directory), or a unique path suffix.
Result<std::vector<StoredItem>> FindItems(const std::string& db, const std::string& job_name,
                                          const std::optional<std::string>& wanted) {
  REEL_ASSIGN_OR_RETURN(
      storage::Table table,
      storage::Query(db,
                     "SELECT i.id, i.path, i.status FROM items i JOIN jobs j ON j.id = i.job_id "
                     "WHERE j.name = ?1 ORDER BY i.path",
                     {.parameters = {job_name}}));
  std::vector<StoredItem> items;
  for (const auto& row : table.rows) {
    StoredItem it;
    it.id = std::get<int64_t>(row[0]);
    it.path = std::get<std::string>(row[1]);
    it.status = std::get<std::string>(row[2]);
    items.push_back(std::move(it));
  }
  if (!wanted) return items;
  const std::string& w = *wanted;
  std::vector<StoredItem> found;
  for (const StoredItem& it : items) {
    if (it.path == w || std::to_string(it.id) == w) return std::vector<StoredItem>{it};
  }
  std::error_code ec;
  std::string absolute = DisplayPath(std::filesystem::absolute(w, ec).lexically_normal().string());
  for (const StoredItem& it : items) {
    if (it.path == absolute) return std::vector<StoredItem>{it};
  }
  for (const StoredItem& it : items) {
    if (it.path.size() > w.size() && it.path.compare(it.path.size() - w.size(), w.size(), w) == 0 &&
        it.path[it.path.size() - w.size() - 1] == '/') {
      found.push_back(it);
    }
  }
  if (found.size() == 1) return found;
  if (found.empty()) {
    return NotFound("no item '" + w + "' in job '" + job_name + "' of " + db + " (" +
                    std::to_string(items.size()) + " items; give a stored path or an item id)");
  }
  return InvalidArgument("'" + w + "' matches " + std::to_string(found.size()) +
                         " items; give more of the path or the item id");
}

std::string Pad(const std::string& s, size_t n) {
  return s.size() >= n ? s : s + std::string(n - s.size(), ' ');
}

std::string Num(int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 ? "-" : "") + out;
}

void PrintBreakdown(const jobs::ItemContext& c, const jobs::PromptSpec& prompt,
                    std::optional<bool> stored) {
  const llm::Context& x = c.context;
  std::printf("%s  prompt %s\n", c.item.path.c_str(), prompt.id.c_str());
  std::printf("  count      %s\n", x.count_method.c_str());
  std::printf("  template   %s%s\n", x.template_name.c_str(),
              x.template_exact ? "" : " (layout not known exactly: a margin is kept)");
  std::printf("  transport  %s\n", llm::TransportName(x.transport));
  std::printf("  limit      %s tokens a request may hold\n", Num(x.limit).c_str());
  if (!c.input.sources.empty()) {  // one question over several files
    std::vector<llm::AnswerFile> files;
    for (const llm::ContextSource& src : c.input.sources) {
      files.push_back({src.path, src.kind == llm::ContextItemKind::kVideo});
    }
    for (size_t k = 0; k < files.size(); ++k) {
      std::printf("  %s%s: %s\n", k == 0 ? "files      " : "           ",
                  llm::AnswerFileHeading(files, k).c_str(), files[k].path.c_str());
    }
  }
  if (!c.input.frames.empty()) {
    std::printf("  frames     %zu sampled, %zu kept, sent at %dx%d\n", c.input.frames.size(),
                x.kept_frames.size(), x.frame_width, x.frame_height);
  }
  if (x.fit.empty()) {
    std::printf("  fit steps  none needed\n");
  } else {
    for (size_t i = 0; i < x.fit.size(); ++i) {
      const llm::FitAction& a = x.fit[i];
      std::printf("  %s%s: %s (%s -> %s tokens)\n", i == 0 ? "fit steps  " : "           ",
                  a.step.c_str(), a.detail.c_str(), Num(a.tokens_before).c_str(),
                  a.tokens_after > 0 ? Num(a.tokens_after).c_str() : "per segment");
    }
  }
  for (size_t s = 0; s < x.segments.size(); ++s) {
    const llm::ContextSegment& seg = x.segments[s];
    if (x.paged) {
      std::printf("  segment %zu/%zu  pages %.0f-%.0f\n", s + 1, x.segments.size(), seg.start_s,
                  seg.end_s);
    } else {
      std::printf("  segment %zu/%zu  %.1f-%.1f s\n", s + 1, x.segments.size(), seg.start_s,
                  seg.end_s);
    }
    std::printf("    %s %12s\n", Pad("text", 8).c_str(), Num(seg.tokens.text).c_str());
    std::printf("    %s %12s\n", Pad("image", 8).c_str(), Num(seg.tokens.image).c_str());
    std::printf("    %s %12s\n", Pad("video", 8).c_str(), Num(seg.tokens.video).c_str());
    std::printf("    %s %12s", Pad("total", 8).c_str(), Num(seg.tokens.total).c_str());
    if (seg.tokens.margin > 0) {
      std::printf("  (+ %s kept as margin)", Num(seg.tokens.margin).c_str());
    }
    std::printf("\n");
    std::printf("    %s %12s  %s\n", Pad("prefix", 8).c_str(), Num(seg.prefix_tokens).c_str(),
                seg.prefix_aligned ? "(shared by the job's prompts; ends on a block boundary)"
                                   : "(shared by the job's prompts)");
  }
  if (stored) {
    std::printf("  stored     %s\n", *stored ? "yes" : "no (the next run stores it)");
  }
}

int RunContext(const ContextFlags& given) {
  ContextFlags flags = given;
  Result<jobs::JobSpec> job = InvalidArgument("reel context: give JOB.yaml, or --ask-db");
  if (flags.ask_db) {
    // `reel context --ask-db ITEM`: the one positional is the item.
    if (!flags.job_file.empty() && !flags.item) flags.item = flags.job_file;
    flags.job_file = flags.db.value_or(DefaultAskDatabase()) + " (job 'ask')";
    ResolvedDatabase ask;
    ask.path = flags.db.value_or(DefaultAskDatabase());
    ask.job_name = "ask";
    std::error_code ec;
    if (std::filesystem::exists(ask.path, ec)) {
      job = ResolveJob(ask);
    } else {
      job = NotFound("no database at " + ask.path + ": `reel ask` has asked nothing yet");
    }
    if (!job.ok()) {
      std::fprintf(stderr, "reel context: %s\n", job.status().message().c_str());
      return kExitFailed;
    }
    flags.db = ask.path;
  } else if (!flags.job_file.empty()) {
    job = jobs::LoadJobFile(flags.job_file);
  }
  if (!job.ok()) {
    std::fprintf(stderr, "%s\n", job.status().message().c_str());
    return kExitUsage;
  }
  if (job->prompts.empty()) {
    std::fprintf(stderr, "reel context: %s has no prompts\n", flags.job_file.c_str());
    return kExitUsage;
  }
  std::vector<const jobs::PromptSpec*> prompts;
  for (const jobs::PromptSpec& p : job->prompts) {
    if (!flags.prompt || p.id == *flags.prompt) prompts.push_back(&p);
  }
  if (prompts.empty()) {
    std::fprintf(stderr, "reel context: no prompt '%s' in %s\n", flags.prompt->c_str(),
                 flags.job_file.c_str());
    return kExitUsage;
  }
  const std::string database = jobs::DatabasePathFor(*job, flags.db, {});
  Result<std::vector<StoredItem>> items = FindItems(database, job->name, flags.item);
  if (!items.ok()) {
    std::fprintf(stderr, "reel context: %s\n", items.status().message().c_str());
    return items.status().code() == ErrorCode::kInvalidArgument ? kExitUsage : kExitFailed;
  }
  std::vector<StoredItem> done;
  for (const StoredItem& it : *items) {
    // A file read into a question over several files: its frames are in the group item's context.
    if (jobs::IsGroupMember(*job, it.path)) {
      if (flags.item) {
        std::fprintf(stderr,
                     "reel context: %s is read into the context of the question over several "
                     "files (context.group), not asked about alone: name the first file\n",
                     it.path.c_str());
        return kExitFailed;
      }
      continue;
    }
    if (it.status == "done") {
      done.push_back(it);
    } else if (flags.item) {
      std::fprintf(stderr, "reel context: %s is %s, not done: run the job first\n", it.path.c_str(),
                   it.status.c_str());
      return kExitFailed;
    }
  }
  if (done.empty()) {
    std::fprintf(stderr, "reel context: job '%s' has no done items in %s: run it first\n",
                 job->name.c_str(), database.c_str());
    return kExitFailed;
  }
  if (flags.request && (done.size() != 1 || prompts.size() != 1)) {
    std::fprintf(stderr,
                 "reel context: --request writes one request: name one item (%zu) and one "
                 "--prompt (%zu)\n",
                 done.size(), prompts.size());
    return kExitUsage;
  }
  Result<const llm::Dialect*> dialect = llm::DialectByName(flags.dialect);
  if (!dialect.ok()) {
    std::fprintf(stderr, "reel context: %s\n", dialect.status().message().c_str());
    return kExitUsage;
  }
  Result<std::shared_ptr<const jobs::ContextSetup>> setup = jobs::LoadContextSetup(*job);
  if (!setup.ok()) {
    std::fprintf(stderr, "reel context: %s\n", setup.status().message().c_str());
    return kExitFailed;
  }
  Result<storage::Database> db = storage::Database::OpenReadOnly(database);
  if (!db.ok()) {
    std::fprintf(stderr, "reel context: %s\n", db.status().message().c_str());
    return kExitFailed;
  }
  storage::Store store(std::move(db).value());

  int exit_code = kExitOk;
  nlohmann::json out = nlohmann::json::array();
  for (const StoredItem& it : done) {
    for (const jobs::PromptSpec* prompt : prompts) {
      Result<jobs::ItemContext> c = jobs::BuildItemContext(store, *job, **setup, it.id, *prompt);
      if (!c.ok()) {
        std::fprintf(stderr, "reel context: prompt '%s': %s\n", prompt->id.c_str(),
                     c.status().message().c_str());
        exit_code = kExitFailed;
        continue;
      }
      if (!jobs::PromptAppliesTo(*prompt, c->input)) {
        std::fprintf(stderr,
                     "reel context: %s: prompt '%s' is not asked about this item (a %s prompt "
                     "needs a video's timeline)\n",
                     c->item.path.c_str(), prompt->id.c_str(), jobs::PromptKindName(prompt->kind));
        if (flags.request) exit_code = kExitFailed;  // no request to write
        continue;
      }
      Result<std::vector<int64_t>> stored_ids =
          store.FindContexts(it.id, prompt->id, c->settings_key);
      std::optional<bool> stored;
      if (stored_ids.ok()) stored = !stored_ids->empty();
      if (flags.request) {
        jobs::ContextFramesReport frames;
        Result<llm::ChatRequest> request = jobs::ContextChatRequest(
            *job, *c, flags.segment, jobs::FrameCacheDir(*job, database), &frames);
        Result<std::unique_ptr<llm::BodySource>> body =
            request.ok() ? llm::BuildChatBody(**dialect, job->model.name, *request)
                         : Result<std::unique_ptr<llm::BodySource>>(request.status());
        if (!body.ok()) {
          std::fprintf(stderr, "reel context: %s\n", body.status().message().c_str());
          return kExitFailed;
        }
        std::string tmp = *flags.request + ".part";
        std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
        std::unique_ptr<llm::BodyReader> reader = (*body)->Open();
        std::vector<char> buffer(1 << 20);
        int64_t written = 0;
        while (file) {
          Result<size_t> n = reader->Read(buffer.data(), buffer.size());
          if (!n.ok()) {
            std::fprintf(stderr, "reel context: %s\n", n.status().message().c_str());
            std::filesystem::remove(tmp);
            return kExitFailed;
          }
          if (*n == 0) break;
          file.write(buffer.data(), static_cast<std::streamsize>(*n));
          written += static_cast<int64_t>(*n);
        }
        file.close();
        std::error_code ec;
        if (!file || (std::filesystem::rename(tmp, *flags.request, ec), ec)) {
          std::fprintf(stderr, "reel context: cannot write %s\n", flags.request->c_str());
          std::filesystem::remove(tmp, ec);
          return kExitFailed;
        }
        const llm::ContextSegment& seg = c->context.segments[flags.segment];
        std::fprintf(stderr,
                     "wrote %s: %s bytes, segment %zu of %zu, %s prompt tokens (%s), frames: %d "
                     "from the cache, %d decoded\n",
                     flags.request->c_str(), Num(written).c_str(), flags.segment + 1,
                     c->context.segments.size(), Num(seg.tokens.total).c_str(),
                     c->context.count_exact ? "exact" : "estimate", frames.cached, frames.decoded);
        return kExitOk;
      }
      if (flags.json) {
        nlohmann::json j = {{"item_id", it.id},
                            {"item", it.path},
                            {"prompt", prompt->id},
                            {"settings_key", c->settings_key}};
        if (stored) j["stored"] = *stored;
        nlohmann::json segments = nlohmann::json::array();
        for (size_t s = 0; s < c->context.segments.size(); ++s) {
          segments.push_back(nlohmann::json::parse(c->context.ManifestJson(c->input, s)));
        }
        j["segments"] = segments;
        out.push_back(j);
      } else {
        PrintBreakdown(*c, *prompt, stored);
      }
    }
  }
  if (flags.json) {
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  return exit_code;
}

}  // namespace

void AddContextCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ContextFlags>();
  CLI::App* cmd = app.add_subcommand(
      "context",
      "Show the token breakdown and fit steps of the contexts of a job's stored items (with the "
      "job's current settings), or write one exact request body");
  cmd->add_option("JOB", flags->job_file, "The job file (none with --ask-db)");
  cmd->add_option("ITEM", flags->item,
                  "One item: its stored path, its path from here, a unique end of its path "
                  "(e.g. the file name), or its id; default: every done item");
  cmd->add_option("--prompt", flags->prompt, "One prompt id; default: every prompt");
  auto* json = cmd->add_flag("--json", flags->json,
                             "Print each context's manifests (one per segment) as JSON");
  auto* request = cmd->add_option(
      "--request", flags->request,
      "Write the exact /v1/chat/completions body of one item and prompt to FILE (frames "
      "decoded at the model size into the job's frame cache once)");
  json->excludes(request);
  cmd->add_option("--segment", flags->segment,
                  "--request: which segment of a split video (0-based; default 0)");
  cmd->add_option("--dialect", flags->dialect, "--request: vllm (default), sglang or openai");
  cmd->add_option("--db", flags->db, "The database (default: the job's storage.database)");
  cmd->add_flag("--ask-db", flags->ask_db,
                "The job of `reel ask`, as its database stores it (the newest ask's question and "
                "files; --db names another database of reel ask)");
  cmd->footer(
      "A question over several files (`reel ask a.mp4 b.mp4 \"q\"`, context.group) is one context\n"
      "on the first file's item, naming every file; `reel context --ask-db a.mp4` shows it.\n"
      "Exit status: 0 ok, 1 failed (no database, no done items, a context that does "
      "not fit), 2 bad options or job file.");
  cmd->callback([flags, &exit_code] { exit_code = RunContext(*flags); });
}

}  // namespace reel::cli
