// Device printf on AMD GPUs without the ROCm device libraries, through the runtime's printf buffer (the protocol
// the HIP/OpenCL runtime (ROCclr) implements for code objects that declare one):
//
//  - Each printf call site gets an id and a format record in the module's `llvm.printf.fmts` named metadata:
//    "<id>:<argument count>:<size>:...:<size>:<format>" (':' in the format written as \72, control characters as C
//    escapes). The AMDGPU metadata streamer copies those into the code object's `amdhsa.printf` list and gives
//    each kernel a `hidden_printf_buffer` argument; the runtime fills it in at launch and, when the dispatch
//    completes, formats the buffer's records on the host's stdout.
//  - The buffer is found in the implicit (hidden) kernel arguments: slot 3 (byte 24) in code object v4.
//  - The buffer starts with two u32s, the bytes used so far and the capacity; records follow from byte 8. A
//    record is the u32 id then each argument's bytes (4 for i32, 8 for i64/double/pointers). Space is reserved
//    with a compare-and-swap on the used-bytes counter, and a record that does not fit is dropped.
//
// writePrintfRecord takes the buffer as a value so that host tests can run the emitted IR on a host buffer.
#pragma once

#include <string>
#include <vector>

#include "backends/common/LoweringHooks.h"

namespace tessera::backends::amdgpu {

inline constexpr unsigned kGlobalAddrSpace = 1;
inline constexpr unsigned kPrintfBufferHeaderBytes = 8;
inline constexpr unsigned kPrintfBufferImplicitArgOffset = 24;  // code object v4

// The bytes an argument takes in a record (4 or 8); throws for types printf cannot take.
unsigned printfArgumentBytes(const llvm::Value* arg);

// The `llvm.printf.fmts` entry for a call site: "<id>:<n>:<sizes...>:<escaped format>".
std::string printfFormatRecord(unsigned id, const std::string& format, const std::vector<unsigned>& argBytes);

// Adds `format` (with these arguments) to the module's `llvm.printf.fmts` and returns its id (1, 2, ...).
unsigned registerPrintfFormat(llvm::Module& m, const std::string& format, const std::vector<llvm::Value*>& args);

// The printf buffer of the running kernel (a global pointer, null when the runtime provides none).
llvm::Value* printfBufferPointer(IRBuilder& b);

// Reserves a record in `buffer` (ptr addrspace(1)) and writes `id` and `args` into it; does nothing when the
// buffer is null or full.
void writePrintfRecord(IRBuilder& b, llvm::Value* buffer, unsigned id, const std::vector<llvm::Value*>& args);

}  // namespace tessera::backends::amdgpu
