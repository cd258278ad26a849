#include "pipeline/internal/bitstream_scan.h"

#include <algorithm>
#include <climits>
#include <map>

namespace reel::pipeline::internal {
namespace {

// An MPEG-4 packet this small is an N-VOP placeholder (FFmpeg's MAX_NVOP_SIZE, the size its
// decoder and mpeg4_unpack_bframes go by).
constexpr int kMaxNvopSize = 19;
constexpr int kVopI = 0;
constexpr int kVopB = 2;
// The most pictures an H.264 or HEVC decoder holds back for reordering.
constexpr int kMaxReorderDepth = 16;

// The coding types (0 I, 1 P, 2 B, 3 S) of the VOPs in an MPEG-4 Part 2 packet, in order.
std::vector<int> VopTypes(const uint8_t* data, int size) {
  std::vector<int> types;
  for (int i = 0; i + 3 < size; ++i) {
    if (data[i] != 0 || data[i + 1] != 0 || data[i + 2] != 1 || data[i + 3] != 0xB6) continue;
    // A start code at the very end has no type: count it as a P-VOP, as a decoder would fail it.
    types.push_back(i + 4 < size ? data[i + 4] >> 6 : 1);
    i += 3;
  }
  return types;
}

}  // namespace

BitstreamScan::BitstreamScan(const AVStream* stream)
    : codec_(stream->codecpar->codec_id), reorder_depth_(stream->codecpar->video_delay) {
  if (codec_ != AV_CODEC_ID_H264 && codec_ != AV_CODEC_ID_HEVC) return;
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
  if (codec_ == AV_CODEC_ID_H264 && pictures_.size() == 1 && packet->size > 0) {
    first_packet_.assign(packet->data, packet->data + packet->size);
  }
  if (codec_ == AV_CODEC_ID_MPEG4) {
    AddMpeg4(packet);
  } else if (parser_) {
    AddPictureOrderCount(packet);
  }
}

void BitstreamScan::AddPictureOrderCount(const AVPacket* packet) {
  const int64_t pts = packet->pts != AV_NOPTS_VALUE ? packet->pts : packet->dts;
  if (pts == AV_NOPTS_VALUE || (pictures_.size() > 1 && pts < last_pts_)) {
    decode_ordered_times_ = false;  // the container's times reorder: they are presentation times
  }
  last_pts_ = pts;
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

// Follows mpeg4_unpack_bframes: a packet with two VOPs keeps the first and carries the second
// into the next packet with one VOP, whose own VOP is carried on in turn, unless it is an N-VOP
// placeholder, which is dropped.
void BitstreamScan::AddMpeg4(const AVPacket* packet) {
  Picture& p = pictures_.back();
  p.parsed = true;
  const std::vector<int> vops = VopTypes(packet->data, packet->size);
  if (vops.size() >= 2) {
    packed_ = true;
    p.order = vops[0];
    carried_vop_ = vops[1];  // one carried before is lost, as in the filter
  } else if (vops.size() == 1 && carried_vop_ >= 0) {
    p.order = carried_vop_;
    p.start = false;
    carried_vop_ = packet->size <= kMaxNvopSize ? -1 : vops[0];
  } else if (vops.size() == 1) {
    p.order = vops[0];
    p.shown = packet->size > kMaxNvopSize;  // an N-VOP on its own shows nothing
  } else {
    p.order = -1;
    p.shown = false;
  }
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
    if (i > 0 && p.start && p.order < highest) {
      new_sequence[i] = 1;
      highest = INT_MIN;
    }
    highest = std::max(highest, p.order);
    // Pictures decoded before this one, in its sequence, that are shown after it.
    int later = 0;
    for (int j = i - 1; j >= 0 && j >= i - 2 * kMaxReorderDepth; --j) {
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
    if (new_sequence[i]) {
      while (!waiting.empty()) leave();
    }
    waiting.emplace(pictures_[i].order, i);
    if (static_cast<int>(waiting.size()) > depth) leave();
  }
  while (!waiting.empty()) leave();
  return shown;
}

// MPEG-4 Part 2 (unpacked): a B-VOP is output when decoded, an I-, P- or S-VOP when the next one
// of those arrives; B-VOPs before the second reference picture are never output.
std::vector<int> BitstreamScan::Mpeg4Presentation() const {
  std::vector<int> shown;
  int references = 0;
  int held = -1;
  for (int i = 0; i < static_cast<int>(pictures_.size()); ++i) {
    const Picture& p = pictures_[i];
    if (!p.shown) continue;
    if (p.order == kVopB) {
      if (references >= 2) shown.push_back(i);
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
  if (static_cast<int>(pictures_.size()) != n) return;
  index.priming_packet = std::move(first_packet_);

  const bool by_order_count = parser_ && decode_ordered_times_ && n > 0 &&
                              std::all_of(pictures_.begin(), pictures_.end(),
                                          [](const Picture& p) { return p.parsed; });
  if (codec_ == AV_CODEC_ID_MPEG4 && !packed_) return;
  for (int i = 0; i < n; ++i) {
    const Picture& p = pictures_[i];
    if (!p.parsed) continue;
    const bool start = codec_ == AV_CODEC_ID_MPEG4 ? p.start && p.order == kVopI : p.start;
    if (!start) index.packets[i].keyframe = false;
  }
  if (codec_ == AV_CODEC_ID_MPEG4) index.packed_bframes = true;
  if (!index.has_timestamps || (codec_ != AV_CODEC_ID_MPEG4 && !by_order_count)) return;

  const std::vector<int> shown =
      codec_ == AV_CODEC_ID_MPEG4 ? Mpeg4Presentation() : OrderCountPresentation();
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
  index.order_source = codec_ == AV_CODEC_ID_MPEG4 ? "mpeg4-packed"
                       : codec_ == AV_CODEC_ID_H264 ? "h264"
                                                     : "hevc";
}

Result<UniqueBsfContext> OpenUnpackFilter(const AVStream* stream, const std::string& path) {
  const AVBitStreamFilter* filter = av_bsf_get_by_name("mpeg4_unpack_bframes");
  if (filter == nullptr) {
    return Unsupported(path + ": packed MPEG-4 B-frames need FFmpeg's mpeg4_unpack_bframes");
  }
  AVBSFContext* raw = nullptr;
  if (av_bsf_alloc(filter, &raw) < 0) return Internal(path + ": out of memory");
  UniqueBsfContext context(raw);
  if (avcodec_parameters_copy(context->par_in, stream->codecpar) < 0) {
    return Internal(path + ": out of memory");
  }
  context->time_base_in = stream->time_base;
  int rc = av_bsf_init(context.get());
  if (rc < 0) {
    return CorruptData(path + ": cannot unpack MPEG-4 B-frames (" + AvErrorString(rc) + ")");
  }
  return context;
}

}  // namespace reel::pipeline::internal
