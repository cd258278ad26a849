// What the frame index learns from the bitstream itself, where the container's packet flags and
// times do not describe what a decoder does:
// - Presentation order. The n-th picture a decoder outputs is the n-th presented frame. When a
//   container's times follow decode order although the pictures are reordered (H.264 or HEVC in
//   MP4 without composition offsets, or in AVI, whose times FFmpeg guesses), they are decode
//   times: the order comes from the pictures' order counts (FFmpeg's parser), and the stream's
//   times, sorted, are given out in that order. MPEG-4 Part 2 "packed B-frames" (DivX/Xvid in AVI)
//   are unpacked first (what mpeg4_unpack_bframes does, and the decoder is then fed): a B-VOP
//   packed behind a P-VOP belongs to the next packet, an N-VOP placeholder carries the B-VOP
//   before it, and the order follows from the picture types (a B-VOP is shown when decoded, an I-
//   or P-VOP when the next one arrives).
// - Start points. A keyframe flag on a picture a decoder cannot start from is dropped: H.264 or
//   HEVC without an IDR, IRAP or recovery point, or a packed MPEG-4 packet whose unpacked picture
//   is carried over from the packet before.
// - What a decoder must see first. H.264 decoders learn the encoder's version (x264's SEI) only
//   from the stream's first access unit, and turn on workarounds for old encoders' bugs with it:
//   the first packet is kept so that decoders starting later can be shown it.
//
// Ownership and threads: one BitstreamScan per index pass, on one thread; it borrows nothing.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "pipeline/frame_index.h"
#include "pipeline/internal/ffmpeg.h"

namespace reel::pipeline::internal {

class BitstreamScan {
 public:
  explicit BitstreamScan(const AVStream* stream);

  // Every packet of the stream, in decode order (the i-th call is the index's packet i).
  void Add(const AVPacket* packet);

  // Corrects `index` (packets timed, segment offsets applied, frames not yet built): keyframe
  // flags, presentation times and order, and what decoding needs (FrameIndex::order_source,
  // packed_bframes, priming_packet).
  void Apply(FrameIndex& index);

 private:
  struct Picture {
    int order = 0;       // H.264/HEVC: picture order count; MPEG-4: unpacked VOP type
    bool parsed = false;  // the parser understood the packet (else nothing is known)
    bool start = true;    // a decoder may start here
    bool shown = true;    // the decoder outputs a picture for it
  };
  void AddPictureOrderCount(const AVPacket* packet);
  void AddMpeg4(const AVPacket* packet);
  std::vector<int> OrderCountPresentation() const;
  std::vector<int> Mpeg4Presentation() const;

  AVCodecID codec_;
  int reorder_depth_ = 0;  // the stream's reorder delay in pictures (codecpar video_delay)
  UniqueCodecContext parser_codec_;
  UniqueParserContext parser_;
  std::vector<Picture> pictures_;
  std::vector<uint8_t> first_packet_;
  int64_t last_pts_ = 0;
  bool decode_ordered_times_ = true;  // every time so far >= the one before, in decode order
  // MPEG-4: the VOP type packed behind the last one, carried into the next packet (-1: none).
  int carried_vop_ = -1;
  bool packed_ = false;
};

// The mpeg4_unpack_bframes filter for `stream`, initialised.
Result<UniqueBsfContext> OpenUnpackFilter(const AVStream* stream, const std::string& path);

}  // namespace reel::pipeline::internal
