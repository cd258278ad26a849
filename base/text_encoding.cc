#include "base/text_encoding.h"

#include <iconv.h>

#include <algorithm>
#include <cerrno>
#include <memory>

#include "base/strings.h"
#include "base/utf8.h"

namespace reel {
namespace {

bool IsUtf8Name(std::string_view name) {
  const std::string lower = Lower(name);
  return lower == "utf-8" || lower == "utf8";
}

struct IconvCloser {
  void operator()(iconv_t cd) const { iconv_close(cd); }
};
using UniqueIconv = std::unique_ptr<std::remove_pointer_t<iconv_t>, IconvCloser>;

// iconv_open's failure value is (iconv_t)-1, not null.
UniqueIconv OpenToUtf8(const std::string& from) {
  iconv_t cd = iconv_open("UTF-8", from.c_str());
  if (cd == reinterpret_cast<iconv_t>(-1)) return nullptr;
  return UniqueIconv(cd);
}

// Converts `bytes` from `encoding` to UTF-8 with iconv; a byte it cannot convert becomes U+FFFD
// (and is skipped), as does an incomplete sequence at the end.
Result<std::string> ConvertToUtf8(std::string_view bytes, const std::string& encoding,
                                  size_t* replaced) {
  UniqueIconv cd = OpenToUtf8(encoding);
  if (!cd) return InvalidArgument("unknown text encoding '" + encoding + "'");
  std::string out;
  out.reserve(bytes.size() + bytes.size() / 2 + 16);
  char buffer[16384];
  // iconv's input pointer is not const-qualified; it does not write through it.
  char* in = const_cast<char*>(bytes.data());
  size_t in_left = bytes.size();
  while (in_left > 0) {
    char* outp = buffer;
    size_t out_left = sizeof(buffer);
    const size_t rc = iconv(cd.get(), &in, &in_left, &outp, &out_left);
    out.append(buffer, static_cast<size_t>(outp - buffer));
    if (rc != static_cast<size_t>(-1)) continue;
    if (errno == E2BIG) continue;  // the buffer is full; go round again
    // EILSEQ (not a character of this encoding) or EINVAL (cut short at the end): one U+FFFD,
    // skip one byte (EINVAL: the rest), and start afresh.
    out += "\xEF\xBF\xBD";
    ++*replaced;
    if (errno == EINVAL) break;
    ++in;
    --in_left;
    iconv(cd.get(), nullptr, nullptr, nullptr, nullptr);  // reset the shift state
  }
  // Flush any shift state (stateful encodings such as ISO-2022-JP).
  char* outp = buffer;
  size_t out_left = sizeof(buffer);
  iconv(cd.get(), nullptr, nullptr, &outp, &out_left);
  out.append(buffer, static_cast<size_t>(outp - buffer));
  // A converter may still pass something ill-formed through (a broken table, a lone surrogate
  // from UTF-16): the result is guaranteed valid.
  if (!IsValidUtf8(out)) {
    size_t more = 0;
    out = ReplaceInvalidUtf8(out, &more);
    *replaced += more;
  }
  return out;
}

// The UTF-16 byte order implied by the zero bytes of mostly-ASCII UTF-16 text, or "".
std::string Utf16Pattern(std::string_view bytes) {
  const size_t n = std::min<size_t>(bytes.size(), 4096) & ~size_t{1};
  if (n < 4) return "";
  size_t zero_even = 0, zero_odd = 0;
  for (size_t i = 0; i < n; i += 2) {
    zero_even += bytes[i] == '\0';
    zero_odd += bytes[i + 1] == '\0';
  }
  const size_t pairs = n / 2;
  if (zero_odd * 10 >= pairs * 3 && zero_even == 0) return "utf-16le";
  if (zero_even * 10 >= pairs * 3 && zero_odd == 0) return "utf-16be";
  return "";
}

}  // namespace

bool TextEncodingInfo::Noteworthy() const { return encoding != "utf-8" || replaced > 0; }

std::string TextEncodingInfo::Describe() const {
  std::string upper = encoding;
  if (encoding.starts_with("utf-")) {
    for (char& c : upper) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  }
  std::string text;
  switch (basis) {
    case EncodingBasis::kByteOrderMark:
      text = upper + " (byte-order mark)";
      break;
    case EncodingBasis::kUtf16Pattern:
      text = upper + " (no byte-order mark; recognised by its zero bytes)";
      break;
    case EncodingBasis::kValidUtf8:
      text = "UTF-8";
      break;
    case EncodingBasis::kMostlyUtf8:
      text = "UTF-8";
      break;
    case EncodingBasis::kFallback:
      text = encoding == "utf-8"
                 ? "not valid UTF-8 (the fallback encoding is utf-8)"
                 : "not valid UTF-8; read as " + encoding + " (the fallback encoding)";
      break;
  }
  if (replaced > 0) {
    text += ", " + std::to_string(replaced) +
            (replaced == 1 ? " undecodable byte sequence" : " undecodable byte sequences") +
            " replaced by U+FFFD";
  }
  return text;
}

Status CheckTextEncoding(std::string_view name) {
  if (name.empty()) return InvalidArgument("the text encoding is empty");
  if (IsUtf8Name(name)) return Status::Ok();
  if (!OpenToUtf8(std::string(name))) {
    return InvalidArgument("unknown text encoding '" + SafeUtf8(name) +
                           "' (use a name iconv knows, e.g. windows-1252, iso-8859-15, "
                           "windows-1251, shift_jis; `iconv -l` lists them)");
  }
  return Status::Ok();
}

Result<DecodedText> DecodeText(std::string_view bytes, const TextDecodeOptions& options) {
  DecodedText result;
  TextEncodingInfo& info = result.info;
  auto starts_with = [&](std::string_view prefix) {
    return bytes.substr(0, prefix.size()) == prefix;
  };
  using namespace std::string_view_literals;
  std::string bom_encoding;
  size_t bom_size = 0;
  if (starts_with("\xEF\xBB\xBF"sv)) {
    bom_encoding = "utf-8", bom_size = 3;
  } else if (starts_with("\xFF\xFE\x00\x00"sv)) {
    bom_encoding = "utf-32le", bom_size = 4;
  } else if (starts_with("\x00\x00\xFE\xFF"sv)) {
    bom_encoding = "utf-32be", bom_size = 4;
  } else if (starts_with("\xFF\xFE"sv)) {
    bom_encoding = "utf-16le", bom_size = 2;
  } else if (starts_with("\xFE\xFF"sv)) {
    bom_encoding = "utf-16be", bom_size = 2;
  }
  if (!bom_encoding.empty()) {
    info.basis = EncodingBasis::kByteOrderMark;
    info.encoding = bom_encoding;
    bytes.remove_prefix(bom_size);
    if (bom_encoding == "utf-8") {
      result.text = ReplaceInvalidUtf8(bytes, &info.replaced);
    } else {
      REEL_ASSIGN_OR_RETURN(result.text, ConvertToUtf8(bytes, bom_encoding, &info.replaced));
    }
    return result;
  }
  if (std::string utf16 = Utf16Pattern(bytes); !utf16.empty()) {
    info.basis = EncodingBasis::kUtf16Pattern;
    info.encoding = utf16;
    REEL_ASSIGN_OR_RETURN(result.text, ConvertToUtf8(bytes, utf16, &info.replaced));
    return result;
  }
  // Count well-formed multi-byte sequences and ill-formed subparts.
  size_t multibyte = 0, ill_formed = 0;
  for (size_t pos = 0; pos < bytes.size();) {
    if (static_cast<unsigned char>(bytes[pos]) < 0x80) {
      ++pos;
      continue;
    }
    size_t bad = 0;
    const size_t length = Utf8SequenceLength(bytes, pos, &bad);
    if (length > 0) {
      ++multibyte;
      pos += length;
    } else {
      ++ill_formed;
      pos += bad;
    }
  }
  if (ill_formed == 0) {
    info.basis = EncodingBasis::kValidUtf8;
    result.text = std::string(bytes);
    return result;
  }
  if (multibyte >= 4 * ill_formed || IsUtf8Name(options.fallback_encoding)) {
    info.basis =
        multibyte >= 4 * ill_formed ? EncodingBasis::kMostlyUtf8 : EncodingBasis::kFallback;
    result.text = ReplaceInvalidUtf8(bytes, &info.replaced);
    return result;
  }
  info.basis = EncodingBasis::kFallback;
  info.encoding = Lower(options.fallback_encoding);
  REEL_ASSIGN_OR_RETURN(result.text,
                        ConvertToUtf8(bytes, options.fallback_encoding, &info.replaced));
  return result;
}

}  // namespace reel
