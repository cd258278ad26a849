// Printing query results (storage::Table) in the formats every reporting command offers: table
// (aligned, for people), md, csv (RFC 4180), json and jsonl. Pure formatting; thread-compatible.
// What each format does with cells, NULL and control characters: jobs/README.md, "Table output".
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
