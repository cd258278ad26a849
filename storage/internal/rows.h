// Reading the rows of a Statement: one loop for every query of storage/, so each caller says only
// how to read one row (ForEachRow, ReadRows, ReadRow). Step() errors are returned as they came.
// Private to storage/.
#pragma once

#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/status.h"
#include "storage/internal/sqlite.h"

namespace reel::storage::internal {

template <typename T>
struct RowValue {
  using type = T;
};
template <typename T>
struct RowValue<Result<T>> {
  using type = T;
};
// What one row becomes: T for a reader returning T or Result<T>.
template <typename Read>
using RowValueOf =
    typename RowValue<std::decay_t<std::invoke_result_t<Read&, const Statement&>>>::type;

template <typename Fn>
Status ForEachRow(Statement& stmt, Fn&& fn) {
  while (true) {
    REEL_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) return Status::Ok();
    if constexpr (std::is_void_v<std::invoke_result_t<Fn&, Statement&>>) {
      fn(stmt);
    } else {
      REEL_RETURN_IF_ERROR(fn(stmt));
    }
  }
}

template <typename Read>
Result<std::vector<RowValueOf<Read>>> ReadRows(Statement& stmt, Read&& read) {
  std::vector<RowValueOf<Read>> rows;
  REEL_RETURN_IF_ERROR(ForEachRow(stmt, [&](const Statement& s) -> Status {
    if constexpr (std::is_same_v<RowValueOf<Read>,
                                 std::decay_t<std::invoke_result_t<Read&, const Statement&>>>) {
      rows.push_back(read(s));
    } else {
      REEL_ASSIGN_OR_RETURN(auto value, read(s));
      rows.push_back(std::move(value));
    }
    return Status::Ok();
  }));
  return rows;
}

template <typename Read>
Result<std::optional<RowValueOf<Read>>> ReadRow(Statement& stmt, Read&& read) {
  REEL_ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return std::optional<RowValueOf<Read>>();
  if constexpr (std::is_same_v<RowValueOf<Read>,
                               std::decay_t<std::invoke_result_t<Read&, const Statement&>>>) {
    return std::optional<RowValueOf<Read>>(read(stmt));
  } else {
    REEL_ASSIGN_OR_RETURN(auto value, read(stmt));
    return std::optional<RowValueOf<Read>>(std::move(value));
  }
}

}  // namespace reel::storage::internal
