// Timed text from side-car files (SubRip, WebVTT) and from subtitle streams inside containers.
//
// Decisions the header leaves open, made here:
// - Text is always valid UTF-8. A side-car file's encoding is detected (base/text_encoding.h:
//   byte-order mark, UTF-16's zero bytes, UTF-8 validity, else the fallback encoding, by default
//   Windows-1252) and converted; ReadSubtitleFile says which encoding it used. A decoded subtitle
//   from a container stream that is not UTF-8 is converted the same way (FFmpeg's own check,
//   which would drop it, is turned off). ParseSrt / ParseVtt take text that should already be
//   UTF-8 and replace what is not with U+FFFD. NUL bytes are dropped.
// - A cue whose end is before its start is skipped (and counts as a bad line); end == start is
//   kept. A cue whose text is empty once markup is removed is dropped: it carries nothing.
// - Markup: tags `<...>` (i, b, u, font, c.class, v Speaker, lang, ruby, timestamps
//   `<00:00:01.000>`) are removed and their text kept; ASS overrides `{\...}` are removed. Then the
//   entities &amp; &lt; &gt; &quot; &apos; &#N; &#xH; are decoded; &nbsp; becomes a plain space
//   (the text feeds a language model, not a renderer) and &lrm; &rlm; are dropped. A '<' that
//   does not open a tag ("a < b") is kept.
// - A .srt or .vtt with no cue is kCorruptData, except a WebVTT file that has its "WEBVTT" header
//   and nothing malformed: that is a valid, empty subtitle track.
// - Container streams: HTML entities are decoded in every text codec but ASS/SSA (see
//   StreamDecoder). Segments from all streams are merged and sorted by start time (ties keep
//   stream order). A stream whose decoder cannot be opened is skipped, like a bitmap stream. A
//   stream language of "und" (undetermined) is reported as "". An end the stream does not give
//   (no end_display_time, no packet duration) becomes the next segment's start in that stream.
// - Limits: side-car files over 64 MiB, or more than 64 MiB of decoded stream text, are
//   kLimitExceeded; stream reading has MediaLimits' default time limit.
#include "pipeline/subtitles.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>

#include "base/file_util.h"
#include "base/strings.h"
#include "base/utf8.h"
#include "pipeline/internal/ffmpeg.h"
#include "pipeline/limits.h"

namespace reel::pipeline {
namespace {

// Side-car files larger than this are refused (real ones are well under 1 MiB).
constexpr uint64_t kMaxSubtitleFileBytes = 64ull << 20;
// Decoded text from all streams of one container larger than this is refused.
constexpr size_t kMaxStreamTextBytes = 64u << 20;

// ---------------------------------------------------------------------------------------------
// Text helpers.

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\v'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Line breaks are not trimmed here: a cue's lines are kept apart.
std::string_view TrimInLine(std::string_view s) { return reel::Trim(s, " \t\f\v"); }

// `in` as valid UTF-8 (ill-formed sequences replaced by U+FFFD) without NUL bytes.
std::string SanitizeUtf8(std::string_view in) {
  std::string out = ReplaceInvalidUtf8(in);
  std::erase(out, '\0');
  return out;
}

// Splits on LF, CRLF and lone CR. The views point into `text`.
std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t begin = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\n' && text[i] != '\r') continue;
    lines.push_back(text.substr(begin, i - begin));
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
    begin = i + 1;
  }
  if (begin < text.size()) lines.push_back(text.substr(begin));
  return lines;
}

// Removes the UTF-8 byte order mark and makes the text valid UTF-8.
std::string PrepareText(std::string_view text) {
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  if (text.substr(0, kBom.size()) == kBom) text.remove_prefix(kBom.size());
  return SanitizeUtf8(text);
}

// Joins the non-empty trimmed lines of `text` (split on '\n') with '\n'.
std::string JoinNonEmptyLines(std::string_view text) {
  std::string out;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = TrimInLine(text.substr(begin, end - begin));
    if (!line.empty()) {
      if (!out.empty()) out += '\n';
      out.append(line);
    }
    begin = end + 1;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Markup.

// Removes HTML-like tags and `{\...}` ASS override blocks from one line of SubRip/WebVTT text.
std::string StripMarkup(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  size_t i = 0;
  while (i < line.size()) {
    char c = line[i];
    char next = i + 1 < line.size() ? line[i + 1] : '\0';
    if (c == '<' && (IsAlpha(next) || next == '/' || IsDigit(next))) {
      size_t close = line.find('>', i + 1);
      if (close != std::string_view::npos) {
        std::string_view inside = line.substr(i + 1, close - i - 1);
        // A tag starting with a digit must be a timestamp tag; "<3 you>" stays text.
        bool timestamp =
            IsDigit(next) && inside.find_first_not_of("0123456789:.,") == std::string_view::npos;
        if (!IsDigit(next) || timestamp) {
          i = close + 1;
          continue;
        }
      }
    } else if (c == '{' && next == '\\') {
      size_t close = line.find('}', i + 1);
      if (close != std::string_view::npos) {
        i = close + 1;
        continue;
      }
    }
    out += c;
    ++i;
  }
  return out;
}

// Decodes the character references subtitle files use. Unknown ones are kept as written.
std::string DecodeEntities(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] != '&') {
      out += s[i++];
      continue;
    }
    size_t semi = s.find(';', i + 1);
    if (semi == std::string_view::npos || semi - i > 10) {
      out += s[i++];
      continue;
    }
    std::string_view name = s.substr(i + 1, semi - i - 1);
    std::optional<std::string> replacement;
    if (name == "amp") {
      replacement = "&";
    } else if (name == "lt") {
      replacement = "<";
    } else if (name == "gt") {
      replacement = ">";
    } else if (name == "quot") {
      replacement = "\"";
    } else if (name == "apos") {
      replacement = "'";
    } else if (name == "nbsp") {
      replacement = " ";
    } else if (name == "lrm" || name == "rlm") {
      replacement = "";
    } else if (name.size() >= 2 && name[0] == '#') {
      bool hex = name[1] == 'x' || name[1] == 'X';
      std::string_view digits = name.substr(hex ? 2 : 1);
      uint32_t cp = 0;
      bool valid = !digits.empty();
      for (char d : digits) {
        int value = IsDigit(d)                    ? d - '0'
                    : hex && d >= 'a' && d <= 'f' ? d - 'a' + 10
                    : hex && d >= 'A' && d <= 'F' ? d - 'A' + 10
                                                  : -1;
        if (value < 0 || cp > 0x10FFFF) {
          valid = false;
          break;
        }
        cp = cp * (hex ? 16 : 10) + value;
      }
      if (valid && cp != 0 && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF)) {
        replacement.emplace();
        AppendUtf8(cp, *replacement);
      }
    }
    if (replacement) {
      out += *replacement;
      i = semi + 1;
    } else {
      out += s[i++];
    }
  }
  return out;
}

// The plain text of a cue's lines: markup removed, entities decoded, lines trimmed, empty lines
// dropped, joined with '\n'.
std::string CueText(const std::vector<std::string_view>& lines) {
  std::string joined;
  for (std::string_view line : lines) {
    joined += DecodeEntities(StripMarkup(line));
    joined += '\n';
  }
  return JoinNonEmptyLines(joined);
}

// The text of an ASS event as FFmpeg's decoders produce it: "ReadOrder,Layer,Style,Name,MarginL,
// MarginR,MarginV,Effect,Text" (or, from old FFmpeg, a full "Dialogue: Layer,Start,End,...,Text"
// line). Override blocks `{...}` are removed; \N and \n become newlines, \h a space.
std::string AssEventText(std::string_view event) {
  int fields = 8;
  constexpr std::string_view kDialogue = "Dialogue:";
  if (event.substr(0, kDialogue.size()) == kDialogue) {
    event.remove_prefix(kDialogue.size());
    fields = 9;
  }
  std::string_view text = event;
  for (int k = 0; k < fields; ++k) {
    size_t comma = text.find(',');
    if (comma == std::string_view::npos) {
      text = event;  // not an event line after all: take it whole
      break;
    }
    text.remove_prefix(comma + 1);
  }
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '{') {
      size_t close = text.find('}', i + 1);
      if (close == std::string_view::npos) break;  // an unclosed block hides the rest
      i = close;
    } else if (c == '\\' && i + 1 < text.size() &&
               (text[i + 1] == 'N' || text[i + 1] == 'n' || text[i + 1] == 'h')) {
      out += text[i + 1] == 'h' ? ' ' : '\n';
      ++i;
    } else if (c == '\r') {
      out += '\n';
    } else {
      out += c;
    }
  }
  return JoinNonEmptyLines(out);
}

// ---------------------------------------------------------------------------------------------
// Cue timings.

// Parses a run of 1..9 decimal digits.
std::optional<int64_t> ParseDigits(std::string_view s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  int64_t value = 0;
  for (char c : s) {
    if (!IsDigit(c)) return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

// Parses "[H+:]MM:SS[{,|.}fff]" into milliseconds. SubRip uses ',' and always has hours; WebVTT
// uses '.' and may omit hours; both separators are accepted in both formats. More than three
// fraction digits are truncated to milliseconds.
std::optional<int64_t> ParseTimestamp(std::string_view s) {
  int64_t fraction_ms = 0;
  size_t separator = s.find_first_of(",.");
  if (separator != std::string_view::npos) {
    std::string_view fraction = s.substr(separator + 1);
    if (fraction.empty() || fraction.size() > 9) return std::nullopt;
    for (char c : fraction) {
      if (!IsDigit(c)) return std::nullopt;
    }
    std::string padded(fraction.substr(0, 3));
    padded.resize(3, '0');
    fraction_ms = *ParseDigits(padded);
    s = s.substr(0, separator);
  }
  std::vector<std::string_view> parts;
  size_t begin = 0;
  while (true) {
    size_t colon = s.find(':', begin);
    parts.push_back(s.substr(begin, colon == std::string_view::npos ? colon : colon - begin));
    if (colon == std::string_view::npos) break;
    begin = colon + 1;
  }
  if (parts.size() != 2 && parts.size() != 3) return std::nullopt;
  int64_t hours = 0;
  if (parts.size() == 3) {
    auto h = ParseDigits(parts[0]);
    if (!h) return std::nullopt;
    hours = *h;
  }
  auto minutes = ParseDigits(parts[parts.size() - 2]);
  auto seconds = ParseDigits(parts.back());
  if (!minutes || !seconds || parts.back().size() > 2 || *seconds >= 60) return std::nullopt;
  if (parts.size() == 3 && *minutes >= 60) return std::nullopt;
  return ((hours * 60 + *minutes) * 60 + *seconds) * 1000 + fraction_ms;
}

struct CueTiming {
  int64_t start_ms = 0;
  int64_t end_ms = 0;
};

bool HasArrow(std::string_view line) { return line.find("-->") != std::string_view::npos; }

// Parses "start --> end [settings]". Anything after the end time (WebVTT cue settings such as
// "align:start", SubRip's "X1:..." coordinates) is ignored.
std::optional<CueTiming> ParseTimingLine(std::string_view line) {
  size_t arrow = line.find("-->");
  if (arrow == std::string_view::npos) return std::nullopt;
  std::string_view left = TrimInLine(line.substr(0, arrow));
  std::string_view right = TrimInLine(line.substr(arrow + 3));
  size_t space = right.find_first_of(" \t");
  if (space != std::string_view::npos) right = right.substr(0, space);
  auto start = ParseTimestamp(left);
  auto end = ParseTimestamp(right);
  if (!start || !end) return std::nullopt;
  return CueTiming{*start, *end};
}

// ---------------------------------------------------------------------------------------------
// Cue collection shared by both parsers.

class CueCollector {
 public:
  explicit CueCollector(const std::string& name) : name_(name) {}

  // Records a cue whose timing line is `line_number` (1-based); an invalid timing, or an end
  // before the start, makes that line bad and the cue is skipped.
  void Add(std::optional<CueTiming> timing, const std::vector<std::string_view>& text_lines,
           int line_number) {
    if (!timing || timing->end_ms < timing->start_ms) {
      NoteBadLine(line_number);
      return;
    }
    ++cues_read_;
    std::string text = CueText(text_lines);
    if (text.empty()) return;
    TextSegment segment;
    segment.start_s = static_cast<double>(timing->start_ms) / 1000.0;
    segment.end_s = static_cast<double>(timing->end_ms) / 1000.0;
    segment.text = std::move(text);
    segment.source = name_;
    segments_.push_back(std::move(segment));
  }

  void NoteBadLine(int line_number) {
    if (first_bad_line_ == 0) first_bad_line_ = line_number;
  }

  // The sorted segments, or kCorruptData when no cue was read (unless `empty_is_valid` and
  // nothing was malformed).
  Result<std::vector<TextSegment>> Finish(const std::vector<std::string_view>& lines,
                                          const char* format, bool empty_is_valid) {
    if (cues_read_ == 0) {
      if (first_bad_line_ == 0) {
        if (empty_is_valid) return std::vector<TextSegment>();
        return CorruptData(name_ + ": no " + format + " cue found (the file has no cues)");
      }
      std::string_view excerpt = TrimInLine(lines[first_bad_line_ - 1]);
      if (excerpt.size() > 60) {
        size_t cut = 60;  // not inside a UTF-8 sequence
        while (cut > 0 && (static_cast<unsigned char>(excerpt[cut]) & 0xC0) == 0x80) --cut;
        excerpt = excerpt.substr(0, cut);
      }
      return CorruptData(name_ + ": no " + format + " cue could be read; first bad line " +
                         std::to_string(first_bad_line_) + ": \"" + std::string(excerpt) + "\"");
    }
    std::stable_sort(
        segments_.begin(), segments_.end(),
        [](const TextSegment& a, const TextSegment& b) { return a.start_s < b.start_s; });
    return std::move(segments_);
  }

 private:
  std::string name_;
  std::vector<TextSegment> segments_;
  int cues_read_ = 0;
  int first_bad_line_ = 0;  // 1-based; 0 = none
};

bool IsCueNumber(std::string_view line) {
  line = TrimInLine(line);
  return !line.empty() && line.size() <= 9 &&
         line.find_first_not_of("0123456789") == std::string_view::npos;
}

bool IsTimingLine(std::string_view line) { return ParseTimingLine(line).has_value(); }

// True if the line starting a WebVTT block names a block that is not a cue.
bool IsVttNonCueBlock(std::string_view line) {
  for (std::string_view keyword : {"NOTE", "STYLE", "REGION"}) {
    if (line.substr(0, keyword.size()) == keyword &&
        (line.size() == keyword.size() || IsSpace(line[keyword.size()]))) {
      return true;
    }
  }
  return false;
}

// The language tag in a side-car file name: "clip.en.srt" -> "en", "clip.pt-BR.vtt" -> "pt-BR",
// "clip.en.forced.srt" -> "en". "" if the name carries none.
std::string LanguageFromFileName(const std::string& path) {
  std::string stem = std::filesystem::path(path).stem().string();
  for (int k = 0; k < 2; ++k) {
    size_t dot = stem.rfind('.');
    if (dot == std::string::npos) return "";
    std::string tag = stem.substr(dot + 1);
    stem.resize(dot);
    std::string lower = Lower(tag);
    if (lower == "forced" || lower == "sdh" || lower == "cc" || lower == "default") continue;
    // BCP 47 shape: a 2-3 letter primary subtag, then subtags of 2-8 letters or digits.
    size_t dash = tag.find('-');
    std::string_view primary = std::string_view(tag).substr(0, dash);
    if (primary.size() < 2 || primary.size() > 3) return "";
    for (char c : primary) {
      if (!IsAlpha(c)) return "";
    }
    while (dash != std::string::npos) {
      size_t next = tag.find('-', dash + 1);
      std::string_view sub = std::string_view(tag).substr(
          dash + 1, next == std::string::npos ? std::string::npos : next - dash - 1);
      if (sub.size() < 2 || sub.size() > 8) return "";
      for (char c : sub) {
        if (!IsAlpha(c) && !IsDigit(c)) return "";
      }
      dash = next;
    }
    return tag;
  }
  return "";
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// SubRip.
//
// A cue is an optional number line, a timing line and text lines up to a blank line. A missing
// blank line is tolerated: text also ends where the next timing line (or a number line followed
// by one) starts. A line that fits nowhere is "bad"; it only matters for the error message when
// the whole file yields no cue.
Result<std::vector<TextSegment>> ParseSrt(const std::string& text, const std::string& name) {
  std::string prepared = PrepareText(text);
  std::vector<std::string_view> lines = SplitLines(prepared);
  const size_t n = lines.size();
  auto starts_cue = [&](size_t i) {
    return IsTimingLine(lines[i]) ||
           (IsCueNumber(lines[i]) && i + 1 < n && IsTimingLine(lines[i + 1]));
  };
  CueCollector cues(name);
  size_t i = 0;
  while (i < n) {
    std::string_view line = TrimInLine(lines[i]);
    if (line.empty()) {
      ++i;
    } else if (IsCueNumber(line) && i + 1 < n && !TrimInLine(lines[i + 1]).empty()) {
      ++i;  // a cue number; if the next line is not a timing line, that line is the bad one
    } else if (HasArrow(line)) {
      size_t timing_line = i;
      std::vector<std::string_view> text_lines;
      for (++i; i < n && !TrimInLine(lines[i]).empty() && !starts_cue(i); ++i) {
        text_lines.push_back(lines[i]);
      }
      cues.Add(ParseTimingLine(line), text_lines, static_cast<int>(timing_line + 1));
    } else {
      cues.NoteBadLine(static_cast<int>(i + 1));
      ++i;
    }
  }
  return cues.Finish(lines, "SubRip", /*empty_is_valid=*/false);
}

// ---------------------------------------------------------------------------------------------
// WebVTT.
//
// The "WEBVTT" header block is skipped (a missing header is tolerated). Then blocks separated by
// blank lines: NOTE, STYLE and REGION blocks are skipped; a cue block is an optional identifier
// line, a timing line with optional settings, and text lines.
Result<std::vector<TextSegment>> ParseVtt(const std::string& text, const std::string& name) {
  std::string prepared = PrepareText(text);
  std::vector<std::string_view> lines = SplitLines(prepared);
  const size_t n = lines.size();
  CueCollector cues(name);
  size_t i = 0;
  bool has_header = false;
  if (n > 0 && lines[0].substr(0, 6) == "WEBVTT" &&
      (lines[0].size() == 6 || IsSpace(lines[0][6]))) {
    has_header = true;
    while (i < n && !TrimInLine(lines[i]).empty()) ++i;
  }
  auto skip_block = [&] {
    while (i < n && !TrimInLine(lines[i]).empty()) ++i;
  };
  while (i < n) {
    std::string_view line = TrimInLine(lines[i]);
    if (line.empty()) {
      ++i;
      continue;
    }
    if (IsVttNonCueBlock(line)) {
      skip_block();
      continue;
    }
    if (!HasArrow(line) && i + 1 < n && HasArrow(lines[i + 1])) {
      ++i;  // cue identifier
      line = TrimInLine(lines[i]);
    }
    if (!HasArrow(line)) {
      cues.NoteBadLine(static_cast<int>(i + 1));
      skip_block();
      continue;
    }
    size_t timing_line = i;
    std::vector<std::string_view> text_lines;
    for (++i; i < n && !TrimInLine(lines[i]).empty() && !IsTimingLine(lines[i]); ++i) {
      text_lines.push_back(lines[i]);
    }
    cues.Add(ParseTimingLine(line), text_lines, static_cast<int>(timing_line + 1));
  }
  return cues.Finish(lines, "WebVTT", /*empty_is_valid=*/has_header);
}

Result<std::vector<TextSegment>> ReadSubtitleFile(const std::string& path,
                                                  const SubtitleReadOptions& options,
                                                  TextEncodingInfo* encoding) {
  std::string extension = Lower(std::filesystem::path(path).extension().string());
  if (extension != ".srt" && extension != ".vtt") {
    return Unsupported(path + ": not a subtitle file this reader knows (expected .srt or .vtt)");
  }
  REEL_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(path, kMaxSubtitleFileBytes));
  Result<DecodedText> decoded = DecodeText(bytes, {.fallback_encoding = options.fallback_encoding});
  if (!decoded.ok()) return decoded.status().WithPrefix(path);
  bytes.clear();
  bytes.shrink_to_fit();
  if (encoding != nullptr) *encoding = decoded->info;
  const std::string& text = decoded->text;
  REEL_ASSIGN_OR_RETURN(std::vector<TextSegment> segments,
                        extension == ".srt" ? ParseSrt(text, path) : ParseVtt(text, path));
  std::string language = LanguageFromFileName(path);
  for (TextSegment& segment : segments) segment.language = language;
  return segments;
}

// ---------------------------------------------------------------------------------------------
// Container streams.

namespace {

// Owns the rects an AVSubtitle holds once the decoder has filled it.
class ScopedSubtitle {
 public:
  ScopedSubtitle() { std::memset(&subtitle_, 0, sizeof(subtitle_)); }
  ~ScopedSubtitle() { avsubtitle_free(&subtitle_); }
  ScopedSubtitle(const ScopedSubtitle&) = delete;
  ScopedSubtitle& operator=(const ScopedSubtitle&) = delete;

  AVSubtitle* get() { return &subtitle_; }
  const AVSubtitle& operator*() const { return subtitle_; }

 private:
  AVSubtitle subtitle_;
};

// Drops the packet's reference to its data when the loop iteration ends.
class PacketUnref {
 public:
  explicit PacketUnref(AVPacket* packet) : packet_(packet) {}
  ~PacketUnref() { av_packet_unref(packet_); }
  PacketUnref(const PacketUnref&) = delete;
  PacketUnref& operator=(const PacketUnref&) = delete;

 private:
  AVPacket* packet_;
};

struct StreamDecoder {
  int index = 0;
  internal::UniqueCodecContext codec;
  AVRational time_base{0, 1};
  std::string language;
  // FFmpeg's SubRip and WebVTT decoders pass HTML entities through into their ASS output, and
  // mov_text converted from SubRip keeps them as written, so they are decoded for every text
  // codec except native ASS/SSA, which has no entities.
  bool decode_entities = true;
  int packets = 0;
  int failed = 0;
  // Subtitles whose text was not UTF-8 and how the last of them was read.
  int converted = 0;
  TextEncodingInfo conversion;
  // Segments in decode order; an end of NaN means "unknown" until the next segment starts.
  std::vector<TextSegment> segments;
};

bool IsTextSubtitleStream(const AVStream* stream) {
  if (stream->codecpar->codec_type != AVMEDIA_TYPE_SUBTITLE) return false;
  const AVCodecDescriptor* descriptor = avcodec_descriptor_get(stream->codecpar->codec_id);
  return descriptor != nullptr && (descriptor->props & AV_CODEC_PROP_TEXT_SUB) != 0;
}

// A decoded rect's bytes as UTF-8: text that is not UTF-8 is decoded like a side-car file's, and
// counted on the stream.
std::string RectText(const char* bytes, StreamDecoder& stream, const SubtitleReadOptions& options) {
  std::string_view raw(bytes);
  if (IsValidUtf8(raw)) return SanitizeUtf8(raw);
  Result<DecodedText> decoded = DecodeText(raw, {.fallback_encoding = options.fallback_encoding});
  if (!decoded.ok()) return SanitizeUtf8(raw);
  ++stream.converted;
  stream.conversion = decoded->info;
  return SanitizeUtf8(decoded->text);
}

// The plain text of a decoded subtitle: its text and ASS rects, joined with '\n'.
std::string SubtitleText(const AVSubtitle& subtitle, StreamDecoder& stream,
                         const SubtitleReadOptions& options) {
  std::string text;
  for (unsigned k = 0; k < subtitle.num_rects; ++k) {
    const AVSubtitleRect* rect = subtitle.rects[k];
    std::string part;
    if (rect->type == SUBTITLE_ASS && rect->ass != nullptr) {
      part = AssEventText(RectText(rect->ass, stream, options));
    } else if (rect->type == SUBTITLE_TEXT && rect->text != nullptr) {
      part = JoinNonEmptyLines(RectText(rect->text, stream, options));
    }
    if (stream.decode_entities) part = JoinNonEmptyLines(DecodeEntities(part));
    if (part.empty()) continue;
    if (!text.empty()) text += '\n';
    text += part;
  }
  return text;
}

// Decodes one packet (or, with `packet` null, drains a delaying decoder) into `stream`.
// Returns true if the decoder produced a subtitle.
bool DecodePacket(StreamDecoder& stream, AVPacket* packet, AVPacket* flush_packet,
                  const SubtitleReadOptions& options, size_t& text_bytes) {
  ScopedSubtitle subtitle;
  int got = 0;
  AVPacket* input = packet != nullptr ? packet : flush_packet;
  int rc = avcodec_decode_subtitle2(stream.codec.get(), subtitle.get(), &got, input);
  if (packet != nullptr) ++stream.packets;
  if (rc < 0) {
    if (packet != nullptr) ++stream.failed;
    return false;
  }
  if (got == 0) return false;
  // Times come from the packet (stream time base) plus the display offsets (ms). A flushed
  // subtitle has no packet of its own; FFmpeg then reports its pts in AV_TIME_BASE units.
  double base_s;
  double duration_s = 0;
  if (packet != nullptr) {
    int64_t pts = packet->pts != AV_NOPTS_VALUE ? packet->pts : packet->dts;
    if (pts == AV_NOPTS_VALUE) return true;  // no time: the text cannot be placed
    base_s = static_cast<double>(pts) * av_q2d(stream.time_base);
    if (packet->duration > 0) {
      duration_s = static_cast<double>(packet->duration) * av_q2d(stream.time_base);
    }
  } else {
    if ((*subtitle).pts == AV_NOPTS_VALUE) return true;
    base_s = static_cast<double>((*subtitle).pts) / AV_TIME_BASE;
  }
  std::string text = SubtitleText(*subtitle, stream, options);
  if (text.empty()) return true;  // e.g. mov_text's empty sample that clears the screen
  const AVSubtitle& s = *subtitle;
  TextSegment segment;
  segment.start_s = base_s + s.start_display_time / 1000.0;
  if (s.end_display_time > s.start_display_time &&
      s.end_display_time != std::numeric_limits<uint32_t>::max()) {
    segment.end_s = base_s + s.end_display_time / 1000.0;
  } else if (duration_s > 0) {
    segment.end_s = base_s + duration_s;
  } else {
    segment.end_s = std::numeric_limits<double>::quiet_NaN();
  }
  text_bytes += text.size();
  segment.text = std::move(text);
  segment.source = "stream:" + std::to_string(stream.index);
  segment.language = stream.language;
  stream.segments.push_back(std::move(segment));
  return true;
}

}  // namespace

Result<std::vector<TextSegment>> ExtractSubtitleStreams(
    const std::string& path, const SubtitleReadOptions& options,
    std::vector<StreamTextEncoding>* encodings) {
  const MediaLimits limits;
  internal::Deadline deadline(limits.time_limit_s);
  REEL_ASSIGN_OR_RETURN(internal::UniqueFormatContext format, internal::OpenInput(path, deadline));

  std::vector<StreamDecoder> streams;
  std::vector<int> decoder_of_stream(format->nb_streams, -1);
  for (unsigned k = 0; k < format->nb_streams; ++k) {
    AVStream* stream = format->streams[k];
    stream->discard = AVDISCARD_ALL;
    if (!IsTextSubtitleStream(stream)) continue;  // video, audio, bitmap subtitles
    // One thread: subtitle decoders are not threaded, and frame threading would only add delay.
    auto codec = internal::OpenDecoder(stream, 1, path);
    if (!codec.ok()) continue;  // no decoder in this FFmpeg build: skipped like a bitmap stream
    stream->discard = AVDISCARD_DEFAULT;
    StreamDecoder decoder;
    decoder.index = static_cast<int>(k);
    decoder.codec = std::move(codec).value();
    // FFmpeg drops a subtitle whose text is not UTF-8 ("Invalid UTF-8 in decoded subtitles
    // text"); RectText converts it instead.
    decoder.codec->sub_charenc_mode = FF_SUB_CHARENC_MODE_IGNORE;
    decoder.time_base = stream->time_base;
    decoder.decode_entities = stream->codecpar->codec_id != AV_CODEC_ID_ASS &&
                              stream->codecpar->codec_id != AV_CODEC_ID_SSA;
    const AVDictionaryEntry* language = av_dict_get(stream->metadata, "language", nullptr, 0);
    if (language != nullptr && language->value != nullptr &&
        std::strcmp(language->value, "und") != 0) {
      Result<DecodedText> decoded = DecodeText(language->value);
      decoder.language = decoded.ok() ? decoded->text : ReplaceInvalidUtf8(language->value);
    }
    decoder_of_stream[k] = static_cast<int>(streams.size());
    streams.push_back(std::move(decoder));
  }
  if (streams.empty()) return std::vector<TextSegment>();

  internal::UniquePacket packet(av_packet_alloc());
  internal::UniquePacket flush_packet(av_packet_alloc());
  if (!packet || !flush_packet) return Internal(path + ": out of memory");
  size_t text_bytes = 0;
  while (true) {
    int rc = av_read_frame(format.get(), packet.get());
    if (deadline.Expired()) {
      return LimitExceeded(path + ": time limit of " + std::to_string(deadline.seconds()) +
                           " s exceeded while reading subtitles");
    }
    if (rc == AVERROR_EOF) break;
    if (rc == AVERROR(EAGAIN)) continue;
    if (rc < 0) {
      return CorruptData(path + ": cannot read packets (" + internal::AvErrorString(rc) + ")");
    }
    PacketUnref unref(packet.get());
    if (packet->stream_index < 0 ||
        static_cast<size_t>(packet->stream_index) >= decoder_of_stream.size() ||
        decoder_of_stream[packet->stream_index] < 0) {
      continue;
    }
    DecodePacket(streams[decoder_of_stream[packet->stream_index]], packet.get(), flush_packet.get(),
                 options, text_bytes);
    if (text_bytes > kMaxStreamTextBytes) {
      return LimitExceeded(path + ": subtitle text exceeds " + std::to_string(kMaxStreamTextBytes) +
                           " bytes");
    }
  }

  std::vector<TextSegment> all;
  for (StreamDecoder& stream : streams) {
    if (stream.codec->codec->capabilities & AV_CODEC_CAP_DELAY) {
      // An empty packet asks a delaying decoder for what it still holds.
      for (int k = 0; k < 1000; ++k) {
        if (!DecodePacket(stream, nullptr, flush_packet.get(), options, text_bytes)) break;
      }
    }
    if (stream.converted > 0 && encodings != nullptr) {
      encodings->push_back(
          {.stream_index = stream.index, .info = stream.conversion, .cues = stream.converted});
    }
    if (stream.failed >= limits.min_errors_for_rate &&
        stream.failed > limits.max_error_rate * stream.packets) {
      return CorruptData(path + ": stream " + std::to_string(stream.index) + ": " +
                         std::to_string(stream.failed) + " of " + std::to_string(stream.packets) +
                         " subtitle packets could not be decoded");
    }
    // An unknown end is the next segment's start in the same stream, or the start itself.
    std::stable_sort(
        stream.segments.begin(), stream.segments.end(),
        [](const TextSegment& a, const TextSegment& b) { return a.start_s < b.start_s; });
    for (size_t k = 0; k < stream.segments.size(); ++k) {
      TextSegment& segment = stream.segments[k];
      if (!std::isnan(segment.end_s)) continue;
      segment.end_s = k + 1 < stream.segments.size()
                          ? std::max(segment.start_s, stream.segments[k + 1].start_s)
                          : segment.start_s;
    }
    std::move(stream.segments.begin(), stream.segments.end(), std::back_inserter(all));
  }
  std::stable_sort(all.begin(), all.end(), [](const TextSegment& a, const TextSegment& b) {
    return a.start_s < b.start_s;
  });
  return all;
}

}  // namespace reel::pipeline
