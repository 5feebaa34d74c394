// Device printf formatting. formatPrintf walks a C format string and takes each conversion's argument from an
// argument source; two sources exist: CUDA's vprintf argument buffer (each argument at its natural alignment,
// after C's default promotions: int for char/short, double for float, 8 bytes for pointers and long) and AMD's
// printf-buffer records (AmdPrintfBuffer.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::sim {

enum class PrintfArgument : uint8_t { Integer, Floating, String, Pointer };

class PrintfArguments {
 public:
  // The next argument for a conversion of `kind` whose C size is `naturalBytes`: its bits and actual size (4 or
  // 8). False when there is none.
  virtual bool next(PrintfArgument kind, uint32_t naturalBytes, uint64_t& bits, uint32_t& bytes) = 0;

 protected:
  ~PrintfArguments() = default;
};

// The text printf(format, ...) prints. %s arguments are host addresses of NUL-terminated strings (the kernel's
// constants). A missing argument prints "<missing argument>" and ends the formatting; %n prints nothing.
std::string formatPrintf(std::string_view format, PrintfArguments& arguments);

// CUDA vprintf(format, argumentBuffer); `argumentBuffer` may be null when the format takes no argument.
// `consumed` (optional) receives the number of arguments read.
std::string formatCudaPrintf(const char* format, const void* argumentBuffer, uint32_t* consumed = nullptr);

}  // namespace tessera::sim
