#include "pipeline/internal/truncation.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "pipeline/internal/ffmpeg.h"

namespace reel::pipeline::internal {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

std::string Seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f s", s);
  return text;
}

std::optional<DeclaredSize> DeclaredSizeOf(const std::string& path, ContainerFamily family,
                                           int64_t file_size) {
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) return std::nullopt;
  return ParseDeclaredSize(family, file_size, [&](int64_t offset, size_t n, uint8_t* out) {
    return offset >= 0 && offset + static_cast<int64_t>(n) <= file_size &&
           fseeko(file.get(), offset, SEEK_SET) == 0 && std::fread(out, 1, n, file.get()) == n;
  });
}

std::string DeclaresMore(int64_t file_size, const DeclaredSize& declared) {
  return "the file has " + std::to_string(file_size) + " bytes, its " + declared.what +
         " declares " + std::to_string(declared.bytes) + " (" +
         std::to_string(declared.bytes - file_size) + " missing)";
}

}  // namespace

std::string CutShortHint(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec || size < 12) return "";
  const int64_t file_size = static_cast<int64_t>(size);
  unsigned char head[12] = {};
  {
    std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
    if (!file || std::fread(head, 1, sizeof(head), file.get()) != sizeof(head)) return "";
  }
  ContainerFamily family = ContainerFamily::kOther;
  if (std::memcmp(head, "\x1A\x45\xDF\xA3", 4) == 0) {
    family = ContainerFamily::kMatroska;
  } else if (std::memcmp(head, "RIFF", 4) == 0 && std::memcmp(head + 8, "AVI ", 4) == 0) {
    family = ContainerFamily::kAvi;
  } else if (std::memcmp(head + 4, "ftyp", 4) == 0 || std::memcmp(head + 4, "moov", 4) == 0 ||
             std::memcmp(head + 4, "mdat", 4) == 0 || std::memcmp(head + 4, "wide", 4) == 0 ||
             std::memcmp(head + 4, "free", 4) == 0) {
    family = ContainerFamily::kMp4;
  } else if (std::memcmp(head, "OggS", 4) == 0) {
    family = ContainerFamily::kOgg;
  }
  if (family == ContainerFamily::kOther) return "";
  std::optional<DeclaredSize> declared = DeclaredSizeOf(path, family, file_size);
  if (!declared || declared->bytes <= file_size) return "";
  return DeclaresMore(file_size, *declared);
}

ContainerFamily FamilyOf(const AVFormatContext* format) {
  const std::string name = format->iformat->name;
  if (name.find("matroska") != std::string::npos) return ContainerFamily::kMatroska;
  if (name == "avi") return ContainerFamily::kAvi;
  if (name == "ogg") return ContainerFamily::kOgg;
  if (name.find("mp4") != std::string::npos || name.find("mov") != std::string::npos) {
    return ContainerFamily::kMp4;
  }
  return ContainerFamily::kOther;
}

Truncation CheckTruncation(AVFormatContext* format, const std::string& path, int stream_index,
                           const ReadOutcome& read) {
  Truncation t;
  std::vector<std::string> parts;
  if (!read.read_error.empty()) {
    t.truncated = true;
    parts.push_back("reading stopped: " + read.read_error);
  }
  const ContainerFamily family = FamilyOf(format);
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  const int64_t file_size = ec ? -1 : static_cast<int64_t>(size);

  std::optional<DeclaredSize> declared;
  if (file_size > 0 && family != ContainerFamily::kOther) {
    declared = DeclaredSizeOf(path, family, file_size);
  }
  if (declared && declared->bytes > file_size) {
    t.truncated = true;
    t.missing_bytes = declared->bytes - file_size;
    parts.push_back(DeclaresMore(file_size, *declared));
  }
  if (declared && declared->open_streams > 0) {
    // Ogg keeps no index or total: a file cut between pages is told by its streams' last pages,
    // each flagged end-of-stream by a finished writer, missing.
    t.truncated = true;
    const int n = declared->open_streams;
    parts.push_back(std::to_string(n) + (n == 1 ? " Ogg stream has" : " Ogg streams have") +
                    " no last page (end-of-stream flag): the file stops before " +
                    (n == 1 ? "it ends" : "they end"));
  }

  // Index entries whose data lies past the end: MP4 samples, AVI index entries, Matroska cues.
  std::optional<double> first_missing_s;
  if (file_size > 0) {
    for (unsigned s = 0; s < format->nb_streams; ++s) {
      if (stream_index >= 0 && static_cast<int>(s) != stream_index) continue;
      AVStream* stream = format->streams[s];
      const int entries = avformat_index_get_entries_count(stream);
      int listed = 0, past_end = 0;
      for (int i = 0; i < entries; ++i) {
        const AVIndexEntry* e = avformat_index_get_entry(stream, i);
        if (e == nullptr || e->size <= 0 || (e->flags & AVINDEX_DISCARD_FRAME)) continue;
        ++listed;
        if (e->pos < 0 || e->pos + e->size <= file_size) continue;
        ++past_end;
        double ts = static_cast<double>(e->timestamp) * av_q2d(stream->time_base);
        if (!first_missing_s || ts < *first_missing_s) first_missing_s = ts;
      }
      if (past_end == 0) continue;
      t.truncated = true;
      const std::string kind = stream->codecpar->codec_type == AVMEDIA_TYPE_VIDEO ? "frames"
                               : stream->codecpar->codec_type == AVMEDIA_TYPE_AUDIO
                                   ? "audio packets"
                                   : "packets";
      if (family == ContainerFamily::kMp4) {
        parts.push_back("stream " + std::to_string(s) + ": " + std::to_string(listed - past_end) +
                        " of the " + std::to_string(listed) + " " + kind +
                        " listed are in the file");
      } else {
        parts.push_back("stream " + std::to_string(s) + ": " + std::to_string(past_end) + " of " +
                        std::to_string(listed) +
                        (family == ContainerFamily::kMatroska ? " cue points" : " index entries") +
                        " point past the end of the file");
      }
    }
  }

  // The container's duration against the end of what was read.
  std::optional<double> declared_end_s;
  if (format->duration != AV_NOPTS_VALUE && format->duration > 0 &&
      format->duration_estimation_method != AVFMT_DURATION_FROM_BITRATE) {
    const int64_t start = format->start_time == AV_NOPTS_VALUE ? 0 : format->start_time;
    declared_end_s = static_cast<double>(start + format->duration) / AV_TIME_BASE;
  }
  if (family == ContainerFamily::kAvi) {
    // A cut AVI loses its index, and FFmpeg then times the file by what it finds; the stream
    // header still lists every frame slot (dropped frames included), which times the whole.
    // Used for how much is missing only, never to decide that something is.
    for (unsigned s = 0; s < format->nb_streams; ++s) {
      const AVStream* stream = format->streams[s];
      if (stream_index >= 0 && static_cast<int>(s) != stream_index) continue;
      if (stream->codecpar->codec_type != AVMEDIA_TYPE_VIDEO || stream->nb_frames <= 0 ||
          stream->avg_frame_rate.num <= 0 || stream->avg_frame_rate.den <= 0) {
        continue;
      }
      const double start =
          stream->start_time == AV_NOPTS_VALUE
              ? 0.0
              : static_cast<double>(stream->start_time) * av_q2d(stream->time_base);
      const double slots_end =
          start + static_cast<double>(stream->nb_frames) / av_q2d(stream->avg_frame_rate);
      declared_end_s = std::max(declared_end_s.value_or(slots_end), slots_end);
    }
  }
  const std::optional<double> read_end_s = read.end_s ? read.end_s : first_missing_s;
  if (!t.truncated && family == ContainerFamily::kMatroska && !declared && declared_end_s &&
      read.end_s) {
    const double duration = static_cast<double>(format->duration) / AV_TIME_BASE;
    const double short_by = *declared_end_s - *read.end_s;
    if (short_by > 1.0 && short_by > 0.02 * duration) t.truncated = true;
  }
  if (t.truncated && declared_end_s && read_end_s && *declared_end_s > *read_end_s) {
    t.missing_s = *declared_end_s - *read_end_s;
    parts.push_back(std::string(read.what) + " ends at " + Seconds(*read_end_s) + " of the " +
                    Seconds(*declared_end_s) + " the container declares (" + Seconds(t.missing_s) +
                    " missing)");
  }
  for (size_t i = 0; i < parts.size(); ++i) t.reason += (i ? "; " : "") + parts[i];
  return t;
}

}  // namespace reel::pipeline::internal
