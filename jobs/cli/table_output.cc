#include "jobs/cli/table_output.h"

#include "base/terminal_text.h"
#include "base/utf8.h"
#include "jobs/json_output.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace reel::cli {
namespace {

std::string Base64(const std::string& bytes) {
  static const char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t n = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    out += kAlphabet[n >> 18];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  if (i + 1 == bytes.size()) {
    uint32_t n = uint8_t(bytes[i]) << 16;
    out += kAlphabet[n >> 18];
    out += kAlphabet[(n >> 12) & 63];
    out += "==";
  } else if (i + 2 == bytes.size()) {
    uint32_t n = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8);
    out += kAlphabet[n >> 18];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += '=';
  }
  return out;
}

nlohmann::json ToJson(const storage::Value& value) {
  if (std::holds_alternative<int64_t>(value)) return std::get<int64_t>(value);
  if (std::holds_alternative<double>(value)) return std::get<double>(value);
  if (std::holds_alternative<std::string>(value)) return std::get<std::string>(value);
  if (std::holds_alternative<storage::Blob>(value)) {
    return Base64(std::get<storage::Blob>(value).bytes);
  }
  return nullptr;
}

nlohmann::json RowObject(const storage::Table& table, const std::vector<storage::Value>& row) {
  nlohmann::json object = nlohmann::json::object();
  for (size_t c = 0; c < table.columns.size() && c < row.size(); ++c) {
    object[table.columns[c]] = ToJson(row[c]);
  }
  return object;
}

std::string Dump(const nlohmann::json& j) { return jobs::DumpJson(j); }

std::string CsvField(const storage::Value& value) {
  if (std::holds_alternative<std::monostate>(value)) return "";
  std::string text = std::holds_alternative<storage::Blob>(value)
                         ? Base64(std::get<storage::Blob>(value).bytes)
                         : SafeUtf8(storage::FormatValue(value));
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

// Display width in code points (UTF-8 continuation bytes do not count).
size_t Width(const std::string& s) {
  return static_cast<size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (uint8_t(c) & 0xC0) != 0x80; }));
}

// A value as people read it: a real number at 12 significant digits with the float noise of
// sums and products gone (65.72000000000001 -> 65.72), NULL as nothing.
std::string Readable(const storage::Value& value) {
  if (std::holds_alternative<std::monostate>(value)) return "";
  if (const auto* d = std::get_if<double>(&value)) return FormatReadableNumber(*d);
  return SafeUtf8(storage::FormatValue(value));
}

// One line, at most `max_width` code points ("…" marks a cut); other control characters shown
// as `\xHH` (base/terminal_text.h), so a stored text cannot drive the terminal.
std::string Cell(const storage::Value& value, size_t max_width) {
  std::string text = Readable(value);
  std::string flat;
  for (char c : text) {
    if (c == '\n') {
      flat += "\xE2\x8F\x8E";  // ⏎
    } else if (c == '\r' || c == '\t') {
      flat += ' ';
    } else {
      flat += c;
    }
  }
  if (HasControlCharacters(flat)) flat = EscapeControlCharacters(flat);
  if (max_width == 0 || Width(flat) <= max_width) return flat;
  std::string cut;
  size_t width = 0;
  for (size_t i = 0; i < flat.size(); ++i) {
    bool starts = (uint8_t(flat[i]) & 0xC0) != 0x80;
    if (starts && width == max_width - 1) break;
    if (starts) ++width;
    cut += flat[i];
  }
  return cut + "\xE2\x80\xA6";  // …
}

bool IsNumber(const storage::Value& value) {
  return std::holds_alternative<int64_t>(value) || std::holds_alternative<double>(value);
}

void WritePadded(std::ostream& out, const std::string& text, size_t width, bool right) {
  size_t pad = width > Width(text) ? width - Width(text) : 0;
  if (right) out << std::string(pad, ' ');
  out << text;
  if (!right) out << std::string(pad, ' ');
}

// A Markdown table cell: the text whole, on one line (a line break as <br>), pipes and
// backslashes escaped, control characters as `\xHH`.
std::string MarkdownText(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') continue;
    if (c == '\n' || c == '\r') {
      out += "<br>";
    } else if (c == '|' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\t') {
      out += ' ';
    } else {
      out += c;
    }
  }
  if (HasControlCharacters(out)) out = EscapeControlCharacters(out);
  return out;
}

std::string MarkdownCell(const storage::Value& value) { return MarkdownText(Readable(value)); }

}  // namespace

std::string FormatReadableNumber(double value) {
  if (!std::isfinite(value)) return std::isnan(value) ? "NaN" : (value > 0 ? "inf" : "-inf");
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%.0f", value);
    return std::string(buffer) == "-0" ? "0" : buffer;
  }
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "%.12g", value);
  return buffer;
}

Result<OutputFormat> ParseOutputFormat(const std::string& name) {
  if (name == "table") return OutputFormat::kTable;
  if (name == "md" || name == "markdown") return OutputFormat::kMarkdown;
  if (name == "csv") return OutputFormat::kCsv;
  if (name == "json") return OutputFormat::kJson;
  if (name == "jsonl") return OutputFormat::kJsonl;
  return InvalidArgument("unknown format '" + name + "' (use table, csv, json, jsonl or md)");
}

void WriteTable(std::ostream& out, const storage::Table& table, OutputFormat format,
                const TableStyle& style) {
  switch (format) {
    case OutputFormat::kJson: {
      nlohmann::json rows = nlohmann::json::array();
      for (const auto& row : table.rows) rows.push_back(RowObject(table, row));
      out << Dump(rows) << "\n";
      return;
    }
    case OutputFormat::kJsonl:
      for (const auto& row : table.rows) out << Dump(RowObject(table, row)) << "\n";
      return;
    case OutputFormat::kCsv: {
      for (size_t c = 0; c < table.columns.size(); ++c) {
        out << (c ? "," : "") << CsvField(storage::Value(table.columns[c]));
      }
      out << "\r\n";
      for (const auto& row : table.rows) {
        for (size_t c = 0; c < row.size(); ++c) out << (c ? "," : "") << CsvField(row[c]);
        out << "\r\n";
      }
      return;
    }
    case OutputFormat::kMarkdown: {
      out << "|";
      for (const std::string& c : table.columns) out << " " << MarkdownText(SafeUtf8(c)) << " |";
      out << "\n|";
      for (size_t c = 0; c < table.columns.size(); ++c) {
        const bool numeric = !table.rows.empty() &&
                             std::all_of(table.rows.begin(), table.rows.end(),
                                         [c](const std::vector<storage::Value>& row) {
                                           return c >= row.size() || IsNumber(row[c]) ||
                                                  std::holds_alternative<std::monostate>(row[c]);
                                         });
        out << (numeric ? " ---: |" : " --- |");
      }
      out << "\n";
      for (const auto& row : table.rows) {
        out << "|";
        for (const storage::Value& v : row) out << " " << MarkdownCell(v) << " |";
        out << "\n";
      }
      return;
    }
    case OutputFormat::kTable:
      break;
  }
  const size_t n = table.columns.size();
  std::vector<std::vector<std::string>> cells;
  std::vector<size_t> widths(n, 0);
  std::vector<bool> numeric(n, true);
  for (size_t c = 0; c < n; ++c) {
    widths[c] = Width(Cell(storage::Value(table.columns[c]), style.max_cell_width));
  }
  for (const auto& row : table.rows) {
    std::vector<std::string> line;
    for (size_t c = 0; c < n && c < row.size(); ++c) {
      line.push_back(Cell(row[c], style.max_cell_width));
      widths[c] = std::max(widths[c], Width(line.back()));
      if (!IsNumber(row[c]) && !std::holds_alternative<std::monostate>(row[c])) {
        numeric[c] = false;
      }
    }
    cells.push_back(std::move(line));
  }
  for (size_t c = 0; c < n; ++c) {
    if (c) out << "  ";
    const bool right = numeric[c] && !table.rows.empty();
    std::string header = Cell(storage::Value(table.columns[c]), style.max_cell_width);
    if (c + 1 == n && !right) {
      out << header;
    } else {
      WritePadded(out, header, widths[c], right);
    }
  }
  out << "\n";
  for (size_t c = 0; c < n; ++c) {
    if (c) out << "  ";
    out << std::string(widths[c], '-');
  }
  out << "\n";
  for (const auto& line : cells) {
    for (size_t c = 0; c < line.size(); ++c) {
      if (c) out << "  ";
      // The last column is not padded (no trailing spaces) unless it is right-aligned.
      if (c + 1 == line.size() && !numeric[c]) {
        out << line[c];
      } else {
        WritePadded(out, line[c], widths[c], numeric[c]);
      }
    }
    out << "\n";
  }
  if (style.row_count) {
    out << "(" << table.rows.size() << (table.rows.size() == 1 ? " row" : " rows")
        << (table.truncated ? ", more not shown" : "") << ")\n";
  }
}

}  // namespace reel::cli
