#include "benchmarks/support/CaseRunner.h"

#include <cstdio>
#include <exception>

namespace tessera::bench {

int measureCases(const std::vector<KernelCase>& cases, const BenchOptions& options, ResultTable& table,
                 const MeasureCase& measure) {
  bool failed = false;
  for (const KernelCase& c : cases) {
    if (!options.selects(c.name())) continue;
    try {
      table.addRow(measure(c));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", c.name().c_str(), e.what());
      failed = true;
    }
  }
  if (table.rows().empty() && !failed) {
    std::fprintf(stderr, "no case matches --only '%s'\n", options.only.c_str());
    return 1;
  }
  table.printText(stdout);
  if (!options.csvPath.empty()) table.writeCsv(options.csvPath);
  return failed ? 1 : 0;
}

}  // namespace tessera::bench
