// The loop compile_time and kernel_resources share: measure each selected case into a row, report a case that
// fails (and go on with the others), then print the table and write the CSV.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "benchmarks/support/BenchOptions.h"
#include "benchmarks/support/KernelCases.h"
#include "benchmarks/support/ResultTable.h"

namespace tessera::bench {

using MeasureCase = std::function<std::vector<std::string>(const KernelCase&)>;

// Returns the exit status: 0 when every selected case was measured, 1 when one threw (its message goes to
// stderr, naming the case) or when --only selects none.
int measureCases(const std::vector<KernelCase>& cases, const BenchOptions& options, ResultTable& table,
                 const MeasureCase& measure);

}  // namespace tessera::bench
