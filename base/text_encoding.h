// Reading text files whose encoding nobody wrote down (subtitles, documents): DecodeText turns the
// bytes into valid UTF-8 and says which encoding it read (byte-order mark, UTF-16's zero bytes,
// UTF-8, mostly UTF-8, else a fallback, Windows-1252 by default, converted with iconv). Bytes that
// cannot be decoded become U+FFFD and are counted. Thread-safe (one iconv handle per call).
// The order of the decision: base/README.md, "Text encoding".
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
