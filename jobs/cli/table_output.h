// Printing query results (storage::Table) in the formats every reporting command offers:
//   table  aligned columns for people; long cells cut to `max_cell_width` characters with "…",
//          line breaks shown as "⏎", other control characters as `\xHH` (to a terminal or
//          not: base/terminal_text.h); numbers right-aligned and written as people read them
//          (FormatReadableNumber); NULL as an empty cell; a row count at the end.
//   md     a GitHub-flavoured Markdown table: every cell whole (line breaks as <br>, `|`
//          escaped), numbers as in table, NULL empty.
//   csv    RFC 4180: a header row, CRLF line ends, fields with a comma, quote or line break
//          quoted and quotes doubled; NULL is an empty field. Text as stored (control
//          characters too; not valid UTF-8 escaped as `\xHH`).
//   json   one array of objects (column -> value), NULL as null, blobs as base64 strings.
//   jsonl  one object per line.
// Pure formatting; thread-compatible.
#pragma once

#include <ostream>
#include <string>

#include "base/status.h"
#include "storage/query.h"

namespace reel::cli {

enum class OutputFormat { kTable, kCsv, kJson, kJsonl, kMarkdown };

// "table", "csv", "json", "jsonl", "md" (or "markdown"). Errors: kInvalidArgument naming the
// accepted values.
Result<OutputFormat> ParseOutputFormat(const std::string& name);

struct TableStyle {
  size_t max_cell_width = 60;  // table format only; 0 = never cut
  bool row_count = true;       // table format: "(N rows)" at the end
};

void WriteTable(std::ostream& out, const storage::Table& table, OutputFormat format,
                const TableStyle& style = {});

// A real number as people read it: whole numbers without a fraction, others at 12 significant
// digits, so float noise goes (65.72000000000001 -> "65.72", 0.39999999999999997 -> "0.4").
std::string FormatReadableNumber(double value);

// A string column value, for building Tables by hand.
inline storage::Value Text(std::string s) { return storage::Value(std::move(s)); }

}  // namespace reel::cli
