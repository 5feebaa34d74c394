#include "jit/sim/runtime/AmdPrintfBuffer.h"

#include <cstring>

#include "ir/Error.h"
#include "jit/sim/runtime/KernelPrintf.h"

namespace tessera::sim {

namespace {

uint32_t parseNumber(const std::string& record, size_t& pos) {
  size_t end = record.find(':', pos);
  if (end == std::string::npos || end == pos)
    throw Error("sim: malformed llvm.printf.fmts entry '" + record + "' (expected <id>:<count>:<sizes>:<format>)");
  uint64_t value = 0;
  for (size_t i = pos; i < end; ++i) {
    if (record[i] < '0' || record[i] > '9' || value > 0xFFFFFFFFu)
      throw Error("sim: malformed number in llvm.printf.fmts entry '" + record + "'");
    value = value * 10 + static_cast<uint64_t>(record[i] - '0');
  }
  pos = end + 1;
  return static_cast<uint32_t>(value);
}

// C escapes as the record writer produces them: \a \b \f \n \r \t \v \\ \" \' and octal \ooo.
std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    char e = s[++i];
    switch (e) {
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'v': out += '\v'; break;
      default:
        if (e >= '0' && e <= '7') {
          int value = 0;
          for (int digits = 0; digits < 3 && i < s.size() && s[i] >= '0' && s[i] <= '7'; ++digits, ++i)
            value = value * 8 + (s[i] - '0');
          --i;
          out += static_cast<char>(value);
        } else {
          out += e;
        }
    }
  }
  return out;
}

class RecordArguments final : public PrintfArguments {
 public:
  RecordArguments(const uint8_t* data, const std::vector<uint32_t>& sizes) : data_(data), sizes_(sizes) {}
  bool next(PrintfArgument, uint32_t, uint64_t& bits, uint32_t& bytes) override {
    if (index_ >= sizes_.size()) return false;
    bytes = sizes_[index_++];
    bits = 0;
    std::memcpy(&bits, data_ + offset_, bytes);
    offset_ += bytes;
    return true;
  }

 private:
  const uint8_t* data_;
  const std::vector<uint32_t>& sizes_;
  size_t index_ = 0, offset_ = 0;
};

}  // namespace

AmdPrintfFormat parseAmdPrintfFormat(const std::string& record) {
  AmdPrintfFormat f;
  size_t pos = 0;
  f.id = parseNumber(record, pos);
  uint32_t count = parseNumber(record, pos);
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t bytes = parseNumber(record, pos);
    if (bytes != 4 && bytes != 8)
      throw Error("sim: llvm.printf.fmts entry '" + record + "' has an argument of " + std::to_string(bytes) +
                  " bytes (expected 4 or 8)");
    f.argumentBytes.push_back(bytes);
  }
  f.format = unescape(record.substr(pos));
  return f;
}

AmdPrintfOutput decodeAmdPrintfBuffer(const uint8_t* buffer, const std::vector<AmdPrintfFormat>& formats) {
  AmdPrintfOutput out;
  uint32_t used, capacity;
  std::memcpy(&used, buffer, 4);
  std::memcpy(&capacity, buffer + 4, 4);
  if (uint64_t{used} + 8 > capacity) {
    out.error = "the printf buffer says " + std::to_string(used) + " bytes are used of " + std::to_string(capacity);
    return out;
  }
  const uint8_t* record = buffer + 8;
  const uint8_t* end = record + used;
  while (record < end) {
    if (end - record < 4) {
      out.error = "a truncated record at the end of the printf buffer";
      break;
    }
    uint32_t id;
    std::memcpy(&id, record, 4);
    const AmdPrintfFormat* format = nullptr;
    for (const AmdPrintfFormat& f : formats)
      if (f.id == id) format = &f;
    if (!format) {
      out.error = "a record with format id " + std::to_string(id) + ", which no llvm.printf.fmts entry has";
      break;
    }
    size_t bytes = 4;
    for (uint32_t b : format->argumentBytes) bytes += b;
    if (static_cast<size_t>(end - record) < bytes) {
      out.error = "a truncated record of format " + std::to_string(id);
      break;
    }
    RecordArguments args(record + 4, format->argumentBytes);
    out.text += formatPrintf(format->format, args);
    record += bytes;
  }
  return out;
}

}  // namespace tessera::sim
