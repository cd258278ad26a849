// Printing query results (storage::Table) in the formats every reporting command offers:
//   table  aligned columns for people; long cells cut to `max_cell_width` characters with "…",
//          line breaks shown as "⏎", other control characters as `\xHH` (to a terminal or
//          not: base/terminal_text.h); numbers right-aligned; a row count at the end.
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

enum class OutputFormat { kTable, kCsv, kJson, kJsonl };

// "table", "csv", "json", "jsonl". Errors: kInvalidArgument naming the accepted values.
Result<OutputFormat> ParseOutputFormat(const std::string& name);

struct TableStyle {
  size_t max_cell_width = 60;  // table format only; 0 = never cut
  bool row_count = true;       // table format: "(N rows)" at the end
};

void WriteTable(std::ostream& out, const storage::Table& table, OutputFormat format,
                const TableStyle& style = {});

// A string column value, for building Tables by hand.
inline storage::Value Text(std::string s) { return storage::Value(std::move(s)); }

}  // namespace reel::cli
