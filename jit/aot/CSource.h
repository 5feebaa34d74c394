// C code generation for an ahead-of-time export: a header declaring the typed launch function and a source
// embedding the binaries plus the loader (CLoader.h). The generated code needs only libc, libdl and pthreads at
// build time, and the CUDA driver or HIP runtime (dlopen'ed) at run time: no Tessera, no LLVM.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/Types.h"
#include "jit/Specialization.h"

namespace tessera::jit::aot {

// One runtime parameter of the exported kernel and what the export was specialized to assume about it.
struct CParam {
  std::string name;
  ir::Type type;  // pointer or scalar
  ArgFacts facts;
};

// One embedded binary.
struct CImage {
  std::string target;  // "nvptx" (loaded through CUDA) or "amdgpu" (through HIP)
  std::string arch;    // "sm_90a", "gfx942", ...
  std::string format;  // "cubin", "ptx" or "hsaco"
  std::string bytes;
  int threadsPerBlock = 0;
  int64_t sharedBytes = 0;
};

struct CExport {
  std::string name;          // C identifier: functions are <name>_launch, <name>_last_error, <name>_unload
  std::string kernelSymbol;  // the kernel's symbol in every binary
  std::vector<std::string> description;  // comment lines for the header: specialization, constants, binaries
  std::vector<CParam> params;
  std::vector<CImage> images;  // in the order the loader tries them: best first
};

// The C type a parameter is passed as: float*, uint16_t* (f16/bf16 bits), int32_t, ...
std::string cParamType(const ir::Type& t);

std::string generateHeader(const CExport& e);
std::string generateSource(const CExport& e);  // #includes "<name>.h"

}  // namespace tessera::jit::aot
