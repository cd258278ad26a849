// Input expansion: plain paths, directories and globs (with `**`) to a sorted list of files.
#include <algorithm>
#include <filesystem>
#include <map>

#include "jobs/job_spec.h"
#include "jobs/job_values.h"

namespace reel::jobs {
namespace {

namespace fs = std::filesystem;

bool HasWildcard(std::string_view text) { return text.find_first_of("*?") != text.npos; }

// `*` and `?` against one file name; a leading '.' must be matched literally.
bool NameMatches(std::string_view pattern, std::string_view name) {
  if (!name.empty() && name[0] == '.' && (pattern.empty() || pattern[0] != '.')) return false;
  size_t p = 0, n = 0, star = std::string_view::npos, star_n = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_n = n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++star_n;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool IsHidden(const fs::path& path) {
  std::string name = path.filename().string();
  return !name.empty() && name[0] == '.';
}

// Sorted entries of `dir` (errors: none listed).
std::vector<fs::directory_entry> ListDir(const fs::path& dir) {
  std::vector<fs::directory_entry> entries;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    entries.push_back(*it);
  }
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.path() < b.path(); });
  return entries;
}

// A real directory (symbolic links to directories are not followed, so `**` cannot loop).
bool IsRealDirectory(const fs::directory_entry& entry) {
  std::error_code ec;
  return entry.is_directory(ec) && !entry.is_symlink(ec);
}

class Globber {
 public:
  explicit Globber(std::vector<std::string> parts) : parts_(std::move(parts)) {}

  void Match(const fs::path& dir, size_t index, std::vector<fs::path>* out) {
    std::error_code ec;
    if (index == parts_.size()) {
      if (fs::is_regular_file(dir, ec)) out->push_back(dir);
      return;
    }
    const std::string& part = parts_[index];
    if (part == "**") {
      bool last = index + 1 == parts_.size();
      if (!last) Match(dir, index + 1, out);  // zero directories
      for (const fs::directory_entry& entry : ListDir(dir)) {
        if (IsHidden(entry.path())) continue;
        if (IsRealDirectory(entry)) {
          Match(entry.path(), index, out);
        } else if (last && entry.is_regular_file(ec)) {
          out->push_back(entry.path());  // a trailing `**` matches every file below
        }
      }
      return;
    }
    if (!HasWildcard(part)) {
      fs::path next = dir / part;
      if (fs::exists(next, ec)) Match(next, index + 1, out);
      return;
    }
    for (const fs::directory_entry& entry : ListDir(dir)) {
      if (!NameMatches(part, entry.path().filename().string())) continue;
      bool last = index + 1 == parts_.size();
      if (last ? entry.is_regular_file(ec) : entry.is_directory(ec)) {
        Match(entry.path(), index + 1, out);
      }
    }
  }

 private:
  std::vector<std::string> parts_;
};

std::string Lower(std::string text) {
  for (char& c : text) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return text;
}

}  // namespace

InputKind GuessInputKind(std::string_view path) {
  std::string ext = Lower(fs::path(path).extension().string());
  static const std::map<std::string, InputKind> kKinds = {
      {".mp4", InputKind::kVideo},         {".m4v", InputKind::kVideo},
      {".mov", InputKind::kVideo},         {".mkv", InputKind::kVideo},
      {".webm", InputKind::kVideo},        {".avi", InputKind::kVideo},
      {".ts", InputKind::kVideo},          {".mts", InputKind::kVideo},
      {".m2ts", InputKind::kVideo},        {".mpg", InputKind::kVideo},
      {".mpeg", InputKind::kVideo},        {".flv", InputKind::kVideo},
      {".wmv", InputKind::kVideo},         {".3gp", InputKind::kVideo},
      {".ogv", InputKind::kVideo},         {".jpg", InputKind::kImage},
      {".jpeg", InputKind::kImage},        {".png", InputKind::kImage},
      {".webp", InputKind::kImage},        {".bmp", InputKind::kImage},
      {".txt", InputKind::kDocument},      {".md", InputKind::kDocument},
      {".markdown", InputKind::kDocument}, {".srt", InputKind::kSubtitle},
      {".vtt", InputKind::kSubtitle},
  };
  auto it = kKinds.find(ext);
  return it == kKinds.end() ? InputKind::kAuto : it->second;
}

Result<std::vector<InputFile>> ExpandInputs(const JobSpec& job, std::vector<std::string>* warnings,
                                            size_t max_files) {
  std::map<std::string, InputKind> found;  // path -> kind; the first entry to list a path wins
  std::vector<std::string> missing;
  std::vector<std::string> invalid;
  auto warn = [&](const std::string& message) {
    if (warnings != nullptr) warnings->push_back(message);
  };

  for (const InputSpec& input : job.inputs) {
    const std::string where = input.where.empty() ? job.source : input.where;
    fs::path resolved(ResolveJobPath(job.base_dir, input.path));
    std::vector<fs::path> matches;
    bool is_glob = HasWildcard(input.path);
    std::error_code ec;
    if (!is_glob) {
      if (!fs::exists(resolved, ec)) {
        missing.push_back(where + ": input '" + input.path + "' does not exist (looked for '" +
                          resolved.string() + "')");
        continue;
      }
      if (!fs::is_directory(resolved, ec)) {
        InputKind kind =
            input.kind != InputKind::kAuto ? input.kind : GuessInputKind(resolved.string());
        if (kind == InputKind::kAuto) {
          invalid.push_back(where + ": cannot tell the kind of '" + input.path +
                            "' from its extension; write it as {path: ..., kind: "
                            "video|image|document|subtitle}");
          continue;
        }
        found.emplace(resolved.string(), kind);
        continue;
      }
      Globber({"**"}).Match(resolved, 0, &matches);  // a directory: every file below it
    } else {
      fs::path root = resolved.root_path();
      std::vector<std::string> parts;
      for (const fs::path& part : resolved.relative_path()) {
        if (!part.empty() && part != ".") parts.push_back(part.string());
      }
      // Start at the longest prefix without wildcards.
      size_t first_wild = 0;
      while (first_wild < parts.size() && !HasWildcard(parts[first_wild]) &&
             parts[first_wild] != "**") {
        root /= parts[first_wild++];
      }
      if (root.empty()) root = ".";
      parts.erase(parts.begin(), parts.begin() + static_cast<std::ptrdiff_t>(first_wild));
      Globber(std::move(parts)).Match(root, 0, &matches);
      if (matches.empty()) {
        warn(where + ": '" + input.path + "' matches no files");
        continue;
      }
    }
    int unknown = 0;
    std::string example;
    for (const fs::path& match : matches) {
      std::string path = match.lexically_normal().string();
      InputKind kind = input.kind != InputKind::kAuto ? input.kind : GuessInputKind(path);
      if (kind == InputKind::kAuto) {
        if (unknown++ == 0) example = path;
        continue;
      }
      found.emplace(path, kind);
      if (found.size() > max_files) {
        return LimitExceeded(where + ": the inputs expand to more than " +
                             std::to_string(max_files) + " files");
      }
    }
    if (unknown > 0) {
      warn(where + ": skipped " + std::to_string(unknown) + " file" + (unknown > 1 ? "s" : "") +
           " of unknown kind under '" + input.path + "' (e.g. '" + example +
           "'); give the entry a 'kind' to include them");
    }
  }

  auto join = [](const std::vector<std::string>& lines) {
    std::string out;
    for (const std::string& line : lines) out += (out.empty() ? "" : "\n") + line;
    return out;
  };
  if (!missing.empty()) {
    std::vector<std::string> all = missing;
    all.insert(all.end(), invalid.begin(), invalid.end());
    return NotFound(join(all));
  }
  if (!invalid.empty()) return InvalidArgument(join(invalid));
  std::vector<InputFile> files;
  files.reserve(found.size());
  for (const auto& [path, kind] : found) files.push_back({path, kind});
  return files;
}

}  // namespace reel::jobs
