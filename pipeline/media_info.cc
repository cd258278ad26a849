#include "pipeline/media_info.h"

namespace reel::pipeline {

const char* StreamTypeName(StreamType type) {
  switch (type) {
    case StreamType::kVideo:
      return "video";
    case StreamType::kAudio:
      return "audio";
    case StreamType::kSubtitle:
      return "subtitle";
    case StreamType::kData:
      return "data";
    case StreamType::kAttachment:
      return "attachment";
    case StreamType::kUnknown:
      return "unknown";
  }
  return "unknown";
}

const char* FactSourceName(FactSource source) {
  switch (source) {
    case FactSource::kStream:
      return "stream";
    case FactSource::kContainer:
      return "container";
    case FactSource::kPacketIndex:
      return "packet_index";
    case FactSource::kUnknown:
      return "unknown";
  }
  return "unknown";
}

}  // namespace reel::pipeline
