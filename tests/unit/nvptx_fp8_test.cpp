// The software fp8 conversions the lowering emits (backends/common/FP8Conversions.h) are target-independent
// LLVM IR, so they can be checked exactly on the host: JIT-compile them for the host CPU and compare against
// the reference interpreter's conversions on every fp8 code, every rounding midpoint, its neighbours, and
// the special values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/TargetSelect.h>

#include "backends/common/FP8Conversions.h"
#include "ir/FloatFormats.h"

namespace tessera::testing {
namespace {

using backends::IRBuilder;

struct Fp8Functions {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  uint8_t (*encode32)(float) = nullptr;
  uint8_t (*encode64)(double) = nullptr;
  float (*decode)(uint8_t) = nullptr;
};

Fp8Functions jitConversions(ir::ScalarKind kind) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto m = std::make_unique<llvm::Module>("fp8", *ctx);
  ir::Type fp8 = ir::Type::scalar(kind);
  IRBuilder b(*ctx);
  auto define = [&](const char* name, llvm::Type* ret, llvm::Type* arg) {
    auto* f = llvm::Function::Create(llvm::FunctionType::get(ret, {arg}, false), llvm::GlobalValue::ExternalLinkage,
                                     name, m.get());
    b.SetInsertPoint(llvm::BasicBlock::Create(*ctx, "entry", f));
    return f;
  };
  llvm::Function* e32 = define("enc32", b.getInt8Ty(), b.getFloatTy());
  b.CreateRet(backends::encodeFP8(b, e32->getArg(0), fp8));
  llvm::Function* e64 = define("enc64", b.getInt8Ty(), b.getDoubleTy());
  b.CreateRet(backends::encodeFP8(b, e64->getArg(0), fp8));
  llvm::Function* d = define("dec", b.getFloatTy(), b.getInt8Ty());
  b.CreateRet(backends::decodeFP8(b, d->getArg(0), fp8));
  EXPECT_FALSE(llvm::verifyModule(*m, &llvm::errs()));

  Fp8Functions fns;
  fns.jit = llvm::cantFail(llvm::orc::LLJITBuilder().create());
  auto& jd = fns.jit->getMainJITDylib();
  jd.addGenerator(llvm::cantFail(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      fns.jit->getDataLayout().getGlobalPrefix())));
  llvm::cantFail(fns.jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx))));
  fns.encode32 = llvm::cantFail(fns.jit->lookup("enc32")).toPtr<uint8_t (*)(float)>();
  fns.encode64 = llvm::cantFail(fns.jit->lookup("enc64")).toPtr<uint8_t (*)(double)>();
  fns.decode = llvm::cantFail(fns.jit->lookup("dec")).toPtr<float (*)(uint8_t)>();
  return fns;
}

// `cast` to fp8 is the interpreter's roundTo (which saturates infinities too) followed by encoding.
void checkFormat(ir::ScalarKind kind, uint8_t (*encodeBits)(double), double (*roundTo)(double),
                 double (*refDecode)(uint8_t)) {
  auto refEncode = [&](double v) { return encodeBits(roundTo(v)); };
  Fp8Functions f = jitConversions(kind);
  std::vector<double> finite;
  for (int code = 0; code < 256; ++code) {
    double ref = refDecode(static_cast<uint8_t>(code));
    float got = f.decode(static_cast<uint8_t>(code));
    if (std::isnan(ref)) {
      EXPECT_TRUE(std::isnan(got)) << "decode 0x" << std::hex << code;
      continue;
    }
    EXPECT_EQ(static_cast<double>(got), ref) << "decode 0x" << std::hex << code;
    EXPECT_EQ(std::signbit(got), std::signbit(ref)) << "decode 0x" << std::hex << code;
    if (std::isfinite(ref)) finite.push_back(ref);
  }
  std::sort(finite.begin(), finite.end());
  std::vector<double> probes = {0.0, -0.0, std::numeric_limits<double>::infinity(),
                                -std::numeric_limits<double>::infinity(), 1e30, -1e30, 1e-30, -1e-30,
                                std::numeric_limits<float>::denorm_min(), 1e6, -1e6};
  for (size_t i = 0; i < finite.size(); ++i) {
    double v = finite[i];
    probes.push_back(v);
    probes.push_back(std::nextafter(static_cast<float>(v), 1e9f));
    probes.push_back(std::nextafter(static_cast<float>(v), -1e9f));
    if (i + 1 < finite.size()) {
      float mid = static_cast<float>((finite[i] + finite[i + 1]) / 2);  // exact: at most 5 significant bits
      probes.push_back(mid);
      probes.push_back(std::nextafter(mid, 1e9f));
      probes.push_back(std::nextafter(mid, -1e9f));
    }
  }
  for (double p : probes) {
    float pf = static_cast<float>(p);
    EXPECT_EQ(int(f.encode32(pf)), int(refEncode(pf))) << "encode f32 " << pf;
    EXPECT_EQ(int(f.encode64(p)), int(refEncode(p))) << "encode f64 " << p;
  }
  float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(int(f.encode32(nan)), int(refEncode(nan)));
  EXPECT_EQ(int(f.encode32(-nan)), int(refEncode(-static_cast<double>(nan))));
}

TEST(NVPTXFp8, E4M3ConversionsMatchTheInterpreter) {
  checkFormat(ir::ScalarKind::F8E4M3, ir::encodeF8E4M3, ir::roundToF8E4M3, ir::decodeF8E4M3);
}

TEST(NVPTXFp8, E5M2ConversionsMatchTheInterpreter) {
  checkFormat(ir::ScalarKind::F8E5M2, ir::encodeF8E5M2, ir::roundToF8E5M2, ir::decodeF8E5M2);
}

}  // namespace
}  // namespace tessera::testing
