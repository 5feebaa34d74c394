// Decoding AMD's printf buffer after a launch (the protocol of backends/amdgpu/PrintfBuffer.h): each record is a
// u32 format id and the arguments' bytes; the module's `llvm.printf.fmts` strings, "<id>:<count>:<size>:...:
// <format>" with the format C-escaped (':' as \72), say how to read and print them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::sim {

struct AmdPrintfFormat {
  uint32_t id = 0;
  std::vector<uint32_t> argumentBytes;  // 4 or 8 each
  std::string format;                   // unescaped
};

// Parses one `llvm.printf.fmts` string; throws tessera::Error when it is not one.
AmdPrintfFormat parseAmdPrintfFormat(const std::string& record);

struct AmdPrintfOutput {
  std::string text;
  std::string error;  // empty, or what was wrong with the buffer (decoding stops there)
};
// The text of every record in `buffer` (header included).
AmdPrintfOutput decodeAmdPrintfBuffer(const uint8_t* buffer, const std::vector<AmdPrintfFormat>& formats);

}  // namespace tessera::sim
