// Textual tile IR: printing. The format is specified in docs/IR.md; Parser.h reads it back, and
// print(parse(print(m))) == print(m) for every valid module.
#pragma once

#include <ostream>
#include <string>

#include "ir/IR.h"

namespace tessera::ir {

struct PrintOptions {
  bool locations = false;  // append loc("file":line:col) to ops that have one
};

std::string print(const Module& m, const PrintOptions& opts = {});
std::string print(const Function& f, const PrintOptions& opts = {});
// One op (and its regions) with operand names as the enclosing function's printer would assign them; for
// diagnostics.
std::string print(const Op& op, const PrintOptions& opts = {});

}  // namespace tessera::ir
