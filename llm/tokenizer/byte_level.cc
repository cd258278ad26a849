#include "llm/tokenizer/byte_level.h"

#include <array>

#include "llm/tokenizer/utf8.h"

namespace reel::llm::internal {
namespace {

struct Tables {
  std::array<uint32_t, 256> to_char{};
  std::array<std::string, 256> utf8;
  Tables() {
    std::array<bool, 256> direct{};
    for (int b = '!'; b <= '~'; ++b) direct[b] = true;
    for (int b = 0xA1; b <= 0xAC; ++b) direct[b] = true;
    for (int b = 0xAE; b <= 0xFF; ++b) direct[b] = true;
    uint32_t n = 0;
    for (int b = 0; b < 256; ++b) to_char[b] = direct[b] ? static_cast<uint32_t>(b) : 256 + n++;
    for (int b = 0; b < 256; ++b) AppendUtf8(utf8[b], to_char[b]);
  }
};

const Tables& GetTables() {
  static const Tables tables;
  return tables;
}

}  // namespace

uint32_t ByteToChar(uint8_t b) { return GetTables().to_char[b]; }

int CharToByte(uint32_t c) {
  if (c < 256) {
    bool direct = (c >= '!' && c <= '~') || (c >= 0xA1 && c <= 0xAC) || (c >= 0xAE && c <= 0xFF);
    return direct ? static_cast<int>(c) : -1;
  }
  if (c < 256 + 68) {
    const Tables& t = GetTables();
    for (int b = 0; b < 256; ++b) {
      if (t.to_char[b] == c) return b;
    }
  }
  return -1;
}

void AppendByteLevel(std::string_view bytes, std::string& out) {
  const Tables& t = GetTables();
  for (unsigned char b : bytes) out.append(t.utf8[b]);
}

std::string_view ByteLevelUtf8(uint8_t b) { return GetTables().utf8[b]; }

}  // namespace reel::llm::internal
