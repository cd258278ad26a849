// reel ask FILE... "QUESTION" [--system TEXT] [--endpoint URL] [--model NAME] [--fps R]
//          [--json-schema FILE] [--db FILE] [--tokenizer FILE] [--dialect D] [--thinking MODE]
//          [--max-output-tokens N] [--token-budget N] [--reasoning] [--no-stream] [--again]
//          [--verbose]
//
// The one-liner: an ad-hoc job ("ask") with the defaults over the given files, asked with
// streaming, the answer printed to stdout as it arrives, everything recorded in a database
// (default $XDG_DATA_HOME/reel/reel.db) so `reel results --ask-db`, `reel show` and `reel status`
// work on it too. Asking the same again replays a stored answer, asks a failed question again,
// and with --again asks an answered one anew.
//
// One question over the files given, in one context: the text files (documents, subtitle files)
// are attached (context.attach); several videos and images are one group (context.group,
// jobs/context/group_context.h): the first one given is the item asked about (its answer is the
// question's), the others are read as items too and their frames are part of its context, each
// labelled with its file. Without a video or image the first text file is the item and the
// others are attached to it. A folder's files are asked about one by one (an answer each), as
// with --chapters (a timeline per file).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/terminal_text.h"
#include "base/utf8.h"
#include "jobs/cli/commands.h"
#include "jobs/cli/database_option.h"
#include "jobs/cli/stop_signal.h"
#include "jobs/progress.h"
#include "jobs/run/runner.h"
#include "jobs/spec/job_spec.h"
#include "llm/client/endpoint_url.h"
#include "storage/store.h"

namespace reel::cli {
namespace {

namespace fs = std::filesystem;

struct AskFlags {
  std::vector<std::string> args;  // FILE... QUESTION
  std::optional<std::string> endpoint;
  std::optional<std::string> model;
  std::optional<double> fps;
  std::optional<std::string> json_schema;
  std::optional<std::string> db;
  std::optional<std::string> tokenizer;
  std::optional<std::string> system;
  std::string dialect = "auto";
  std::string thinking = "adaptive";
  int64_t max_output_tokens = 16384;
  std::optional<int64_t> token_budget;
  bool reasoning = false;
  bool no_stream = false;
  bool again = false;
  bool verbose = false;
  bool chapters = false;
};

// A message for stderr: control characters escaped when it is a terminal (a server's error text
// can hold them), else as SafeUtf8 gives it.
std::string ForStderr(std::string_view text) {
  static const bool terminal = IsTerminal(stderr);
  return terminal ? EscapeControlCharacters(text) : SafeUtf8(text);
}

std::optional<std::string> Env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

// Prints answers as they arrive. One answer owns the terminal at a time; what arrives for other
// files meanwhile (an answer stored whole, a failure) is held and printed once the owner's answer
// has ended, so nothing is ever written into the middle of another answer's line. Written to a
// terminal, control characters in answers and reasoning are shown escaped (base/terminal_text.h);
// to a pipe or a file, the answer's bytes are written as they are, NUL included.
class AnswerPrinter {
 public:
  AnswerPrinter(bool show_reasoning, bool several)
      : reasoning_(show_reasoning),
        several_(several),
        escape_out_(IsTerminal(stdout)),
        escape_err_(IsTerminal(stderr)) {}

  class Observer : public llm::ChatObserver {
   public:
    Observer(AnswerPrinter* printer, std::string item)
        : printer_(printer), item_(std::move(item)) {}
    void OnContent(std::string_view text) override { printer_->Content(item_, text); }
    void OnReasoning(std::string_view text) override { printer_->Reasoning(item_, text); }
    void OnRetry(const std::string& reason) override { printer_->Retry(item_, reason); }

   private:
    AnswerPrinter* printer_;
    std::string item_;
  };

  void Content(const std::string& item, std::string_view text) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!Own(item)) return;
    if (in_reasoning_) {
      std::fputs("\n", stderr);
      in_reasoning_ = false;
    }
    Write(stdout, text);
    std::fflush(stdout);
    shown_any_ = true;
  }

  void Reasoning(const std::string& item, std::string_view text) {
    if (!reasoning_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (!Own(item)) return;
    in_reasoning_ = true;
    Write(stderr, text);
    std::fflush(stderr);
  }

  void Retry(const std::string& item, const std::string& reason) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (owner_ != item) return;
    EndLine();
    std::fprintf(stderr, "[asking again: %s]\n", ForStderr(reason).c_str());
    shown_any_ = false;
  }

  void Outcome(const jobs::PromptOutcome& o) {
    std::lock_guard<std::mutex> lock(mutex_);
    switch (o.state) {
      case jobs::PromptOutcome::State::kAnswered:
        ++answered_;
        break;
      case jobs::PromptOutcome::State::kFailed:
        ++failed_;
        break;
      case jobs::PromptOutcome::State::kWaiting:  // stopped, or no server: nothing to print
        ++waiting_;
        if (owner_ == o.item_path) {
          EndLine();
          Release();
        }
        return;
    }
    if (owner_ == o.item_path) {
      if (shown_any_ && o.state == jobs::PromptOutcome::State::kAnswered) {
        EndLine();
      } else {
        Print(o, /*header=*/false);  // its header is out; the answer not (or it failed)
      }
      Release();
    } else if (!owner_.empty()) {
      held_.push_back(o);
    } else {
      Print(o);
    }
  }

  // Prints what is still held (the run has ended).
  void Flush() {
    std::lock_guard<std::mutex> lock(mutex_);
    EndLine();
    Release();
  }

  int answered() const { return answered_; }
  int failed() const { return failed_; }
  int waiting() const { return waiting_; }

 private:
  // Takes the terminal for `item` if free (printing its header); true if `item` has it.
  bool Own(const std::string& item) {
    if (owner_.empty()) {
      owner_ = item;
      shown_any_ = false;
      Header(item);
    }
    return owner_ == item;
  }
  void Header(const std::string& item) {
    if (several_) {
      const std::string shown = escape_out_ ? EscapeControlCharacters(item) : SafeUtf8(item);
      std::fprintf(stdout, "== %s ==\n", shown.c_str());
    }
    at_line_start_ = true;
  }
  void Write(std::FILE* to, std::string_view text) {
    if (text.empty()) return;
    WriteText(to, text, to == stdout ? escape_out_ : escape_err_);
    at_line_start_ = text.back() == '\n';
  }
  // Frees the terminal and prints the outcomes held meanwhile.
  void Release() {
    owner_.clear();
    shown_any_ = false;
    in_reasoning_ = false;
    for (const jobs::PromptOutcome& held : held_) Print(held);
    held_.clear();
  }
  // Ends the line the last answer left open.
  void EndLine() {
    if (!at_line_start_) std::fputs("\n", stdout);
    at_line_start_ = true;
    std::fflush(stdout);
  }
  // A whole outcome, at the start of a line.
  void Print(const jobs::PromptOutcome& o, bool header = true) {
    EndLine();
    if (o.state == jobs::PromptOutcome::State::kFailed) {
      std::fprintf(stderr, "reel ask: %s: %s\n", ForStderr(o.item_path).c_str(),
                   ForStderr(o.message).c_str());
      return;
    }
    if (!o.answer) return;
    if (header) Header(o.item_path);
    if (o.answered_before) {
      std::fputs("(answered before; --again asks anew)\n", stderr);
    }
    if (reasoning_ && o.answer->reasoning) {
      Write(stderr, *o.answer->reasoning);
      std::fputs("\n", stderr);
    }
    Write(stdout, o.answer->content);
    EndLine();
  }

  const bool reasoning_;
  const bool several_;
  const bool escape_out_;  // stdout is a terminal
  const bool escape_err_;  // stderr is a terminal
  std::mutex mutex_;
  std::string owner_;
  bool shown_any_ = false;
  bool in_reasoning_ = false;
  bool at_line_start_ = true;
  std::vector<jobs::PromptOutcome> held_;  // outcomes of other files while one is shown
  int answered_ = 0, failed_ = 0, waiting_ = 0;
};

// The errors of the job's files that failed (each names its file), from the database.
std::vector<std::string> FailedFiles(const std::string& database, const jobs::JobSpec& job) {
  std::vector<std::string> failures;
  Result<storage::Store> store = storage::Store::Open(database);
  if (!store.ok()) return failures;
  Result<std::optional<storage::JobRecord>> found = store->FindJob(job.name);
  if (!found.ok() || !*found) return failures;
  for (const jobs::InputSpec& input : job.inputs) {
    const std::string shown = DisplayPath(input.path);
    Result<std::optional<storage::ItemRecord>> item = store->FindItem((*found)->id, shown);
    if (!item.ok() || !*item || (*item)->status != storage::ItemStatus::kFailed) continue;
    const std::string error = (*item)->error.value_or("could not be read");
    failures.push_back(error.find(shown) == std::string::npos ? shown + ": " + error : error);
  }
  return failures;
}

int RunAsk(const AskFlags& flags) {
  if (flags.args.size() < (flags.chapters ? 1u : 2u)) {
    std::fprintf(stderr, "reel ask: give one or more files and then the question%s\n",
                 flags.chapters ? "" : " (or --chapters)");
    return kExitUsage;
  }
  // With --chapters every argument is a file: the question is the built-in one.
  const std::string question = flags.chapters ? "" : flags.args.back();
  if (!flags.chapters && question.find_first_not_of(" \t\r\n") == std::string::npos) {
    std::fprintf(stderr, "reel ask: the question is empty\n");
    return kExitUsage;
  }
  std::vector<std::string> files(flags.args.begin(),
                                 flags.chapters ? flags.args.end() : flags.args.end() - 1);
  for (std::string& f : files) {
    std::error_code ec;
    if (!fs::exists(f, ec)) {
      std::fprintf(stderr, "reel ask: %s: no such file%s\n", SafeUtf8(f).c_str(),
                   f == files.back() && flags.args.size() == 2
                       ? " (the question comes last, after the files)"
                       : "");
      return kExitUsage;
    }
    f = fs::absolute(f).lexically_normal().string();
  }
  // A file named twice is one file.
  for (size_t i = 0; i < files.size(); ++i) {
    files.erase(std::remove(files.begin() + static_cast<long>(i) + 1, files.end(), files[i]),
                files.end());
  }
  const std::optional<std::string> endpoint =
      flags.endpoint ? flags.endpoint : Env("REEL_MODEL_URL");
  if (!endpoint) {
    std::fprintf(stderr,
                 "reel ask: no model server: pass --endpoint URL or set REEL_MODEL_URL (e.g. "
                 "http://localhost:8000/v1; see the README for starting vLLM or SGLang)\n");
    return kExitUsage;
  }
  std::string database = flags.db ? *flags.db : Env("REEL_DB").value_or(DefaultAskDatabase());

  // The job: the defaults, then the settings given here (set after parsing, so a question or a
  // file name holding "${...}" is taken as it is).
  nlohmann::json spec = {{"name", "ask"},
                         {"inputs", {"FILE"}},
                         {"model",
                          {{"stream", !flags.no_stream},
                           {"max_output_tokens", flags.max_output_tokens},
                           {"thinking_mode", flags.thinking},
                           {"dialect", flags.dialect},
                           {"concurrency", 4}}},
                         {"prompts", {{{"id", "ask"}, {"question", "?"}}}}};
  if (flags.chapters) spec["prompts"] = {{{"kind", "chapters"}}};
  if (flags.fps) spec["sampling"] = {{"policy", "fps"}, {"fps", *flags.fps}};
  jobs::ParseOptions parse_options;
  parse_options.lookup_env = [](const std::string&) -> std::optional<std::string> {
    return std::nullopt;
  };
  Result<jobs::JobSpec> job = jobs::ParseJobText(spec.dump(), "reel ask", "", parse_options);
  if (!job.ok()) {
    std::fprintf(stderr, "reel ask: %s\n", job.status().message().c_str());
    return kExitUsage;
  }
  std::string url = *endpoint;
  while (url.size() > 8 && url.back() == '/') url.pop_back();
  if (Status checked = llm::CheckEndpointUrl(url); !checked.ok()) {
    std::fprintf(stderr, "reel ask: %s%s\n", SafeUtf8(checked.message()).c_str(),
                 flags.endpoint ? "" : " ($REEL_MODEL_URL)");
    return kExitUsage;
  }
  job->model.endpoint = url;
  job->model.name = flags.model ? *flags.model : Env("REEL_MODEL").value_or(job->model.name);
  job->model.api_key_env = Env("REEL_API_KEY") ? "REEL_API_KEY" : "";
  if (!flags.chapters) job->prompts[0].question = question;
  if (flags.json_schema) job->prompts[0].json_schema_file = *flags.json_schema;
  if (flags.tokenizer) {
    job->context.tokenizer = fs::absolute(*flags.tokenizer).string();
  } else if (std::optional<std::string> t = Env("REEL_TOKENIZER")) {
    job->context.tokenizer = *t;
  }
  if (flags.system) job->prompts[0].system = *flags.system;
  if (flags.token_budget) job->context.token_budget = *flags.token_budget;
  job->storage.database = database;
  job->inputs.clear();
  // The videos and images (and folders) are the items; text files are attached to them.
  std::vector<std::string> attached;
  for (const std::string& f : files) {
    const jobs::InputKind kind =
        fs::is_directory(f) ? jobs::InputKind::kAuto : jobs::GuessInputKind(f);
    // Documents read as pages (PDF, office files, ...) are items; plain text is attached.
    const bool text = (kind == jobs::InputKind::kDocument && !jobs::IsPagedDocument(f)) ||
                      kind == jobs::InputKind::kSubtitle;
    if (text && !flags.chapters) {
      attached.push_back(f);
    } else {
      job->inputs.push_back({f, jobs::InputKind::kAuto, ""});
    }
  }
  if (job->inputs.empty()) {
    job->inputs.push_back({attached.front(), jobs::InputKind::kAuto, ""});
    attached.erase(attached.begin());
  }
  job->context.attach = attached;
  // Several videos and images, no folder, no paged document: one question over all of them (the
  // first is the item).
  const bool grouped =
      !flags.chapters && job->inputs.size() > 1 &&
      std::none_of(job->inputs.begin(), job->inputs.end(), [](const jobs::InputSpec& input) {
        return fs::is_directory(input.path) || jobs::IsPagedDocument(input.path);
      });
  if (grouped) {
    // An audio file's context is its transcript as timed text; one context over several files
    // holds pictures of videos and images with their times, so it is asked about on its own.
    for (const jobs::InputSpec& input : job->inputs) {
      if (jobs::GuessInputKind(input.path) != jobs::InputKind::kAudio) continue;
      std::fprintf(stderr,
                   "reel ask: %s: an audio file is asked about alone, or with text files beside "
                   "it (reel ask %s notes.md \"question\"); one question over several files "
                   "takes videos and images only: ask about the audio file in a question of its "
                   "own\n",
                   ForStderr(input.path).c_str(),
                   ForStderr(fs::path(input.path).filename().string()).c_str());
      return kExitUsage;
    }
    for (size_t i = 1; i < job->inputs.size(); ++i) {
      job->context.group.push_back(job->inputs[i].path);
    }
  }

  std::FILE* log = stderr;
  std::FILE* null_log = nullptr;
  if (!flags.verbose) {
    null_log = std::fopen("/dev/null", "w");
    if (null_log != nullptr) log = null_log;
  }
  jobs::ProgressReporter progress(jobs::ProgressStyle::kQuiet, log, flags.verbose);
  AnswerPrinter printer(flags.reasoning, !grouped && (job->inputs.size() > 1 ||
                                                      fs::is_directory(job->inputs[0].path)));

  StopSignalHandlers handlers;
  g_stop_signal.store(0);
  jobs::RunOptions options;
  options.database = database;
  options.progress = &progress;
  options.stop_signal = &g_stop_signal;
  options.wait_for_lock = true;
  // Asking the same again: a failed question is asked again (as --retry-failed does for `reel
  // run`); an answered one is replayed, or with --again asked anew.
  options.retry_failed = true;
  options.ask_again = flags.again;
  options.answer_observer = [&printer](const std::string& item, const std::string&) {
    return std::unique_ptr<llm::ChatObserver>(new AnswerPrinter::Observer(&printer, item));
  };
  options.on_prompt = [&printer](const jobs::PromptOutcome& o) { printer.Outcome(o); };
  jobs::RunOutcome outcome = jobs::RunJob(*job, options);
  printer.Flush();
  if (null_log != nullptr) std::fclose(null_log);

  switch (outcome.result) {
    case jobs::RunResult::kInterrupted:
      std::fprintf(stderr, "reel ask: interrupted\n");
      return outcome.stop_signal == SIGTERM ? kExitSigterm : kExitSigint;
    case jobs::RunResult::kLockHeld:
    case jobs::RunResult::kInvalidJob:
    case jobs::RunResult::kError:
      std::fprintf(stderr, "reel ask: %s\n", ForStderr(outcome.message).c_str());
      return outcome.result == jobs::RunResult::kInvalidJob ? kExitUsage : kExitFailed;
    case jobs::RunResult::kSucceeded:
    case jobs::RunResult::kSomeFailed:
    case jobs::RunResult::kQuestionsFailed:
      break;
  }
  if (grouped && outcome.counters.items_failed > 0) {
    // One question over every file: a file that could not be read is named, and nothing is asked.
    for (const std::string& failure : FailedFiles(database, *job)) {
      std::fprintf(stderr, "reel ask: %s\n", ForStderr(failure).c_str());
    }
    if (printer.answered() == 0 && printer.failed() == 0) {
      std::fprintf(stderr,
                   "reel ask: no answer: the question is over all the files given, and %lld could "
                   "not be read (repair or leave out the file and ask again)\n",
                   static_cast<long long>(outcome.counters.items_failed));
      return kExitFailed;
    }
  } else if (outcome.counters.items_failed > 0) {
    std::fprintf(stderr, "reel ask: %lld files could not be read (`reel status --db %s`)\n",
                 static_cast<long long>(outcome.counters.items_failed), database.c_str());
  }
  if (printer.answered() == 0 && printer.failed() == 0) {
    std::string why = ForStderr(outcome.message);
    if (why.empty() && !outcome.model_problem.empty()) {
      why = ForStderr(outcome.model_problem) +
            " (the question waits: the same `reel ask` asks it when the server answers, and "
            "`reel export --ask-db --format openai-batch OUT.jsonl` writes it for a batch)";
    }
    if (why.empty()) {
      why = flags.chapters ? "chapters are asked only about videos, audio files and subtitle files "
                             "(a document or a still image has no timeline)"
                           : "nothing could be asked (see `reel status --ask-db`)";
    }
    std::fprintf(stderr, "reel ask: no answer: %s\n", why.c_str());
    return kExitFailed;
  }
  return printer.failed() > 0 || outcome.counters.items_failed > 0 ? kExitFailed : kExitOk;
}

}  // namespace

void AddAskCommand(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<AskFlags>();
  CLI::App* cmd = app.add_subcommand(
      "ask",
      "Ask a question about videos, images, audio or documents and print the answer as it "
      "arrives");
  cmd->footer(
      "Examples:\n"
      "  REEL_MODEL_URL=http://localhost:8000/v1 reel ask talk.mp4 \"What is the speaker's "
      "main point?\"\n"
      "  reel ask talk.mp4 slides.md \"Which slide is the speaker on at 12:30?\"\n"
      "  reel ask a.mp4 b.mp4 diagram.png notes.md \"Which clip shows the diagram?\"\n"
      "One question over all the files, in one context, one answer: each video's frames with\n"
      "their times (from that video's start) under \"Video 1: a.mp4\", then the images under\n"
      "\"Image 1: diagram.png\", and the text files (documents, subtitle files); with no video or\n"
      "image, the first text file is asked about with the others beside it. Too much for the\n"
      "token budget: the fit steps treat every video alike (one frame size rule, the same share\n"
      "of frames), and a split keeps each part's frames labelled. The answer is stored under the\n"
      "first video or image given; a file that cannot be read fails the question, naming it.\n"
      "A folder's files, documents read as pages (PDF, HTML, EPUB, office files: their pages'\n"
      "text and pictures) and --chapters are asked about one by one, an answer each.\n"
      "An audio file (.mp3 .m4a .aac .wav .flac .ogg .opus; a video file with sound alone) is\n"
      "transcribed (offline with PocketSphinx, English) and asked about as timed text, alone or\n"
      "with text files beside it: `reel ask podcast.mp3 \"What did they decide?\"`.\n"
      "Everything is recorded in the database (default $XDG_DATA_HOME/reel/reel.db, or $REEL_DB),\n"
      "job 'ask', prompt 'ask' (or 'chapters') with the question stored as asked: `reel results\n"
      "--ask-db`, `reel show --ask-db ITEM` and `reel status --ask-db` read it. The model\n"
      "name comes from --model, else $REEL_MODEL, else MiniMax-M3; an API key from $REEL_API_KEY.\n"
      "Asking the same again shows the stored answer (--again asks anew); a failed question is\n"
      "asked again.\n"
      "Exit status: 0 answered, 1 failed, 2 bad command line, 130/143 interrupted.");
  cmd->add_option("FILE_AND_QUESTION", flags->args,
                  "Files (or folders), then the question (no question with --chapters)")
      ->required()
      ->expected(1, -1);
  cmd->add_flag("--chapters", flags->chapters,
                "Divide each file into chapters (the built-in chapters prompt: a JSON list with "
                "times, checked against the sampled frames; prompt id 'chapters')");
  cmd->add_option("--system", flags->system,
                  "A system prompt sent before the files and the question (default: none)");
  cmd->add_option("--endpoint", flags->endpoint,
                  "The server's OpenAI-compatible base URL (default $REEL_MODEL_URL)");
  cmd->add_option("--model", flags->model, "The model name the server serves");
  cmd->add_option("--fps", flags->fps, "Frames per second sampled from videos (default 1)")
      ->check(CLI::Range(0.0001, 1000.0));
  cmd->add_option("--json-schema", flags->json_schema,
                  "A JSON schema file: the answer is JSON following it (checked, and stored as "
                  "JSON)");
  cmd->add_option("--db", flags->db,
                  "The database to record in (default $REEL_DB, else "
                  "$XDG_DATA_HOME/reel/reel.db)");
  cmd->add_option("--tokenizer", flags->tokenizer,
                  "The model's tokenizer.json for exact counts (default $REEL_TOKENIZER; "
                  "without one, counts are a safe estimate)");
  cmd->add_option("--dialect", flags->dialect, "auto, vllm, sglang or openai")
      ->check(CLI::IsMember({"auto", "vllm", "sglang", "openai"}));
  cmd->add_option("--thinking", flags->thinking, "enabled, disabled or adaptive")
      ->check(CLI::IsMember({"enabled", "disabled", "adaptive"}));
  cmd->add_option("--max-output-tokens", flags->max_output_tokens, "The answer's token cap")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  cmd->add_option("--token-budget", flags->token_budget,
                  "Tokens a request may hold, the answer's included (default 1048576; at most "
                  "the server's max_model_len): more is fitted by the fit steps")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  cmd->add_flag("--reasoning", flags->reasoning, "Also print the model's reasoning (on stderr)");
  cmd->add_flag("--no-stream", flags->no_stream, "Print the answer once it is complete");
  cmd->add_flag("--again", flags->again,
                "Ask anew even when this question about these files was answered before (the "
                "earlier answer is kept); without it the stored answer is shown");
  cmd->add_flag("-v,--verbose", flags->verbose, "Show the run's progress and report on stderr");
  cmd->callback([flags, &exit_code] { exit_code = RunAsk(*flags); });
}

}  // namespace reel::cli
