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

// Enough top-level structures for any real file; a longer chain is not walked (unknown).
constexpr int kMaxHeaders = 1 << 20;

uint32_t BigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}
uint32_t LittleEndian32(const uint8_t* p) {
  return (uint32_t{p[3]} << 24) | (uint32_t{p[2]} << 16) | (uint32_t{p[1]} << 8) | p[0];
}

bool PrintableTag(const uint8_t* p) {
  return std::all_of(p, p + 4, [](uint8_t c) { return c >= 0x20 && c <= 0x7e; });
}

// MP4/MOV: size(4) type(4) [largesize(8) when size == 1]; size 0 runs to the end of the file.
std::optional<DeclaredSize> Mp4Size(int64_t file_size, const ReadAt& read) {
  int64_t offset = 0;
  std::string last;
  for (int n = 0; n < kMaxHeaders; ++n) {
    if (file_size - offset < 8) return DeclaredSize{offset, "MP4 box '" + last + "'"};
    uint8_t header[16];
    if (!read(offset, 8, header)) return std::nullopt;
    if (!PrintableTag(header + 4)) {
      if (n == 0) return std::nullopt;
      return DeclaredSize{offset, "MP4 box '" + last + "'"};  // trailing bytes, not a box
    }
    last.assign(reinterpret_cast<const char*>(header + 4), 4);
    uint64_t size = BigEndian32(header);
    uint64_t header_size = 8;
    if (size == 0) return DeclaredSize{file_size, "MP4 box '" + last + "'"};
    if (size == 1) {
      header_size = 16;
      if (file_size - offset < 16) return DeclaredSize{offset + 16, "MP4 box '" + last + "'"};
      if (!read(offset + 8, 8, header + 8)) return std::nullopt;
      size = (uint64_t{BigEndian32(header + 8)} << 32) | BigEndian32(header + 12);
    }
    if (size < header_size || size > static_cast<uint64_t>(INT64_MAX - offset)) {
      return n == 0 ? std::nullopt
                    : std::optional<DeclaredSize>(DeclaredSize{offset, "MP4 box '" + last + "'"});
    }
    offset += static_cast<int64_t>(size);
    if (offset >= file_size) return DeclaredSize{offset, "MP4 box '" + last + "'"};
  }
  return std::nullopt;
}

// AVI: 'RIFF' size 'AVI ', then OpenDML's 'RIFF' size 'AVIX' chunks. A chunk's data is padded to
// an even length; the pad byte of the last chunk is not required.
std::optional<DeclaredSize> AviSize(int64_t file_size, const ReadAt& read) {
  int64_t offset = 0;
  for (int n = 0; n < kMaxHeaders; ++n) {
    uint8_t header[12];
    if (file_size - offset < 12 || !read(offset, 12, header) ||
        std::memcmp(header, "RIFF", 4) != 0 ||
        (std::memcmp(header + 8, "AVI ", 4) != 0 && std::memcmp(header + 8, "AVIX", 4) != 0)) {
      if (n == 0) return std::nullopt;
      return DeclaredSize{offset, "RIFF chunks"};
    }
    const int64_t size = LittleEndian32(header + 4);
    const int64_t end = offset + 8 + size;
    if (end >= file_size)
      return DeclaredSize{end, n == 0 ? "RIFF 'AVI ' chunk" : "RIFF 'AVIX' chunk"};
    offset = end + (size & 1);
  }
  return std::nullopt;
}

// EBML variable-length integers. An element ID keeps its length marker (1-4 bytes); a size drops
// it (1-8 bytes), and all value bits set means "unknown".
bool ReadVint(int64_t file_size, const ReadAt& read, int64_t* offset, int max_length,
              bool keep_marker, uint64_t* value, bool* unknown) {
  uint8_t first;
  if (*offset >= file_size || !read(*offset, 1, &first) || first == 0) return false;
  int length = 1;
  while (!(first & (0x80 >> (length - 1)))) ++length;
  if (length > max_length) return false;
  uint8_t bytes[8] = {first};
  if (length > 1 && (file_size - *offset < length || !read(*offset + 1, length - 1, bytes + 1))) {
    return false;
  }
  uint64_t v = keep_marker ? first : (first & (0xff >> length));
  bool all_ones = (first & (0xff >> length)) == (0xff >> length);
  for (int i = 1; i < length; ++i) {
    v = (v << 8) | bytes[i];
    all_ones = all_ones && bytes[i] == 0xff;
  }
  *offset += length;
  *value = v;
  if (unknown != nullptr) *unknown = all_ones;
  return true;
}

std::optional<DeclaredSize> MatroskaSize(int64_t file_size, const ReadAt& read) {
  constexpr uint64_t kEbml = 0x1A45DFA3, kSegment = 0x18538067, kVoid = 0xEC;
  int64_t offset = 0;
  bool first = true;
  for (int n = 0; n < 64; ++n) {
    uint64_t id = 0, size = 0;
    bool unknown = false;
    if (!ReadVint(file_size, read, &offset, 4, true, &id, nullptr)) return std::nullopt;
    if (first && id != kEbml) return std::nullopt;
    first = false;
    if (!ReadVint(file_size, read, &offset, 8, false, &size, &unknown)) return std::nullopt;
    if (id == kSegment) {
      if (unknown || size > static_cast<uint64_t>(INT64_MAX - offset)) return std::nullopt;
      return DeclaredSize{offset + static_cast<int64_t>(size), "Matroska segment"};
    }
    if ((id != kEbml && id != kVoid) || unknown ||
        size > static_cast<uint64_t>(INT64_MAX - offset)) {
      return std::nullopt;
    }
    offset += static_cast<int64_t>(size);
  }
  return std::nullopt;
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

std::string Seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f s", s);
  return text;
}

}  // namespace

ContainerFamily FamilyOf(const AVFormatContext* format) {
  const std::string name = format->iformat->name;
  if (name.find("matroska") != std::string::npos) return ContainerFamily::kMatroska;
  if (name == "avi") return ContainerFamily::kAvi;
  if (name.find("mp4") != std::string::npos || name.find("mov") != std::string::npos) {
    return ContainerFamily::kMp4;
  }
  return ContainerFamily::kOther;
}

std::optional<DeclaredSize> ParseDeclaredSize(ContainerFamily family, int64_t file_size,
                                              const ReadAt& read) {
  if (file_size <= 0) return std::nullopt;
  switch (family) {
    case ContainerFamily::kMatroska:
      return MatroskaSize(file_size, read);
    case ContainerFamily::kAvi:
      return AviSize(file_size, read);
    case ContainerFamily::kMp4:
      return Mp4Size(file_size, read);
    case ContainerFamily::kOther:
      break;
  }
  return std::nullopt;
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
    std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
    if (file) {
      declared = ParseDeclaredSize(family, file_size, [&](int64_t offset, size_t n, uint8_t* out) {
        return offset >= 0 && offset + static_cast<int64_t>(n) <= file_size &&
               fseeko(file.get(), offset, SEEK_SET) == 0 && std::fread(out, 1, n, file.get()) == n;
      });
    }
  }
  if (declared && declared->bytes > file_size) {
    t.truncated = true;
    t.missing_bytes = declared->bytes - file_size;
    parts.push_back("the file has " + std::to_string(file_size) + " bytes, its " + declared->what +
                    " declares " + std::to_string(declared->bytes) + " (" +
                    std::to_string(t.missing_bytes) + " missing)");
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
