#include "jit/sim/runtime/KernelPrintf.h"

#include <bit>
#include <cstdio>
#include <cstring>
#include <vector>

namespace tessera::sim {

namespace {

constexpr const char* kMissing = "<missing argument>";

bool isFlag(char c) { return c == '-' || c == '+' || c == ' ' || c == '#' || c == '0'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }

template <class... T>
void appendFormatted(std::string& out, const std::string& spec, T... value) {
  int n = std::snprintf(nullptr, 0, spec.c_str(), value...);
  if (n <= 0) return;
  std::vector<char> buf(static_cast<size_t>(n) + 1);
  std::snprintf(buf.data(), buf.size(), spec.c_str(), value...);
  out.append(buf.data(), static_cast<size_t>(n));
}

class CudaArgumentBuffer final : public PrintfArguments {
 public:
  explicit CudaArgumentBuffer(const uint8_t* buffer) : buffer_(buffer) {}
  bool next(PrintfArgument, uint32_t naturalBytes, uint64_t& bits, uint32_t& bytes) override {
    if (!buffer_) return false;
    offset_ = (offset_ + naturalBytes - 1) / naturalBytes * naturalBytes;
    bits = 0;
    std::memcpy(&bits, buffer_ + offset_, naturalBytes);
    offset_ += naturalBytes;
    bytes = naturalBytes;
    ++consumed_;
    return true;
  }
  uint32_t consumed() const { return consumed_; }

 private:
  const uint8_t* buffer_;
  size_t offset_ = 0;
  uint32_t consumed_ = 0;
};

}  // namespace

std::string formatPrintf(std::string_view format, PrintfArguments& arguments) {
  std::string out;
  size_t i = 0;
  while (i < format.size()) {
    char c = format[i];
    if (c != '%') {
      out += c;
      ++i;
      continue;
    }
    if (i + 1 < format.size() && format[i + 1] == '%') {
      out += '%';
      i += 2;
      continue;
    }
    size_t start = i++;
    std::string spec = "%";
    while (i < format.size() && isFlag(format[i])) spec += format[i++];
    // Width and precision: digits, or '*' taking an int argument.
    for (int part = 0; part < 2; ++part) {
      if (part == 1) {
        if (i >= format.size() || format[i] != '.') break;
        spec += format[i++];
      }
      if (i < format.size() && format[i] == '*') {
        uint64_t bits;
        uint32_t bytes;
        if (!arguments.next(PrintfArgument::Integer, 4, bits, bytes)) return out + kMissing;
        spec += std::to_string(static_cast<int32_t>(bits));
        ++i;
      } else {
        while (i < format.size() && isDigit(format[i])) spec += format[i++];
      }
    }
    std::string length;
    while (i < format.size() && std::strchr("hljztL", format[i])) length += format[i++];
    if (i >= format.size()) {  // an incomplete conversion prints as written
      out.append(format.substr(start));
      break;
    }
    char conversion = format[i++];
    bool wide = length == "l" || length == "ll" || length == "j" || length == "z" || length == "t";
    uint64_t bits = 0;
    uint32_t bytes = 0;
    switch (conversion) {
      case 'd':
      case 'i':
      case 'u':
      case 'o':
      case 'x':
      case 'X':
      case 'c': {
        if (!arguments.next(PrintfArgument::Integer, wide ? 8 : 4, bits, bytes)) return out + kMissing;
        bool isSigned = conversion == 'd' || conversion == 'i' || conversion == 'c';
        if (bytes == 8) {
          std::string s = spec + "ll" + conversion;
          if (isSigned) appendFormatted(out, s, static_cast<long long>(bits));
          else appendFormatted(out, s, static_cast<unsigned long long>(bits));
        } else {
          std::string s = spec + (length == "h" || length == "hh" ? length : "") + conversion;
          if (isSigned) appendFormatted(out, s, static_cast<int>(static_cast<int32_t>(bits)));
          else appendFormatted(out, s, static_cast<unsigned>(bits));
        }
        break;
      }
      case 'f':
      case 'F':
      case 'e':
      case 'E':
      case 'g':
      case 'G':
      case 'a':
      case 'A': {
        if (!arguments.next(PrintfArgument::Floating, 8, bits, bytes)) return out + kMissing;
        double v = bytes == 4 ? static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(bits)))
                              : std::bit_cast<double>(bits);
        appendFormatted(out, spec + conversion, v);
        break;
      }
      case 's': {
        if (!arguments.next(PrintfArgument::String, 8, bits, bytes)) return out + kMissing;
        const char* s = reinterpret_cast<const char*>(static_cast<uintptr_t>(bits));
        appendFormatted(out, spec + 's', s ? s : "(null)");
        break;
      }
      case 'p': {
        if (!arguments.next(PrintfArgument::Pointer, 8, bits, bytes)) return out + kMissing;
        appendFormatted(out, spec + 'p', reinterpret_cast<void*>(static_cast<uintptr_t>(bits)));
        break;
      }
      case 'n':
        if (!arguments.next(PrintfArgument::Pointer, 8, bits, bytes)) return out + kMissing;
        break;
      default:  // not a conversion: print it as written
        out.append(format.substr(start, i - start));
        break;
    }
  }
  return out;
}

std::string formatCudaPrintf(const char* format, const void* argumentBuffer, uint32_t* consumed) {
  CudaArgumentBuffer args(static_cast<const uint8_t*>(argumentBuffer));
  std::string text = formatPrintf(format ? format : "", args);
  if (consumed) *consumed = args.consumed();
  return text;
}

}  // namespace tessera::sim
