// debug_print and device_assert on AMDGPU, through the runtime's printf buffer (backends/amdgpu/PrintfBuffer.h).
// No AMD GPU exists here, so nothing runs on AMD hardware and the HIP runtime's printing is not exercised. What
// is checked:
//  - the record writer's IR, JIT-compiled for the host and run on a host buffer, lays out records exactly as the
//    format records in the module's metadata describe them (decoded here the way the runtime decodes them),
//    reserves space with the buffer's used-bytes counter and drops records that do not fit;
//  - format records escape their separator and control characters; printfArgumentBytes rejects the types printf
//    cannot take.
// That kernels with debug_print / device_assert compile for gfx90a and gfx942, with the formats in their code
// objects (amdhsa.printf), a hidden_printf_buffer argument and device_assert trapping (s_trap 2), is checked by
// tests/lit/amdgpu/printing.tir.
#include <gtest/gtest.h>

#include <cstring>
#include <regex>

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/TargetSelect.h>

#include "backends/amdgpu/PrintfBuffer.h"
#include "ir/Error.h"

namespace tessera::testing {
namespace {

using backends::IRBuilder;
namespace amd = backends::amdgpu;

TEST(AMDGPUPrintfFormatRecord, EscapesTheSeparatorAndControlCharacters) {
  EXPECT_EQ(amd::printfFormatRecord(3, "a:%d\tb\n", {4}), "3:1:4:a\\72%d\tb\\n");
  EXPECT_EQ(amd::printfFormatRecord(1, "x=%lld y=%f\r\a\b\f\v", {8, 8}), "1:2:8:8:x=%lld y=%f\\r\\a\\b\\f\\v");
  EXPECT_EQ(amd::printfFormatRecord(2, "none", {}), "2:0:none");
}

TEST(AMDGPUPrintfFormatRecord, RejectsTypesPrintfCannotTake) {
  llvm::LLVMContext ctx;
  llvm::Value* i16 = llvm::ConstantInt::get(llvm::Type::getInt16Ty(ctx), 1);
  try {
    amd::printfArgumentBytes(i16);
    FAIL() << "i16 accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("i16"), std::string::npos) << e.what();
  }
}

// One parsed `llvm.printf.fmts` entry.
struct FormatRecord {
  unsigned id = 0;
  std::vector<unsigned> sizes;
  std::string format;  // still escaped
};

FormatRecord parseRecord(const std::string& s) {
  FormatRecord r;
  size_t pos = 0;
  auto field = [&] {
    size_t colon = s.find(':', pos);
    std::string f = s.substr(pos, colon - pos);
    pos = colon + 1;
    return static_cast<unsigned>(std::stoul(f));
  };
  r.id = field();
  unsigned n = field();
  for (unsigned i = 0; i < n; ++i) r.sizes.push_back(field());
  r.format = s.substr(pos);
  return r;
}

// Formats the records in `buffer` as the runtime would: each record's id selects its format, whose conversions
// consume the argument bytes in order.
std::string decodeBuffer(const std::vector<uint8_t>& buffer, const std::vector<FormatRecord>& formats) {
  uint32_t used;
  std::memcpy(&used, buffer.data(), 4);
  std::string out;
  size_t at = amd::kPrintfBufferHeaderBytes;
  while (at < amd::kPrintfBufferHeaderBytes + used) {
    uint32_t id;
    std::memcpy(&id, &buffer[at], 4);
    at += 4;
    const FormatRecord& f = formats.at(id - 1);
    EXPECT_EQ(f.id, id);
    std::string fmt = std::regex_replace(f.format, std::regex(R"(\\n)"), "\n");
    fmt = std::regex_replace(fmt, std::regex(R"(\\72)"), ":");
    std::regex conversion(R"(%(%|ll[du]|[duf]))");
    size_t arg = 0;
    std::string text;
    std::sregex_iterator it(fmt.begin(), fmt.end(), conversion), end;
    size_t last = 0;
    for (; it != end; ++it) {
      text += fmt.substr(last, it->position() - last);
      last = it->position() + it->length();
      std::string c = (*it)[1];
      if (c == "%") {
        text += "%";
        continue;
      }
      unsigned size = f.sizes.at(arg++);
      char buf[64];
      if (c == "f") {
        double d;
        std::memcpy(&d, &buffer[at], 8);
        EXPECT_EQ(size, 8u);
        std::snprintf(buf, sizeof buf, "%f", d);
      } else if (size == 8) {
        int64_t v;
        std::memcpy(&v, &buffer[at], 8);
        std::snprintf(buf, sizeof buf, c == "llu" ? "%llu" : "%lld", static_cast<long long>(v));
      } else {
        int32_t v;
        std::memcpy(&v, &buffer[at], 4);
        std::snprintf(buf, sizeof buf, c == "u" ? "%u" : "%d", v);
      }
      text += buf;
      at += size;
    }
    EXPECT_EQ(arg, f.sizes.size()) << "arguments left over in record " << id;
    out += text + fmt.substr(last);
  }
  return out;
}

// JIT-compiles, for the host, `void print2(ptr addrspace(1) buffer, i32 a, i64 b, double c)` that writes one
// record with the format "a=%d b=%lld c=%f: done\n", and `void print0(ptr addrspace(1) buffer)` with "hello %%\n".
struct HostPrinter {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  void (*print2)(void*, int32_t, int64_t, double) = nullptr;
  void (*print0)(void*) = nullptr;
  std::vector<FormatRecord> formats;
};

HostPrinter jitPrinter() {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto m = std::make_unique<llvm::Module>("printf", *ctx);
  IRBuilder b(*ctx);
  llvm::Type* buf = llvm::PointerType::get(*ctx, amd::kGlobalAddrSpace);
  auto define = [&](const char* name, std::vector<llvm::Type*> params) {
    auto* f = llvm::Function::Create(llvm::FunctionType::get(b.getVoidTy(), params, false),
                                     llvm::GlobalValue::ExternalLinkage, name, m.get());
    b.SetInsertPoint(llvm::BasicBlock::Create(*ctx, "entry", f));
    return f;
  };
  llvm::Function* p2 = define("print2", {buf, b.getInt32Ty(), b.getInt64Ty(), b.getDoubleTy()});
  std::vector<llvm::Value*> args = {p2->getArg(1), p2->getArg(2), p2->getArg(3)};
  unsigned id2 = amd::registerPrintfFormat(*m, "a=%d b=%lld c=%f: done\n", args);
  amd::writePrintfRecord(b, p2->getArg(0), id2, args);
  b.CreateRetVoid();
  llvm::Function* p0 = define("print0", {buf});
  unsigned id0 = amd::registerPrintfFormat(*m, "hello %%\n", {});
  amd::writePrintfRecord(b, p0->getArg(0), id0, {});
  b.CreateRetVoid();
  EXPECT_EQ(id2, 1u);
  EXPECT_EQ(id0, 2u);
  EXPECT_FALSE(llvm::verifyModule(*m, &llvm::errs()));

  HostPrinter p;
  for (const llvm::MDNode* node : m->getNamedMetadata("llvm.printf.fmts")->operands())
    p.formats.push_back(parseRecord(llvm::cast<llvm::MDString>(node->getOperand(0))->getString().str()));
  p.jit = llvm::cantFail(llvm::orc::LLJITBuilder().create());
  llvm::cantFail(p.jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx))));
  p.print2 = llvm::cantFail(p.jit->lookup("print2")).toPtr<void (*)(void*, int32_t, int64_t, double)>();
  p.print0 = llvm::cantFail(p.jit->lookup("print0")).toPtr<void (*)(void*)>();
  return p;
}

std::vector<uint8_t> emptyBuffer(uint32_t capacity) {
  std::vector<uint8_t> buffer(capacity, 0xcd);
  uint32_t header[2] = {0, capacity};
  std::memcpy(buffer.data(), header, 8);
  return buffer;
}

uint32_t usedBytes(const std::vector<uint8_t>& buffer) {
  uint32_t used;
  std::memcpy(&used, buffer.data(), 4);
  return used;
}

TEST(AMDGPUPrintfRecordsOnHost, RecordsDecodeToTheFormattedText) {
  HostPrinter p = jitPrinter();
  ASSERT_EQ(p.formats.size(), 2u);
  EXPECT_EQ(p.formats[0].sizes, (std::vector<unsigned>{4, 8, 8}));
  EXPECT_TRUE(p.formats[1].sizes.empty());
  std::vector<uint8_t> buffer = emptyBuffer(256);
  p.print2(buffer.data(), -7, 1LL << 40, 2.5);
  EXPECT_EQ(usedBytes(buffer), 4u + 4 + 8 + 8);
  p.print0(buffer.data());
  p.print2(buffer.data(), 123, -5, -0.125);
  EXPECT_EQ(usedBytes(buffer), 2u * 24 + 4);
  EXPECT_EQ(decodeBuffer(buffer, p.formats),
            "a=-7 b=1099511627776 c=2.500000: done\nhello %\na=123 b=-5 c=-0.125000: done\n");
}

TEST(AMDGPUPrintfRecordsOnHost, ARecordThatDoesNotFitIsDroppedAndLaterSmallerOnesStillFit) {
  HostPrinter p = jitPrinter();
  // Room for the header, one 24-byte record and one 4-byte record.
  std::vector<uint8_t> buffer = emptyBuffer(8 + 24 + 4);
  p.print2(buffer.data(), 1, 2, 3.0);
  p.print2(buffer.data(), 4, 5, 6.0);  // dropped: no room
  EXPECT_EQ(usedBytes(buffer), 24u);
  EXPECT_EQ(buffer[8 + 24], 0xcd) << "a dropped record wrote past the used bytes";
  p.print0(buffer.data());
  EXPECT_EQ(usedBytes(buffer), 28u);
  EXPECT_EQ(decodeBuffer(buffer, p.formats), "a=1 b=2 c=3.000000: done\nhello %\n");
}

TEST(AMDGPUPrintfRecordsOnHost, ANullBufferIsIgnored) {
  HostPrinter p = jitPrinter();
  p.print2(nullptr, 1, 2, 3.0);  // must not crash
  SUCCEED();
}

}  // namespace
}  // namespace tessera::testing
