#include "jobs/stages/document_chunks.h"

#include <algorithm>
#include <cctype>

#include "base/strings.h"

namespace reel::jobs {
namespace {

bool IsBlank(std::string_view line) {
  return std::all_of(line.begin(), line.end(),
                     [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f'; });
}

// Cuts `paragraph` into pieces of at most max_chars, preferring whitespace near target_chars.
void CutLong(const std::string& paragraph, const ChunkOptions& options,
             std::vector<std::string>* out) {
  size_t pos = 0;
  while (paragraph.size() - pos > options.max_chars) {
    size_t cut = paragraph.find_last_of(" \n\t", pos + options.target_chars);
    if (cut == std::string::npos || cut <= pos) {
      cut = paragraph.find_first_of(" \n\t", pos + options.target_chars);
    }
    if (cut == std::string::npos || cut - pos > options.max_chars) {
      cut = pos + options.max_chars;
      // Do not split a UTF-8 sequence: back up over continuation bytes.
      while (cut > pos + 1 && (static_cast<unsigned char>(paragraph[cut]) & 0xC0) == 0x80) --cut;
    }
    std::string piece(reel::Trim(std::string_view(paragraph).substr(pos, cut - pos)));
    if (!piece.empty()) out->push_back(std::move(piece));
    pos = cut;
  }
  std::string rest(reel::Trim(std::string_view(paragraph).substr(pos)));
  if (!rest.empty()) out->push_back(std::move(rest));
}

}  // namespace

std::vector<std::string> SplitDocument(std::string_view text, const ChunkOptions& options) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  // Paragraphs, each flagged when it is a Markdown heading.
  std::vector<std::pair<std::string, bool>> paragraphs;
  std::string current;
  auto flush = [&] {
    std::string p(reel::Trim(current));
    if (!p.empty()) paragraphs.emplace_back(std::move(p), p.starts_with("#"));
    current.clear();
  };
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (IsBlank(line)) {
      flush();
    } else {
      if (line.starts_with("#")) flush();  // a heading starts its own paragraph
      if (!current.empty()) current += '\n';
      current += line;
    }
    pos = end + 1;
  }
  flush();

  std::vector<std::string> chunks;
  std::string chunk;
  for (auto& [paragraph, heading] : paragraphs) {
    if (paragraph.size() > options.max_chars) {
      if (!chunk.empty()) chunks.push_back(std::move(chunk));
      chunk.clear();
      CutLong(paragraph, options, &chunks);
      continue;
    }
    if (!chunk.empty() && (heading || chunk.size() + 2 + paragraph.size() > options.target_chars)) {
      chunks.push_back(std::move(chunk));
      chunk.clear();
    }
    if (!chunk.empty()) chunk += "\n\n";
    chunk += paragraph;
  }
  if (!chunk.empty()) chunks.push_back(std::move(chunk));
  return chunks;
}

}  // namespace reel::jobs
