// UTF-8 at the boundary: text from outside is made valid UTF-8 before it enters JSON output or the
// database. Text: ReplaceInvalidUtf8 (U+FFFD, lossy); names and paths: EscapeInvalidUtf8 (`\xHH`,
// reversible, a database key); messages that may quote a name: SafeUtf8. Well-formed means the
// Unicode standard's Table 3-7. Pure functions; thread-safe.
// Which to use when: base/README.md, "UTF-8".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace reel {

// True if `bytes` is well-formed UTF-8.
bool IsValidUtf8(std::string_view bytes);

// The length of the longest well-formed prefix of `bytes` (bytes.size() when all of it is).
// 32 bytes a step with AVX2 where the CPU has it (Keiser and Lemire's validator).
size_t ValidUtf8Prefix(std::string_view bytes);

// `bytes` with each maximal ill-formed subsequence replaced by U+FFFD. `replaced`, if given, is
// set to the number of replacements made.
std::string ReplaceInvalidUtf8(std::string_view bytes, size_t* replaced = nullptr);

// The reversible escape of a name (see above). Always valid UTF-8.
std::string EscapeInvalidUtf8(std::string_view bytes);

// How Reel shows and stores a file name or path (JSON output, database keys, progress lines):
// EscapeInvalidUtf8. The one boundary function for names; opening the file uses the bytes.
inline std::string DisplayPath(std::string_view path) { return EscapeInvalidUtf8(path); }

// Undoes EscapeInvalidUtf8: `\\` becomes `\`, `\xHH` (either case) the byte 0xHH; any other
// backslash is kept as it is. UnescapeInvalidUtf8(EscapeInvalidUtf8(b)) == b for every b.
std::string UnescapeInvalidUtf8(std::string_view text);

// `text` itself when it is valid UTF-8, else EscapeInvalidUtf8(text). For messages.
std::string SafeUtf8(std::string_view text);

// Appends the UTF-8 encoding of `code_point` (which must be a scalar value: <= U+10FFFF and not
// a surrogate; anything else appends U+FFFD).
void AppendUtf8(char32_t code_point, std::string& out);

// The length of the well-formed UTF-8 sequence that starts at bytes[pos], or 0 if none does
// (then `*ill_formed`, if given, is the length of the maximal ill-formed subpart, at least 1).
size_t Utf8SequenceLength(std::string_view bytes, size_t pos, size_t* ill_formed = nullptr);

}  // namespace reel
