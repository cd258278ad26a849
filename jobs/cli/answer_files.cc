#include "jobs/cli/answer_files.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "storage/query.h"

namespace reel::cli {
namespace {

std::string FileName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::map<int64_t, std::vector<AnswerFile>> AnswerFilesOf(const std::string& db_path,
                                                         int64_t item_id) {
  std::map<int64_t, std::vector<AnswerFile>> out;
  // The context a final answer was asked over: its own (ask), or the one its reduce is of (the
  // first segment of its base key).
  Result<storage::Table> rows = storage::Query(
      db_path,
      "SELECT p.id, (SELECT c2.manifest_json FROM contexts c2 WHERE c2.item_id = c.item_id AND "
      "c2.settings_key = coalesce(c.base_key, c.settings_key) ORDER BY c2.segment_index, c2.id "
      "LIMIT 1) FROM responses p JOIN requests r ON r.id = p.request_id JOIN contexts c ON c.id = "
      "r.context_id WHERE r.item_id = " +
          std::to_string(item_id));
  if (!rows.ok()) return out;
  for (const auto& row : rows->rows) {
    if (!std::holds_alternative<int64_t>(row[0]) || !std::holds_alternative<std::string>(row[1])) {
      continue;
    }
    const nlohmann::json manifest =
        nlohmann::json::parse(std::get<std::string>(row[1]), nullptr, false);
    if (!manifest.is_object() || !manifest.contains("sources") || !manifest["sources"].is_array()) {
      continue;
    }
    std::vector<AnswerFile> files;
    int videos = 0, images = 0;
    for (const nlohmann::json& s : manifest["sources"]) {
      if (!s.is_object()) continue;
      const bool video = s.value("kind", "") == "video";
      files.push_back({s.value("path", ""), video ? "Video " + std::to_string(++videos)
                                                  : "Image " + std::to_string(++images)});
    }
    if (files.size() > 1) out[std::get<int64_t>(row[0])] = std::move(files);
  }
  return out;
}

std::optional<size_t> FileNamedBefore(const std::string& content, size_t offset,
                                      const std::vector<AnswerFile>& files) {
  const std::string before = content.substr(0, std::min(offset, content.size()));
  std::optional<size_t> best;
  size_t best_at = 0;
  for (size_t f = 0; f < files.size(); ++f) {
    for (const std::string& name : {FileName(files[f].path), files[f].heading}) {
      if (name.empty()) continue;
      size_t at = before.rfind(name);
      // "Video 1" must not match the start of "Video 12".
      while (at != std::string::npos && at + name.size() < before.size() &&
             std::isdigit(static_cast<unsigned char>(before[at + name.size()])) &&
             std::isdigit(static_cast<unsigned char>(name.back()))) {
        at = at == 0 ? std::string::npos : before.rfind(name, at - 1);
      }
      if (at == std::string::npos) continue;
      if (!best || at + name.size() > best_at) {
        best = f;
        best_at = at + name.size();
      }
    }
  }
  return best;
}

std::optional<NearestFrame> NearestFrameOf(const std::string& db_path, int64_t item_id,
                                           const std::string& path, double seconds) {
  storage::QueryOptions options;
  options.parameters = {path, item_id, seconds};
  Result<storage::Table> rows = storage::Query(
      db_path,
      "SELECT f.sample_index, f.time_seconds, (SELECT max(time_seconds) FROM frames WHERE "
      "item_id = f.item_id) FROM frames f JOIN items i ON i.id = f.item_id WHERE i.path = ?1 "
      "AND i.job_id = (SELECT job_id FROM items WHERE id = ?2) "
      "ORDER BY abs(f.time_seconds - ?3), f.time_seconds LIMIT 1",
      options);
  if (!rows.ok() || rows->rows.empty()) return std::nullopt;
  const auto& row = rows->rows[0];
  if (!std::holds_alternative<int64_t>(row[0]) || !std::holds_alternative<double>(row[1])) {
    return std::nullopt;
  }
  if (std::holds_alternative<double>(row[2]) && seconds > std::get<double>(row[2]) + 1.0) {
    return std::nullopt;
  }
  return NearestFrame{std::get<int64_t>(row[0]), std::get<double>(row[1])};
}

}  // namespace reel::cli
