// The GPT-2 byte-to-character mapping of ByteLevel components: every byte becomes one printable
// character (printable Latin-1 bytes stand for themselves, the others move to U+0100 and up).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace reel::llm::internal {

// The character that stands for byte `b`.
uint32_t ByteToChar(uint8_t b);

// The byte a character stands for, or -1 if it stands for none.
int CharToByte(uint32_t c);

// Appends the mapped form (UTF-8) of every byte of `bytes`.
void AppendByteLevel(std::string_view bytes, std::string& out);

// The UTF-8 of the mapped character of each byte (precomputed, 1 or 2 bytes each).
std::string_view ByteLevelUtf8(uint8_t b);

}  // namespace reel::llm::internal
