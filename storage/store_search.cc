// Store: full-text search (FTS5) over answers and text segments.
#include <cctype>

#include "storage/internal/rows.h"
#include "storage/internal/sqlite.h"
#include "storage/store.h"

namespace reel::storage {

using internal::Statement;

namespace {

// Plain words -> an FTS5 query where every word must occur, each quoted as a string.
std::string QuoteWords(const std::string& query) {
  std::string out;
  size_t i = 0;
  while (i < query.size()) {
    while (i < query.size() && std::isspace(static_cast<unsigned char>(query[i]))) ++i;
    if (i >= query.size()) break;
    std::string word = "\"";
    while (i < query.size() && !std::isspace(static_cast<unsigned char>(query[i]))) {
      if (query[i] == '"') word += '"';
      word += query[i++];
    }
    word += '"';
    if (!out.empty()) out += ' ';
    out += word;
  }
  return out;
}

}  // namespace

Result<std::vector<SearchHit>> Store::Search(const std::string& query,
                                             const SearchOptions& options) {
  std::string match = options.fts_syntax ? query : QuoteWords(query);
  if (match.find_first_not_of(" \t\r\n") == std::string::npos) {
    return InvalidArgument("search query is empty");
  }
  if (!options.answers && !options.segments) return std::vector<SearchHit>();
  // snippet(): column 0, matches in [ ], "..." where text is elided, about 12 tokens.
  const std::string answers =
      "SELECT 0 AS source, j.name, i.id, i.path, req.prompt_id, NULL AS start_s, NULL AS end_s, "
      "snippet(responses_fts, 0, '[', ']', '...', 12) AS snip, bm25(responses_fts) AS score, "
      "resp.id AS response_id "
      "FROM responses_fts JOIN responses resp ON resp.id = responses_fts.rowid "
      "JOIN requests req ON req.id = resp.request_id JOIN items i ON i.id = req.item_id "
      "JOIN jobs j ON j.id = i.job_id "
      "WHERE responses_fts MATCH ?1 AND (?3 IS NULL OR j.name = ?3) "
      "AND req.status = 'succeeded'";  // an answer that failed its check is none
  const std::string segments =
      "SELECT 1 AS source, j.name, i.id, i.path, s.source, s.start_seconds AS start_s, "
      "s.end_seconds AS end_s, snippet(segments_fts, 0, '[', ']', '...', 12) AS snip, "
      "bm25(segments_fts) AS score, NULL AS response_id "
      "FROM segments_fts JOIN segments s ON s.id = segments_fts.rowid "
      "JOIN items i ON i.id = s.item_id JOIN jobs j ON j.id = i.job_id "
      "WHERE segments_fts MATCH ?1 AND (?3 IS NULL OR j.name = ?3)";
  std::string sql;
  if (options.answers && options.segments) {
    sql = answers + " UNION ALL " + segments;
  } else {
    sql = options.answers ? answers : segments;
  }
  sql = "SELECT * FROM (" + sql + ") ORDER BY score, path, start_s LIMIT ?2";
  REEL_ASSIGN_OR_RETURN(Statement stmt, Statement::Prepare(db_.handle(), sql));
  stmt.Bind(1, match).Bind(2, options.limit).Bind(3, options.job);
  Result<std::vector<SearchHit>> read = internal::ReadRows(stmt, [](const Statement& row) {
    SearchHit hit;
    hit.source = row.ColumnInt(0) == 0 ? SearchHit::Source::kAnswer : SearchHit::Source::kSegment;
    hit.job = row.ColumnText(1);
    hit.item_id = row.ColumnInt(2);
    hit.path = row.ColumnText(3);
    hit.origin = row.ColumnText(4);
    hit.start_seconds = row.ColumnOptionalDouble(5);
    hit.end_seconds = row.ColumnOptionalDouble(6);
    hit.snippet = row.ColumnText(7);
    hit.score = row.ColumnDouble(8);
    hit.response_id = row.ColumnOptionalInt(9);
    return hit;
  });
  if (!read.ok()) return InvalidArgument("search '" + query + "': " + read.status().message());
  std::vector<SearchHit> hits = std::move(read).value();
  // The frames the model meant: references whose text the snippet shows (matches unbracketed).
  for (SearchHit& hit : hits) {
    if (!hit.response_id) continue;
    std::string plain;
    for (char c : hit.snippet) {
      if (c != '[' && c != ']') plain += c;
    }
    REEL_ASSIGN_OR_RETURN(std::vector<AnswerTimeRecord> times, ListAnswerTimes(*hit.response_id));
    for (AnswerTimeRecord& t : times) {
      if (plain.find(t.text) != std::string::npos) hit.times.push_back(std::move(t));
    }
  }
  return hits;
}

}  // namespace reel::storage
