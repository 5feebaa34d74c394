// Device printf formatting (jit/sim/runtime/KernelPrintf.h): conversions, flags, '*' widths, length modifiers,
// CUDA's argument buffer alignment; and AMD's llvm.printf.fmts records and printf buffer
// (AmdPrintfBuffer.h).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "ir/Error.h"
#include "jit/sim/runtime/AmdPrintfBuffer.h"
#include "jit/sim/runtime/KernelPrintf.h"

namespace tessera::sim {
namespace {

// An argument buffer laid out as CUDA's vprintf expects, built by hand.
struct Buffer {
  std::vector<uint8_t> bytes;
  template <class T>
  Buffer& add(T v) {
    size_t at = (bytes.size() + sizeof(T) - 1) / sizeof(T) * sizeof(T);
    bytes.resize(at + sizeof(T));
    std::memcpy(bytes.data() + at, &v, sizeof(T));
    return *this;
  }
};

TEST(SimRuntimePrintf, CudaArgumentsAtTheirNaturalAlignment) {
  Buffer b;
  b.add<int32_t>(42).add<double>(-1.5).add<int32_t>('x').add<int64_t>(-3).add<uint32_t>(0xBEEF);
  uint32_t consumed = 0;
  EXPECT_EQ(formatCudaPrintf("%d|%8.3f|%c|%lld|%#x|%%", b.bytes.data(), &consumed), "42|  -1.500|x|-3|0xbeef|%");
  EXPECT_EQ(consumed, 5u);
  EXPECT_EQ(b.bytes.size(), 36u);  // int at 0, double at 8, int at 16, long long at 24, unsigned at 32
}

TEST(SimRuntimePrintf, StarWidthsStringsAndPointers) {
  const char* word = "tile";
  Buffer b;
  b.add<int32_t>(6).add<int32_t>(2).add<double>(3.14159).add<const char*>(word).add<const char*>(nullptr);
  EXPECT_EQ(formatCudaPrintf("[%*.*f][%-6s][%s]", b.bytes.data()), "[  3.14][tile  ][(null)]");
  Buffer p;
  p.add<const void*>(reinterpret_cast<const void*>(0x1000));
  EXPECT_EQ(formatCudaPrintf("%p", p.bytes.data()), "0x1000");
}

TEST(SimRuntimePrintf, ShortLengthsTruncateAndWideOnesReadEightBytes) {
  Buffer b;
  b.add<int32_t>(0x12345).add<int32_t>(300).add<uint64_t>(uint64_t{1} << 33).add<int64_t>(-1);
  EXPECT_EQ(formatCudaPrintf("%hx %hhu %lu %zd", b.bytes.data()), "2345 44 8589934592 -1");
}

TEST(SimRuntimePrintf, MissingArgumentsAndStrayPercents) {
  EXPECT_EQ(formatCudaPrintf("a %d b", nullptr), "a <missing argument>");
  EXPECT_EQ(formatCudaPrintf("100%", nullptr), "100%");
  Buffer b;
  b.add<int32_t>(1);
  EXPECT_EQ(formatCudaPrintf("%y %d", b.bytes.data()), "%y 1");  // not a conversion: printed as written
}

TEST(SimRuntimeAmdPrintf, FormatRecordsUnescape) {
  AmdPrintfFormat f = parseAmdPrintfFormat("3:2:4:8:x\\72 %d, y\\72 %ld\\n");
  EXPECT_EQ(f.id, 3u);
  EXPECT_EQ(f.argumentBytes, (std::vector<uint32_t>{4, 8}));
  EXPECT_EQ(f.format, "x: %d, y: %ld\n");
  EXPECT_EQ(parseAmdPrintfFormat("1:0:a:b").format, "a:b");  // only the first fields are split
  EXPECT_THROW(parseAmdPrintfFormat("1:x:4:%d"), Error);
  EXPECT_THROW(parseAmdPrintfFormat("1:1:2:%d"), Error);
  EXPECT_THROW(parseAmdPrintfFormat("no colons"), Error);
}

// A printf buffer: its header (bytes used, capacity), then the words. The header may claim less capacity than
// the words take (an overfull buffer); the allocation still holds them all.
std::vector<uint8_t> buffer(const std::vector<uint32_t>& words, uint32_t capacity = 64) {
  uint32_t used = static_cast<uint32_t>(words.size() * 4);
  std::vector<uint8_t> b(std::max<size_t>(capacity, 8 + used));
  std::memcpy(b.data(), &used, 4);
  std::memcpy(b.data() + 4, &capacity, 4);
  std::memcpy(b.data() + 8, words.data(), used);
  return b;
}

TEST(SimRuntimeAmdPrintf, DecodesRecordsInOrder) {
  std::vector<AmdPrintfFormat> formats = {parseAmdPrintfFormat("1:1:4:a=%d\\n"),
                                          parseAmdPrintfFormat("2:2:4:8:%f %lld\\n")};
  float f = 0.25f;
  uint32_t fbits;
  std::memcpy(&fbits, &f, 4);
  // Record 1 (id, i32), record 2 (id, f32, i64 = 2^32 + 5 as two words).
  auto b = buffer({1, static_cast<uint32_t>(-4), 2, fbits, 5, 1});
  AmdPrintfOutput out = decodeAmdPrintfBuffer(b.data(), formats);
  EXPECT_EQ(out.error, "");
  EXPECT_EQ(out.text, "a=-4\n0.250000 4294967301\n");
}

TEST(SimRuntimeAmdPrintf, BrokenBuffersSayWhatIsWrong) {
  std::vector<AmdPrintfFormat> formats = {parseAmdPrintfFormat("1:1:4:%d\\n")};
  EXPECT_NE(decodeAmdPrintfBuffer(buffer({9, 0}).data(), formats).error.find("format id 9"), std::string::npos);
  auto truncated = buffer({1});
  AmdPrintfOutput out = decodeAmdPrintfBuffer(truncated.data(), formats);
  EXPECT_NE(out.error.find("truncated record of format 1"), std::string::npos);
  auto overfull = buffer({1, 2}, 12);
  EXPECT_NE(decodeAmdPrintfBuffer(overfull.data(), formats).error.find("8 bytes are used of 12"), std::string::npos);
}

}  // namespace
}  // namespace tessera::sim
