// Text shown on a terminal. A model's answer, a subtitle or a stored error message can hold
// control characters; written to a terminal as they are, ESC sequences move the cursor, set the
// window title, recolour or hide what follows, and some terminals answer queries as if typed.
// Like `ls` and `git`, Reel shows such characters as visible escapes when it writes to a
// terminal (and in its display formats: the table format, `reel status`), and keeps them as they
// are in JSON, CSV and output that goes to a pipe or a file. Pure functions; thread-safe.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace reel {

// `text` with each control character written as `\xHH` (uppercase hex, one per byte): C0 codes
// (U+0000-U+001F) except tab, line feed and a carriage return before a line feed, DEL (U+007F),
// C1 codes (U+0080-U+009F, the UTF-8 bytes of each), and every byte that is not part of
// well-formed UTF-8 (a lone 0x9B is CSI to an 8-bit terminal). Everything else is kept.
std::string EscapeControlCharacters(std::string_view text);

// Whether `text` holds anything EscapeControlCharacters would escape.
bool HasControlCharacters(std::string_view text);

// Whether `stream` is a terminal (isatty on its descriptor).
bool IsTerminal(std::FILE* stream);

// Writes `text` to `stream` whole (NUL bytes too), escaped when `escape` is set.
void WriteText(std::FILE* stream, std::string_view text, bool escape);

}  // namespace reel
