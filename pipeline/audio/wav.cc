#include "pipeline/audio/wav.h"

#include <cstring>

namespace reel::pipeline {
namespace {

void Put32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void Put16(std::string& s, uint16_t v) {
  s.push_back(static_cast<char>(v & 0xff));
  s.push_back(static_cast<char>(v >> 8));
}
uint32_t Get32(std::string_view b, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(b[at + i]);
  return v;
}
uint16_t Get16(std::string_view b, size_t at) {
  return static_cast<uint16_t>(static_cast<uint8_t>(b[at]) |
                               (static_cast<uint8_t>(b[at + 1]) << 8));
}

}  // namespace

std::string EncodeWav(const int16_t* samples, size_t count, int sample_rate) {
  const uint32_t data_bytes = static_cast<uint32_t>(count * 2);
  std::string out;
  out.reserve(44 + data_bytes);
  out += "RIFF";
  Put32(out, 36 + data_bytes);
  out += "WAVEfmt ";
  Put32(out, 16);
  Put16(out, 1);  // PCM
  Put16(out, 1);  // mono
  Put32(out, static_cast<uint32_t>(sample_rate));
  Put32(out, static_cast<uint32_t>(sample_rate) * 2);
  Put16(out, 2);   // block align
  Put16(out, 16);  // bits per sample
  out += "data";
  Put32(out, data_bytes);
  for (size_t i = 0; i < count; ++i) Put16(out, static_cast<uint16_t>(samples[i]));
  return out;
}

Result<WavAudio> ParseWav(std::string_view b, const std::string& name) {
  if (b.size() < 12 || b.substr(0, 4) != "RIFF" || b.substr(8, 4) != "WAVE") {
    return CorruptData(name + ": not a RIFF/WAVE file");
  }
  WavAudio wav;
  bool have_fmt = false;
  size_t at = 12;
  while (at + 8 <= b.size()) {
    const std::string_view id = b.substr(at, 4);
    const uint32_t size = Get32(b, at + 4);
    const size_t body = at + 8;
    if (size > b.size() - body) {
      return CorruptData(name + ": chunk '" + std::string(id) + "' of " + std::to_string(size) +
                         " bytes runs past the end of the file");
    }
    if (id == "fmt ") {
      if (size < 16) return CorruptData(name + ": fmt chunk too short");
      const uint16_t format = Get16(b, body);
      wav.channels = Get16(b, body + 2);
      wav.sample_rate = static_cast<int>(Get32(b, body + 4));
      const uint16_t bits = Get16(b, body + 14);
      if (format != 1 || bits != 16) {
        return CorruptData(name + ": not 16-bit PCM (format " + std::to_string(format) + ", " +
                           std::to_string(bits) + " bits)");
      }
      if (wav.channels == 0 || wav.sample_rate <= 0) {
        return CorruptData(name + ": no channels or no sample rate");
      }
      have_fmt = true;
    } else if (id == "data") {
      if (!have_fmt) return CorruptData(name + ": data chunk before the fmt chunk");
      if (size % (2u * wav.channels) != 0) {
        return CorruptData(name + ": data chunk is not a whole number of sample frames");
      }
      wav.samples.resize(size / 2);
      for (size_t i = 0; i < wav.samples.size(); ++i) {
        wav.samples[i] = static_cast<int16_t>(Get16(b, body + 2 * i));
      }
      return wav;
    }
    at = body + size + (size & 1);  // chunks are padded to an even size
  }
  return CorruptData(name + (have_fmt ? ": no data chunk" : ": no fmt chunk"));
}

}  // namespace reel::pipeline
