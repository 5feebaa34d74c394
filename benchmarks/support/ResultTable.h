// A benchmark's results as rows of text cells under named columns: printed as an aligned table, and written as
// CSV (RFC 4180 quoting) for benchmarks/plot_results.py.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace tessera::bench {

class ResultTable {
 public:
  explicit ResultTable(std::vector<std::string> columns);

  // Throws tessera::Error unless the row has one cell per column.
  void addRow(std::vector<std::string> cells);
  const std::vector<std::vector<std::string>>& rows() const { return rows_; }

  void printText(std::FILE* out) const;
  // Throws tessera::Error naming the file when it cannot be written.
  void writeCsv(const std::string& path) const;

 private:
  std::vector<std::string> columns_;
  std::vector<std::vector<std::string>> rows_;
};

std::string fixed(double value, int decimals);  // "0.123"

}  // namespace tessera::bench
