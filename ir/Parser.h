// Textual tile IR: parsing (format in docs/IR.md). Malformed text throws tessera::Error whose location()
// holds the 1-based line and column of the offending token (file = the name passed in).
// The parser checks syntax, name resolution and the shapes needed to build ops; run the verifier after it
// for full semantic checks (parseModule does not verify).
#pragma once

#include <memory>
#include <string>

#include "ir/IR.h"

namespace tessera::ir {

std::unique_ptr<Module> parseModule(const std::string& text, const std::string& fileName = "<input>");

// One attribute value as it appears in an attribute dictionary or a tile type: "#blocked{...}", "[1, 0]",
// "tile<16x16xf32, #shared{...}>", ... The whole text must be that one value.
Attr parseAttribute(const std::string& text, const std::string& fileName = "<attribute>");

}  // namespace tessera::ir
