// Identities of the tools that turn lowered LLVM IR into a loadable artifact, for the JIT cache key: a cached
// PTX or code object is reused only when the same LLVM build (and the same libdevice, ld.lld) would produce it.
// Each identity names the file that holds the tool with its size and modification time, which change when the
// package is upgraded or rebuilt even if the version number does not.
#pragma once

#include <string>

namespace tessera::backends {

// "<path> <size>-<mtime>" for an existing file; "<path> (missing)" otherwise; "none" for an empty path.
std::string fileIdentity(const std::string& path);

// "LLVM 19.1.7 <identity of the library or executable holding LLVM>": the LLVM the process runs, which may be
// a newer patch release than the headers Tessera was built against.
const std::string& llvmIdentity();

}  // namespace tessera::backends
