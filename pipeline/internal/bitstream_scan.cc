#include "pipeline/internal/bitstream_scan.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <map>

namespace reel::pipeline::internal {
namespace {

// Picture types, as MPEG-4 Part 2 codes them.
constexpr int kTypeI = 0;
constexpr int kTypeP = 1;
constexpr int kTypeB = 2;
// The most pictures an H.264 or HEVC decoder holds back for reordering.
constexpr int kMaxReorderDepth = 16;
// FFmpeg's MPEG-4 decoder holds back what follows a VOP only when it is longer than this.
constexpr int kMinHeldBytes = 7;

// Where the first start code 00 00 01 `code` at or after `from` is (-1: none). The byte after it
// must be there too.
int FindStartCode(const uint8_t* data, int size, int from, uint8_t code) {
  for (int i = std::max(from, 0); i + 4 < size; ++i) {
    if (data[i] == 0 && data[i + 1] == 0 && data[i + 2] == 1 && data[i + 3] == code) return i;
  }
  return -1;
}

int FindVop(const uint8_t* data, int size, int from) {
  return FindStartCode(data, size, from, 0xB6);
}

// Bits, most significant first; reading past the end gives -1 and stays there.
class BitReader {
 public:
  BitReader(const uint8_t* data, int size) : data_(data), bits_(int64_t{size} * 8) {}
  int Read(int n) {
    int value = Peek(n);
    pos_ = value < 0 ? bits_ : pos_ + n;
    return value;
  }
  int Peek(int n) const {
    if (n < 0 || n > 30 || pos_ + n > bits_) return -1;
    int value = 0;
    for (int64_t at = pos_; at < pos_ + n; ++at) {
      value = (value << 1) | ((data_[at >> 3] >> (7 - (at & 7))) & 1);
    }
    return value;
  }

 private:
  const uint8_t* data_;
  int64_t bits_;
  int64_t pos_ = 0;
};

// The width of vop_time_increment, from the first VOL header in `data` (0: none, or unreadable),
// read as FFmpeg's decoder reads it.
int Mpeg4TimeIncrementBits(const uint8_t* data, int size) {
  int at = -1;
  for (int i = 0; i + 4 < size; ++i) {
    if (data[i] == 0 && data[i + 1] == 0 && data[i + 2] == 1 && (data[i + 3] & 0xF0) == 0x20) {
      at = i + 4;
      break;
    }
  }
  if (at < 0) return 0;
  BitReader r(data + at, size - at);
  r.Read(1);  // random_accessible_vol
  const int type = r.Read(8);
  if (type == 0x30 || type == 0x31) return 0;  // studio profiles: another header
  int version = 1;
  if (r.Read(1) == 1) {
    version = r.Read(4);
    r.Read(3);
  }
  if (r.Read(4) == 15) r.Read(16);  // extended pixel aspect ratio
  if (r.Read(1) == 1) {             // vol_control_parameters
    r.Read(3);                      // chroma_format, low_delay
    if (r.Read(1) == 1) {
      for (int bits : {16, 16, 16, 3, 12, 16}) r.Read(bits);  // vbv parameters and markers
    }
  }
  if (r.Read(2) == 3 && version != 1) r.Read(4);  // grayscale shape extension
  r.Read(1);
  const int resolution = r.Read(16);
  if (resolution <= 0) return 0;
  int bits = 1;
  while ((1 << bits) < resolution) ++bits;  // av_log2(resolution - 1) + 1
  return bits;
}

// Whether the VOP at `data` (its start code) is coded. A VOP that is not (an N-VOP placeholder)
// makes the decoder output nothing. Unreadable headers count as coded.
bool Mpeg4VopCoded(const uint8_t* data, int size, int time_increment_bits) {
  BitReader r(data + 4, size - 4);
  const int type = r.Read(2);
  int ones = 0;
  while (r.Peek(1) == 1 && ones++ < 64) r.Read(1);  // modulo_time_base
  if (r.Read(1) < 0) return true;                   // its closing 0
  r.Read(1);                                        // marker
  int bits = time_increment_bits;
  // No VOL, or one that does not fit: guess the width from where the markers fall, as FFmpeg does.
  if (bits == 0 || r.Peek(bits + 1) < 0 || (r.Peek(bits + 1) & 1) == 0) {
    for (bits = 1; bits < 16; ++bits) {
      if (type == kTypeP || type == 3) {
        if ((r.Peek(bits + 6) & 0x37) == 0x30) break;
      } else if ((r.Peek(bits + 5) & 0x1F) == 0x18) {
        break;
      }
    }
  }
  r.Read(bits);
  r.Read(1);  // marker
  return r.Read(1) != 0;
}

// Whether an H.264 or HEVC packet holds no slice at all (only an end of sequence or stream, an
// access unit delimiter, SEI or parameter sets: a 5-byte end-of-sequence sample at the end of an
// MP4): the decoder outputs no picture for it. `length_size` is the NAL length prefix of
// avcC/hvcC streams (1-4), or 0 for Annex B start codes. Data that cannot be walked to its end
// counts as holding a slice.
bool HoldsNoSlice(AVCodecID codec, const uint8_t* data, int size, int length_size) {
  auto is_slice = [&](uint8_t header) {
    return codec == AV_CODEC_ID_H264 ? (header & 0x1F) >= 1 && (header & 0x1F) <= 5
                                     : ((header >> 1) & 0x3F) < 32;
  };
  int nal_units = 0;
  if (length_size > 0) {
    int at = 0;
    while (at < size) {
      if (at + length_size >= size) return false;
      int64_t length = 0;
      for (int i = 0; i < length_size; ++i) length = (length << 8) | data[at + i];
      at += length_size;
      if (length <= 0 || length > size - at) return false;
      if (is_slice(data[at])) return false;
      ++nal_units;
      at += static_cast<int>(length);
    }
  } else {
    // Annex B: the packet starts with a start code, else it is not what it seems.
    if (size < 4 || data[0] != 0 || data[1] != 0 ||
        (data[2] != 1 && (data[2] != 0 || data[3] != 1))) {
      return false;
    }
    for (int i = 0; i + 3 < size; ++i) {
      if (data[i] == 0 && data[i + 1] == 0 && data[i + 2] == 1) {
        if (is_slice(data[i + 3])) return false;
        ++nal_units;
        i += 2;
      }
    }
  }
  return nal_units > 0;
}

// The NAL length prefix size of an avcC or hvcC configuration record (0: Annex B start codes).
int NalLengthSize(AVCodecID codec, const uint8_t* extradata, int size) {
  if (extradata == nullptr || size < 1 || extradata[0] != 1) return 0;
  if (codec == AV_CODEC_ID_H264) return size > 4 ? (extradata[4] & 3) + 1 : 0;
  return size > 21 ? (extradata[21] & 3) + 1 : 0;
}

}  // namespace

PackedVops::Vop PackedVops::Next(const uint8_t* data, int size) {
  // A packet that starts with a visual object sequence drops what is held.
  if (!held_.empty()) {
    for (int i = 0; i + 3 < size; ++i) {
      if (data[i] == 0 && data[i + 1] == 0 && data[i + 2] == 1) {
        if (data[i + 3] == 0xB0) held_.clear();
        break;
      }
    }
  }
  auto holds = [&](int vop) {
    return vop >= 0 && size - vop > kMinHeldBytes && (data[vop + 4] & 0x40) == 0;  // I or B
  };
  if (!held_.empty()) {
    current_.swap(held_);
    held_.clear();
    // The decoder read none of this packet: all of it is held when it starts with an I or B-VOP.
    if (holds(FindVop(data, size, 0))) held_.assign(data, data + size);
    return {current_.data(), static_cast<int>(current_.size()), true};
  }
  const int first = FindVop(data, size, 0);
  const int second = first >= 0 ? FindVop(data, size, first + 4) : -1;
  if (holds(second)) held_.assign(data + second, data + size);
  return {data, second >= 0 ? second : size, false};
}

bool Mpeg4SaysPacked(const uint8_t* data, int size) {
  bool packed = false;
  for (int at = FindStartCode(data, size, 0, 0xB2); at >= 0;
       at = FindStartCode(data, size, at + 4, 0xB2)) {
    char text[256];
    int n = 0;
    for (int i = at + 4; i < size && n < 255; ++i, ++n) {
      if (data[i] == 0 && (i + 1 >= size || data[i + 1] == 0)) break;  // the next start code
      text[n] = static_cast<char>(data[i]);
    }
    text[n] = 0;
    int version = 0, build = 0;
    char last = 0;
    int e = std::sscanf(text, "DivX%dBuild%d%c", &version, &build, &last);
    if (e < 2) e = std::sscanf(text, "DivX%db%d%c", &version, &build, &last);
    if (e >= 2) packed = e == 3 && last == 'p';
  }
  return packed;
}

BitstreamScan::BitstreamScan(const AVStream* stream)
    : codec_(stream->codecpar->codec_id), reorder_depth_(stream->codecpar->video_delay) {
  const AVCodecParameters* par = stream->codecpar;
  if (codec_ == AV_CODEC_ID_MPEG4 && par->extradata != nullptr) {
    packed_ = Mpeg4SaysPacked(par->extradata, par->extradata_size);
    time_increment_bits_ = Mpeg4TimeIncrementBits(par->extradata, par->extradata_size);
  }
  if (codec_ != AV_CODEC_ID_H264 && codec_ != AV_CODEC_ID_HEVC) return;
  nal_length_size_ = NalLengthSize(codec_, par->extradata, par->extradata_size);
  parser_.reset(av_parser_init(codec_));
  parser_codec_.reset(avcodec_alloc_context3(nullptr));
  if (!parser_ || !parser_codec_ ||
      avcodec_parameters_to_context(parser_codec_.get(), stream->codecpar) < 0) {
    parser_.reset();
    return;
  }
  parser_->flags |= PARSER_FLAG_COMPLETE_FRAMES;
}

void BitstreamScan::Add(const AVPacket* packet) {
  pictures_.emplace_back();
  const int64_t pts = packet->pts != AV_NOPTS_VALUE ? packet->pts : packet->dts;
  if (pts == AV_NOPTS_VALUE || (pictures_.size() > 1 && pts < last_pts_)) {
    decode_ordered_times_ = false;  // the container's times reorder: they are presentation times
  }
  last_pts_ = pts;
  if (codec_ == AV_CODEC_ID_H264 && pictures_.size() == 1 && packet->size > 0) {
    first_packet_.assign(packet->data, packet->data + packet->size);
  }
  if (codec_ == AV_CODEC_ID_MPEG4) {
    AddMpeg4(packet);
  } else if (codec_ == AV_CODEC_ID_MPEG1VIDEO || codec_ == AV_CODEC_ID_MPEG2VIDEO) {
    AddMpeg12(packet);
  } else if (codec_ == AV_CODEC_ID_H264 || codec_ == AV_CODEC_ID_HEVC) {
    if (packet->size > 0 && HoldsNoSlice(codec_, packet->data, packet->size, nal_length_size_)) {
      pictures_.back().empty = true;
      pictures_.back().shown = false;
    } else if (parser_) {
      AddPictureOrderCount(packet);
    }
  }
  if (!pictures_.back().shown) ++not_shown_;
}

void BitstreamScan::AddPictureOrderCount(const AVPacket* packet) {
  // Once the times are known to be presentation times, only start points need checking.
  if (!decode_ordered_times_ && !(packet->flags & AV_PKT_FLAG_KEY)) return;
  uint8_t* out = nullptr;
  int out_size = 0;
  parser_->output_picture_number = INT_MIN;  // left alone when no picture is found
  av_parser_parse2(parser_.get(), parser_codec_.get(), &out, &out_size, packet->data, packet->size,
                   AV_NOPTS_VALUE, AV_NOPTS_VALUE, 0);
  if (parser_->output_picture_number == INT_MIN) return;
  Picture& p = pictures_.back();
  p.parsed = true;
  p.order = parser_->output_picture_number;
  p.start = parser_->key_frame == 1;
}

// Follows the decoder through packed B-frames: which VOP each packet has it decode.
void BitstreamScan::AddMpeg4(const AVPacket* packet) {
  if (pictures_.size() == 1) {
    packed_ = packed_ || Mpeg4SaysPacked(packet->data, packet->size);
    if (time_increment_bits_ == 0) {
      time_increment_bits_ = Mpeg4TimeIncrementBits(packet->data, packet->size);
    }
  }
  Picture& p = pictures_.back();
  p.parsed = true;
  const PackedVops::Vop vop = packed_ ? vops_.Next(packet->data, packet->size)
                                      : PackedVops::Vop{packet->data, packet->size, false};
  const int at = FindVop(vop.data, vop.size, 0);
  if (at < 0) {
    p.order = -1;
    p.start = p.shown = false;
    p.empty = true;
    return;
  }
  p.order = vop.data[at + 4] >> 6;  // 0 I, 1 P, 2 B, 3 S (a reference, like P)
  p.start = !vop.held;
  p.shown = Mpeg4VopCoded(vop.data + at, vop.size - at, time_increment_bits_);
  p.empty = !p.shown;
  has_b_ = has_b_ || p.order == kTypeB;
}

// MPEG-1/2: the first picture's coding type, and whether its GOP is closed (B-pictures at the start
// of a closed GOP need no earlier reference).
void BitstreamScan::AddMpeg12(const AVPacket* packet) {
  Picture& p = pictures_.back();
  const int gop = FindStartCode(packet->data, packet->size, 0, 0xB8);
  if (gop >= 0) {
    BitReader r(packet->data + gop + 4, packet->size - gop - 4);
    r.Read(25);  // time_code
    const int closed = r.Read(1);
    if (closed >= 0) closed_gop_ = closed == 1;
  }
  const int picture = FindStartCode(packet->data, packet->size, 0, 0x00);
  if (picture < 0) {
    // Headers or a sequence end code alone: the decoder outputs nothing for it.
    if (packet->size > 0) {
      p.parsed = true;
      p.empty = true;
      p.shown = false;
      p.order = -1;
    }
    return;
  }
  BitReader r(packet->data + picture + 4, packet->size - picture - 4);
  r.Read(10);  // temporal_reference
  const int type = r.Read(3);
  if (type < 1) return;
  p.parsed = true;
  p.order = type == 3 ? kTypeB : type == 2 ? kTypeP : kTypeI;  // D-pictures are intra
  p.closed_gop = closed_gop_;
  has_b_ = has_b_ || p.order == kTypeB;
}

// The decoder's output order: pictures wait in a reorder buffer and leave lowest order count
// first once more than the stream's reorder depth wait. A start point whose count is below the
// highest of its sequence starts a new one (an IDR: counts restart), and everything waiting
// leaves first. The depth is the stream's, or what the counts need if that is more.
std::vector<int> BitstreamScan::OrderCountPresentation() const {
  const int n = static_cast<int>(pictures_.size());
  std::vector<char> new_sequence(n, 0);
  int highest = INT_MIN;
  int depth = std::max(reorder_depth_, 0);
  for (int i = 0; i < n; ++i) {
    const Picture& p = pictures_[i];
    if (p.empty) continue;
    if (i > 0 && p.start && p.order < highest) {
      new_sequence[i] = 1;
      highest = INT_MIN;
    }
    highest = std::max(highest, p.order);
    // Pictures decoded before this one, in its sequence, that are shown after it.
    int later = 0;
    for (int j = i - 1; j >= 0 && j >= i - 2 * kMaxReorderDepth; --j) {
      if (pictures_[j].empty) continue;
      if (pictures_[j].order > p.order) ++later;
      if (new_sequence[j]) break;
    }
    depth = std::max(depth, later);
  }
  depth = std::min(depth, kMaxReorderDepth);
  std::vector<int> shown;
  shown.reserve(n);
  std::multimap<int, int> waiting;  // order count -> packet
  auto leave = [&] {
    shown.push_back(waiting.begin()->second);
    waiting.erase(waiting.begin());
  };
  for (int i = 0; i < n; ++i) {
    if (pictures_[i].empty) continue;
    if (new_sequence[i]) {
      while (!waiting.empty()) leave();
    }
    waiting.emplace(pictures_[i].order, i);
    if (static_cast<int>(waiting.size()) > depth) leave();
  }
  while (!waiting.empty()) leave();
  return shown;
}

// MPEG-1/2/4 Part 2 decoders' output order: a B-picture is output when decoded, a reference
// picture (I, P, S) when the next one arrives; B-pictures before the second reference picture are
// never output, unless their GOP is closed (MPEG-1/2).
std::vector<int> BitstreamScan::PictureTypePresentation() const {
  std::vector<int> shown;
  int references = 0;
  int held = -1;
  for (int i = 0; i < static_cast<int>(pictures_.size()); ++i) {
    const Picture& p = pictures_[i];
    if (!p.shown || p.order < 0) continue;
    if (p.order == kTypeB) {
      if (references >= 2 || (references >= 1 && p.closed_gop)) shown.push_back(i);
      continue;
    }
    if (held >= 0) shown.push_back(held);
    held = i;
    ++references;
  }
  if (held >= 0) shown.push_back(held);
  return shown;
}

void BitstreamScan::Apply(FrameIndex& index) {
  const int n = static_cast<int>(index.packets.size());
  if (static_cast<int>(pictures_.size()) != n || n == 0) return;
  index.priming_packet = std::move(first_packet_);
  const bool by_types = codec_ == AV_CODEC_ID_MPEG4 || codec_ == AV_CODEC_ID_MPEG1VIDEO ||
                        codec_ == AV_CODEC_ID_MPEG2VIDEO;
  const bool all_parsed = std::all_of(pictures_.begin(), pictures_.end(),
                                      [](const Picture& p) { return p.parsed || p.empty; });
  // A packet without a picture is decoded (it may end a sequence) but never shown.
  for (int i = 0; i < n; ++i) {
    if (pictures_[i].empty) index.packets[i].discarded = true;
  }

  // Start points: H.264 and HEVC per the parser; packed MPEG-4 where an I-VOP is decoded from its
  // own packet.
  for (int i = 0; i < n; ++i) {
    const Picture& p = pictures_[i];
    if (!p.parsed) continue;
    if (parser_ && !p.start) index.packets[i].keyframe = false;
    if (packed_ && (!p.start || p.order != kTypeI)) index.packets[i].keyframe = false;
  }
  index.packed_bframes = packed_;

  // Presentation order from the bitstream: always for packed MPEG-4 (FFmpeg guesses its times
  // from the packets as they are packed); otherwise where the container's times follow decode
  // order although the pictures are reordered.
  bool from_bitstream = packed_;
  if (decode_ordered_times_ && all_parsed) {
    if (parser_) from_bitstream = true;  // counts in decode order mean no reordering
    if (by_types && has_b_) from_bitstream = true;
  }
  if (!index.has_timestamps || !from_bitstream) return;

  const std::vector<int> shown = by_types ? PictureTypePresentation() : OrderCountPresentation();
  std::vector<char> is_shown(n, 0);
  bool reordered = false;
  for (size_t k = 0; k < shown.size(); ++k) {
    is_shown[shown[k]] = 1;
    if (k > 0 && shown[k] < shown[k - 1]) reordered = true;
  }
  if (!reordered && static_cast<int>(shown.size()) == n) return;

  // Each segment's times, sorted, go to its shown pictures in the order they are shown.
  const int segments = static_cast<int>(index.segment_offsets.size());
  std::vector<std::vector<int>> by_segment(segments);
  for (int i : shown) {
    const IndexedPacket& p = index.packets[i];
    if (!p.discarded) by_segment[p.segment].push_back(i);
  }
  for (const std::vector<int>& packets : by_segment) {
    std::vector<int64_t> times;
    times.reserve(packets.size());
    for (int i : packets) times.push_back(index.packets[i].pts);
    std::sort(times.begin(), times.end());
    for (size_t k = 0; k < packets.size(); ++k) index.packets[packets[k]].pts = times[k];
  }
  // A picture the decoder never outputs is decoded (others may refer to it) but not shown.
  for (int i = 0; i < n; ++i) {
    if (!is_shown[i]) index.packets[i].discarded = true;
  }
  index.order_source = std::string(avcodec_get_name(codec_)) + (packed_ ? "-packed" : "");
}

}  // namespace reel::pipeline::internal
