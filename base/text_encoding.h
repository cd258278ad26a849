// Reading text files whose encoding nobody wrote down (subtitles, documents).
//
// DecodeText turns the bytes of a text file into valid UTF-8 and says which encoding it read
// them as, deciding in this order:
//   1. a byte-order mark: UTF-8 (EF BB BF), UTF-32LE/BE (FF FE 00 00 / 00 00 FE FF), UTF-16LE/BE
//      (FF FE / FE FF); the mark is removed;
//   2. no mark, but the NUL-byte pattern of UTF-16 text (mostly ASCII, so every other byte is 0:
//      at least 30% of the odd bytes zero and none of the even ones, or the reverse): UTF-16LE/BE;
//   3. valid UTF-8 (plain ASCII included): UTF-8;
//   4. mostly UTF-8: at least four well-formed multi-byte sequences for each ill-formed one (a
//      UTF-8 file with a few damaged bytes; legacy 8-bit text almost never contains even one
//      well-formed multi-byte sequence): UTF-8, the bad bytes replaced by U+FFFD;
//   5. otherwise the fallback encoding (by default Windows-1252, the usual encoding of western
//      subtitle files, and a superset of the printable part of ISO-8859-1).
// Bytes that cannot be decoded in the chosen encoding become U+FFFD and are counted.
//
// Encodings are converted with the C library's iconv, so the fallback may be any name it knows
// ("windows-1251", "iso-8859-15", "cp1250", "gbk", "shift_jis", ...); "utf-8" as the fallback
// means "never guess: replace bad bytes with U+FFFD". Thread-safe (one iconv handle per call).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"

namespace reel {

// Windows-1252, spelled as job files and messages spell it.
inline constexpr std::string_view kDefaultFallbackEncoding = "windows-1252";

enum class EncodingBasis {
  kByteOrderMark,  // a BOM said so
  kUtf16Pattern,   // no BOM; the zero bytes of UTF-16 text
  kValidUtf8,      // every byte is well-formed UTF-8
  kMostlyUtf8,     // UTF-8 with a few ill-formed bytes (replaced)
  kFallback,       // not UTF-8: read as the fallback encoding
};

struct TextEncodingInfo {
  std::string encoding = "utf-8";  // "utf-8", "utf-16le", "utf-16be", "utf-32le", "utf-32be", or
                                   // the fallback's name in lower case
  EncodingBasis basis = EncodingBasis::kValidUtf8;
  size_t replaced = 0;  // undecodable bytes or sequences replaced by U+FFFD

  // True when the text was not plain UTF-8 (converted from another encoding, or repaired), which
  // is worth telling the user.
  bool Noteworthy() const;
  // For people, e.g. "not valid UTF-8; read as windows-1252 (the fallback encoding)",
  // "UTF-16LE (byte-order mark)", "UTF-8 with 3 ill-formed bytes replaced by U+FFFD".
  std::string Describe() const;
};

struct DecodedText {
  std::string text;  // valid UTF-8, no byte-order mark
  TextEncodingInfo info;
};

struct TextDecodeOptions {
  std::string fallback_encoding = std::string(kDefaultFallbackEncoding);
};

// Decodes `bytes` as described above. Errors: kInvalidArgument if the fallback encoding is
// needed and unknown (CheckTextEncoding finds that out beforehand).
Result<DecodedText> DecodeText(std::string_view bytes, const TextDecodeOptions& options = {});

// OK if `name` is an encoding DecodeText can use as the fallback; kInvalidArgument naming it
// otherwise.
Status CheckTextEncoding(std::string_view name);

}  // namespace reel
