#include "jobs/cli/gone_inputs.h"

#include <algorithm>

#include "storage/prune.h"

namespace reel::cli {

void MarkGoneInputs(storage::Table& table) {
  const auto column = std::find(table.columns.begin(), table.columns.end(), "path");
  if (column == table.columns.end()) return;
  const size_t index = static_cast<size_t>(column - table.columns.begin());
  for (std::vector<storage::Value>& row : table.rows) {
    if (index >= row.size()) continue;
    auto* path = std::get_if<std::string>(&row[index]);
    if (path != nullptr && storage::InputFileGone(*path)) *path = kGoneInputMark + *path;
  }
}

}  // namespace reel::cli
