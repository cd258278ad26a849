// Input expansion: plain paths, directories and globs (with `**`) to a sorted list of files.
#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "base/strings.h"
#include "jobs/spec/job_spec.h"
#include "jobs/spec/job_values.h"
#include "pipeline/documents/document.h"

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

// Matches a pattern split into path components against the tree. Repeated `**` components are
// one (`a/**/**/b` is `a/**/b`), and each (directory, component) state is visited once, so
// patterns with several `**` or wildcard directories stay linear in the directories walked
// instead of exponential in the tree's depth. At most `max_directories` listings.
class Globber {
 public:
  Globber(std::vector<std::string> parts, size_t max_directories)
      : max_directories_(max_directories) {
    for (std::string& part : parts) {
      if (part == "**" && !parts_.empty() && parts_.back() == "**") continue;
      parts_.push_back(std::move(part));
    }
  }

  // False once the walk has listed more than max_directories (the matches are then incomplete).
  bool Match(const fs::path& dir, std::vector<fs::path>* out) { return Match(dir, 0, out); }
  size_t directories_listed() const { return listed_; }

 private:
  bool Match(const fs::path& dir, size_t index, std::vector<fs::path>* out) {
    if (!visited_.emplace(dir.native(), index).second) return true;
    std::error_code ec;
    if (index == parts_.size()) {
      if (fs::is_regular_file(dir, ec)) out->push_back(dir);
      return true;
    }
    const std::string& part = parts_[index];
    if (part == "**") {
      bool last = index + 1 == parts_.size();
      if (!last && !Match(dir, index + 1, out)) return false;  // zero directories
      std::vector<fs::directory_entry> entries;
      if (!List(dir, &entries)) return false;
      for (const fs::directory_entry& entry : entries) {
        if (IsHidden(entry.path())) continue;
        if (IsRealDirectory(entry)) {
          if (!Match(entry.path(), index, out)) return false;
        } else if (last && entry.is_regular_file(ec)) {
          out->push_back(entry.path());  // a trailing `**` matches every file below
        }
      }
      return true;
    }
    if (!HasWildcard(part)) {
      fs::path next = dir / part;
      if (fs::exists(next, ec)) return Match(next, index + 1, out);
      return true;
    }
    std::vector<fs::directory_entry> entries;
    if (!List(dir, &entries)) return false;
    for (const fs::directory_entry& entry : entries) {
      if (!NameMatches(part, entry.path().filename().string())) continue;
      bool last = index + 1 == parts_.size();
      if (last ? entry.is_regular_file(ec) : entry.is_directory(ec)) {
        if (!Match(entry.path(), index + 1, out)) return false;
      }
    }
    return true;
  }

  bool List(const fs::path& dir, std::vector<fs::directory_entry>* entries) {
    if (++listed_ > max_directories_) return false;
    *entries = ListDir(dir);
    return true;
  }

  std::vector<std::string> parts_;
  size_t max_directories_;
  size_t listed_ = 0;
  std::set<std::pair<std::string, size_t>> visited_;
};

}  // namespace

InputKind GuessInputKind(std::string_view path) {
  std::string ext = Lower(fs::path(path).extension().string());
  static const std::map<std::string, InputKind> kKinds = {
      {".mp4", InputKind::kVideo},
      {".m4v", InputKind::kVideo},
      {".mov", InputKind::kVideo},
      {".mkv", InputKind::kVideo},
      {".webm", InputKind::kVideo},
      {".avi", InputKind::kVideo},
      {".ts", InputKind::kVideo},
      {".mts", InputKind::kVideo},
      {".m2ts", InputKind::kVideo},
      {".mpg", InputKind::kVideo},
      {".mpeg", InputKind::kVideo},
      {".flv", InputKind::kVideo},
      {".wmv", InputKind::kVideo},
      {".3gp", InputKind::kVideo},
      {".ogv", InputKind::kVideo},
      {".jpg", InputKind::kImage},
      {".jpeg", InputKind::kImage},
      {".png", InputKind::kImage},
      {".webp", InputKind::kImage},
      {".bmp", InputKind::kImage},
      {".txt", InputKind::kDocument},
      {".md", InputKind::kDocument},
      {".markdown", InputKind::kDocument},
      {".srt", InputKind::kSubtitle},
      {".vtt", InputKind::kSubtitle},
      {".gif", InputKind::kVideo},
      {".mpv", InputKind::kVideo},
      {".m1v", InputKind::kVideo},
      {".m2v", InputKind::kVideo},
      {".vob", InputKind::kVideo},
      // Read by pipeline/documents (IsPagedDocument): pages of text and pictures.
      {".pdf", InputKind::kDocument},
      {".html", InputKind::kDocument},
      {".htm", InputKind::kDocument},
      {".xhtml", InputKind::kDocument},
      {".epub", InputKind::kDocument},
      {".docx", InputKind::kDocument},
      {".pptx", InputKind::kDocument},
      {".odt", InputKind::kDocument},
      {".odp", InputKind::kDocument},
      // Sound alone: transcribed (TranscribesSpeech). .ogg is Ogg audio far more often than
      // Theora video (.ogv); one that holds a picture is read as an audio file all the same.
      {".mp3", InputKind::kAudio},
      {".m4a", InputKind::kAudio},
      {".aac", InputKind::kAudio},
      {".wav", InputKind::kAudio},
      {".flac", InputKind::kAudio},
      {".ogg", InputKind::kAudio},
      {".oga", InputKind::kAudio},
      {".opus", InputKind::kAudio},
  };
  auto it = kKinds.find(ext);
  return it == kKinds.end() ? InputKind::kAuto : it->second;
}

Result<std::vector<InputFile>> ExpandInputs(const JobSpec& job, std::vector<std::string>* warnings,
                                            size_t max_files, size_t max_directories) {
  struct Found {
    InputKind kind;
    bool named = false;  // by a plain path entry (not a glob or a directory)
  };
  std::map<std::string, Found> found;  // path -> kind; the first entry to list a path wins
  std::vector<std::string> missing;
  std::vector<std::string> invalid;
  auto warn = [&](const std::string& message) {
    if (warnings != nullptr) warnings->push_back(message);
  };
  // Files of unknown kind a glob or directory found, per entry; reported at the end, without
  // the ones another entry took in (with a `kind`).
  struct Unknown {
    std::string where;
    std::string pattern;
    std::vector<std::string> paths;
  };
  std::vector<Unknown> unknown;
  size_t directories_left = max_directories;

  for (const InputSpec& input : job.inputs) {
    const std::string where = input.where.empty() ? job.source : input.where;
    fs::path resolved(ResolveJobPath(job.base_dir, input.path));
    std::vector<fs::path> matches;
    bool is_glob = HasWildcard(input.path);
    std::error_code ec;
    std::vector<std::string> parts;
    fs::path root;
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
                            "video|image|document|subtitle|audio}");
          continue;
        }
        found.emplace(resolved.string(), Found{kind, true});
        continue;
      }
      root = resolved;  // a directory: every file below it
      parts = {"**"};
    } else {
      root = resolved.root_path();
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
    }
    Globber globber(std::move(parts), directories_left);
    if (!globber.Match(root, &matches)) {
      return LimitExceeded(where + ": listing '" + input.path + "' reads more than " +
                           std::to_string(max_directories) +
                           " directories; start the pattern deeper in the tree or use fewer "
                           "'**'");
    }
    directories_left -= globber.directories_listed();
    if (is_glob && matches.empty()) {
      warn(where + ": '" + input.path + "' matches no files");
      continue;
    }
    Unknown skipped{where, input.path, {}};
    for (const fs::path& match : matches) {
      std::string path = match.lexically_normal().string();
      InputKind kind = input.kind != InputKind::kAuto ? input.kind : GuessInputKind(path);
      if (kind == InputKind::kAuto) {
        skipped.paths.push_back(std::move(path));
        continue;
      }
      found.emplace(path, Found{kind, false});
      if (found.size() > max_files) {
        return LimitExceeded(where + ": the inputs expand to more than " +
                             std::to_string(max_files) + " files");
      }
    }
    if (!skipped.paths.empty()) unknown.push_back(std::move(skipped));
  }
  for (Unknown& u : unknown) {
    std::erase_if(u.paths, [&](const std::string& path) { return found.contains(path); });
    if (u.paths.empty()) continue;
    const size_t n = u.paths.size();
    warn(u.where + ": skipped " + std::to_string(n) + " file" + (n > 1 ? "s" : "") +
         " of unknown kind under '" + u.pattern + "' (e.g. '" + u.paths.front() +
         "'); give the entry a 'kind' to include them");
  }

  // A video's side-car subtitles (clip.srt, clip.en.vtt beside clip.mp4) are read with the
  // video (jobs/stages/stages.h), as an audio file's are (talk.srt beside talk.mp3); listed as
  // items of their own they would be stored twice. Side-car documents belong to videos only.
  std::map<std::pair<std::string, std::string>, std::string> videos;  // (directory, stem) -> path
  std::map<std::pair<std::string, std::string>, std::string> timed;   // videos and audio files
  for (const auto& [path, f] : found) {
    if (f.kind != InputKind::kVideo && f.kind != InputKind::kAudio) continue;
    fs::path p(path);
    const auto key = std::make_pair(p.parent_path().string(), p.stem().string());
    timed.emplace(key, path);
    if (f.kind == InputKind::kVideo) videos.emplace(key, path);
  }
  for (auto it = found.begin(); it != found.end();) {
    const fs::path p(it->first);
    const std::string ext = Lower(p.extension().string());
    const bool subtitle_file =
        it->second.kind == InputKind::kSubtitle && (ext == ".srt" || ext == ".vtt");
    std::optional<std::string> video;
    if (it->second.kind == InputKind::kDocument && pipeline::IsDocumentExtension(ext)) {
      // A side-car document (talk.pdf beside talk.mp4): the video's item reads it.
      if (auto v = videos.find({p.parent_path().string(), p.stem().string()}); v != videos.end()) {
        video = v->second;
      }
    }
    if (subtitle_file) {
      // Side-car names: <stem>.srt or <stem>.<anything>.srt; try every '.' as the stem's end.
      const std::string base = p.stem().string();
      const std::string dir = p.parent_path().string();
      for (size_t end = base.size(); end != std::string::npos && end > 0;
           end = base.rfind('.', end - 1)) {
        if (auto v = timed.find({dir, base.substr(0, end)}); v != timed.end()) {
          video = v->second;
          break;
        }
      }
    }
    if (!video) {
      ++it;
      continue;
    }
    if (it->second.named) {
      warn(it->first + ": read as a side-car " + (subtitle_file ? "subtitle" : "document") +
           " of '" + *video + "', not as an item of its own");
    }
    it = found.erase(it);
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
  for (const auto& [path, f] : found) files.push_back({path, f.kind});
  return files;
}

}  // namespace reel::jobs
