#include "benchmarks/support/ResultTable.h"

#include <algorithm>
#include <fstream>

#include "ir/Error.h"

namespace tessera::bench {

namespace {

std::string csvCell(const std::string& cell) {
  if (cell.find_first_of(",\"\n") == std::string::npos) return cell;
  std::string quoted = "\"";
  for (char c : cell) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

void writeCsvLine(std::ofstream& out, const std::vector<std::string>& cells) {
  for (size_t i = 0; i < cells.size(); ++i) out << (i ? "," : "") << csvCell(cells[i]);
  out << "\n";
}

}  // namespace

ResultTable::ResultTable(std::vector<std::string> columns) : columns_(std::move(columns)) {}

void ResultTable::addRow(std::vector<std::string> cells) {
  if (cells.size() != columns_.size())
    throw Error("result table: a row of " + std::to_string(cells.size()) + " cells under " +
                std::to_string(columns_.size()) + " columns");
  rows_.push_back(std::move(cells));
}

void ResultTable::printText(std::FILE* out) const {
  std::vector<size_t> widths;
  for (const std::string& c : columns_) widths.push_back(c.size());
  for (const auto& row : rows_)
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  auto line = [&](const std::vector<std::string>& cells) {
    // The first column (the case) reads best left-aligned, the numbers right-aligned.
    for (size_t i = 0; i < cells.size(); ++i)
      std::fprintf(out, i == 0 ? "%-*s" : "  %*s", static_cast<int>(widths[i]), cells[i].c_str());
    std::fprintf(out, "\n");
  };
  line(columns_);
  for (const auto& row : rows_) line(row);
  std::fflush(out);
}

void ResultTable::writeCsv(const std::string& path) const {
  std::ofstream out(path, std::ios::trunc);
  writeCsvLine(out, columns_);
  for (const auto& row : rows_) writeCsvLine(out, row);
  out.flush();
  if (!out) throw Error("cannot write the CSV file '" + path + "'");
}

std::string fixed(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

}  // namespace tessera::bench
