// The compiler's identity, part of every JIT cache key: a cached binary is reused only by the very compiler
// build that produced it.
#pragma once

#include <string>

namespace tessera::jit {

// "tessera <version> (<git describe at configure time>) build <binary> <size>-<mtime>": the version constant,
// the source revision, and the size and modification time of the executable or shared library holding the
// compiler. The last part changes whenever any compiler code is rebuilt, even without a new commit.
const std::string& compilerVersion();

}  // namespace tessera::jit
