// Job files: ParseJobText and LoadJobFile through the Parser (job_parser.h), FitStepsOf,
// ResolveJobPath.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "jobs/spec/job_parser.h"
#include "jobs/spec/job_spec.h"

namespace reel::jobs {
namespace {

namespace fs = std::filesystem;
using parser::Parser;

}  // namespace

Result<JobSpec> ParseJobText(std::string_view text, const std::string& source,
                             const std::string& base_dir, const ParseOptions& options) {
  return Parser(source, base_dir, options).Run(text);
}

Result<JobSpec> LoadJobFile(const std::string& path, const ParseOptions& options) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return NotFound(path + ": no such job file");
  if (fs::is_directory(path, ec)) return InvalidArgument(path + ": is a directory, not a job file");
  // Read at most one byte past the limit: the path may be a pipe or a device (/dev/zero), whose
  // size nobody knows in advance.
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError(path + ": cannot open the job file: " + std::strerror(errno));
  std::string text;
  const uint64_t want = options.max_file_bytes + 1;
  char buffer[1 << 16];
  while (text.size() < want && in) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(sizeof(buffer), want - text.size()));
    in.read(buffer, static_cast<std::streamsize>(n));
    text.append(buffer, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return IoError(path + ": cannot read the job file");
  fs::path dir = fs::path(path).parent_path();
  fs::path absolute = fs::absolute(dir.empty() ? fs::path(".") : dir, ec);
  std::string base_dir = ec ? dir.string() : absolute.lexically_normal().string();
  if (base_dir.size() > 1 && base_dir.back() == '/') base_dir.pop_back();
  if (text.size() > options.max_file_bytes) {
    const uint64_t size = fs::is_regular_file(path, ec) ? fs::file_size(path, ec) : 0;
    const std::string said = !ec && size > options.max_file_bytes
                                 ? std::to_string(size) + " bytes"
                                 : "more than " + std::to_string(options.max_file_bytes) + " bytes";
    return Parser(path, base_dir, options).TooBig(text, said);
  }
  return ParseJobText(text, path, base_dir, options);
}

std::vector<llm::FitStep> FitStepsOf(const ContextSpec& context) {
  using llm::FitStep;
  if (!context.fit_steps.empty()) return context.fit_steps;
  switch (context.fit_strategy) {
    case FitStrategy::kThinFrames:
      return {FitStep::kDedupe, FitStep::kThinFrames, FitStep::kShortenText, FitStep::kSplit};
    case FitStrategy::kLowerResolution:
      return {FitStep::kDedupe, FitStep::kLowerResolution, FitStep::kThinFrames,
              FitStep::kShortenText, FitStep::kSplit};
    case FitStrategy::kSplit:
      return {FitStep::kDedupe, FitStep::kSplit};
    case FitStrategy::kFail:
      return {};
  }
  return {};
}

std::string ResolveJobPath(const std::string& base_dir, const std::string& path) {
  fs::path p(path);
  if (p.is_absolute() || base_dir.empty()) return p.lexically_normal().string();
  return (fs::path(base_dir) / p).lexically_normal().string();
}

}  // namespace reel::jobs
