// What the frame index learns from the bitstream where the container's flags and times do not
// describe what a decoder does: presentation order, real start points, what a decoder must see
// first. Ownership and threads: one BitstreamScan per index pass, one PackedVops per decoder, each
// on one thread; they borrow nothing. Details: pipeline/README.md, "Bitstream scan".
#pragma once

#include <cstdint>
#include <vector>

#include "pipeline/frame_index.h"
#include "pipeline/internal/ffmpeg.h"

namespace reel::pipeline::internal {

// How FFmpeg's MPEG-4 decoder reads packed B-frames (announced by the encoder's user data
// "DivX...p"): one VOP per packet, the one held back from the packet before if there is one,
// else the packet's first. What follows the VOP it decoded is held back for the next packet when
// it starts with an I- or B-VOP: a B-VOP packed behind a P-VOP, or the whole packet when the held
// VOP was decoded instead. Reel hands each packet's VOP to the decoder on its own, so the decoder
// holds nothing back itself and skipping a B-VOP loses nothing. A run that starts at a keyframe
// starts with nothing held (Reset).
class PackedVops {
 public:
  struct Vop {
    const uint8_t* data = nullptr;  // into the packet or the held bytes; valid until Next
    int size = 0;
    bool held = false;  // held back from the packet before
  };
  Vop Next(const uint8_t* data, int size);
  void Reset() { held_.clear(); }

 private:
  std::vector<uint8_t> held_;
  std::vector<uint8_t> current_;
};

// Whether `data` (MPEG-4 Part 2 extradata or a packet) holds DivX user data with the "packed"
// mark, read as FFmpeg's decoder reads it.
bool Mpeg4SaysPacked(const uint8_t* data, int size);

class BitstreamScan {
 public:
  explicit BitstreamScan(const AVStream* stream);

  // Every packet of the stream, in decode order (the i-th call is the index's packet i).
  void Add(const AVPacket* packet);

  // Corrects `index` (packets timed, segment offsets applied, frames not yet built): keyframe
  // flags, presentation times and order, and what decoding needs (FrameIndex::order_source,
  // packed_bframes, priming_packet).
  void Apply(FrameIndex& index);

  // How many packets added so far the decoder outputs no picture for (Picture::empty, and
  // MPEG-4 VOPs that are not coded), as `ffprobe -count_frames` leaves them out of its count.
  int64_t not_shown() const { return not_shown_; }

 private:
  struct Picture {
    int order = 0;            // H.264/HEVC: picture order count; MPEG-1/2/4: picture type decoded
    bool parsed = false;      // the packet was understood (else nothing is known)
    bool start = true;        // a decoder may start here
    bool shown = true;        // the decoder outputs a picture for it
    bool closed_gop = false;  // MPEG-1/2: in a closed GOP
    // Holds no picture (an MPEG-4 VOP that is not coded and not a packed placeholder, an H.264 or
    // HEVC packet without a slice, MPEG-1/2 without a picture): decoded, never shown.
    bool empty = false;
  };
  void AddPictureOrderCount(const AVPacket* packet);
  void AddMpeg4(const AVPacket* packet);
  void AddMpeg12(const AVPacket* packet);
  std::vector<int> OrderCountPresentation() const;
  std::vector<int> PictureTypePresentation() const;

  AVCodecID codec_;
  int reorder_depth_ = 0;  // the stream's reorder delay in pictures (codecpar video_delay)
  UniqueCodecContext parser_codec_;
  UniqueParserContext parser_;
  std::vector<Picture> pictures_;
  std::vector<uint8_t> first_packet_;
  int64_t last_pts_ = 0;
  bool decode_ordered_times_ = true;  // every time so far >= the one before, in decode order
  // MPEG-1/2/4 Part 2.
  bool has_b_ = false;           // a B-picture was seen
  bool closed_gop_ = false;      // MPEG-1/2: the last GOP header said closed
  bool packed_ = false;          // MPEG-4: the encoder's user data says "packed"
  int time_increment_bits_ = 0;  // MPEG-4: from the VOL header (0: none seen yet)
  int nal_length_size_ = 0;      // H.264/HEVC: avcC/hvcC NAL length prefix (0: Annex B)
  int64_t not_shown_ = 0;
  PackedVops vops_;
};

}  // namespace reel::pipeline::internal
