// Tensor descriptor parameters in the DSL (TensorDesc<E>): a kernel specializes on each descriptor's block, so
// tracing needs the descriptor types and the interpreter and eager mode take them from the launch's
// interp::TensorDesc arguments, which they check with the same rules as a GPU launch, at the caller's line.
#include <gtest/gtest.h>

#include <vector>

#include "ir/Printer.h"
#include "tessera/tessera.h"

using namespace tessera;

namespace {

int g_calls = 0;

void copy_rows(TensorDesc<f16> src, Ptr<f32> out, Const<int> BLOCK) {
  ++g_calls;
  store(out + arange(0, BLOCK), 1.0f);
}

KernelDef copyRows() { return kernel("copy_rows", copy_rows, {"src", "out", "BLOCK"}); }

TEST(FrontendDescriptor, TheParameterIsADescriptorOfItsElement) {
  const ParamInfo& p = copyRows().params()[0];
  EXPECT_EQ(p.kind, ParamKind::TensorDescriptor);
  EXPECT_EQ(p.type, ir::Type::f16());
}

TEST(FrontendDescriptor, TracingSpecializesOnTheDescriptorsType) {
  const ir::Type desc = ir::Type::tensorDesc({16, 64}, ir::Type::f16());
  std::unique_ptr<ir::Module> m = copyRows().trace({{"BLOCK", 8}}, {{"src", desc}});
  EXPECT_NE(ir::print(*m).find("func @copy_rows(%src: tensordesc<16x64xf16>, %out: ptr<f32>)"), std::string::npos)
      << ir::print(*m);
}

TEST(FrontendDescriptor, TracingWithoutOrWithAWrongTypeIsAnError) {
  const int line = __LINE__ + 2;
  try {
    copyRows().trace({{"BLOCK", 8}});
    FAIL() << "traced without the descriptor's block";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("tracing needs the block shape of descriptor parameter 'src'"), std::string::npos);
    EXPECT_EQ(e.location().line, static_cast<unsigned>(line));
  }
  try {
    copyRows().trace({{"BLOCK", 8}}, {{"src", ir::Type::tensorDesc({16, 64}, ir::Type::f32())}});
    FAIL() << "traced with a descriptor of f32";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("takes a tensordesc of f16, not tensordesc<16x64xf32>"), std::string::npos);
  }
}

TEST(FrontendDescriptor, InterpreterAndEagerTakeDescriptorsAndCheckThem) {
  std::vector<uint16_t> matrix(32 * 64);
  std::vector<float> out(8);
  const interp::Buffer data{matrix.data(), matrix.size() * 2}, outBuffer{out.data(), out.size() * 4};
  const interp::TensorDesc good{data, {32, 64}, {64, 1}, {16, 64}};
  for (bool eager : {false, true}) {
    std::fill(out.begin(), out.end(), 0.0f);
    g_calls = 0;
    if (eager)
      copyRows().runEager({1, 1, 1}, {good, outBuffer}, {{"BLOCK", 8}});
    else
      copyRows().runInterpreter({1, 1, 1}, {good, outBuffer}, {{"BLOCK", 8}});
    EXPECT_EQ(g_calls, 1);
    EXPECT_EQ(out, std::vector<float>(8, 1.0f));
    const interp::TensorDesc oddStride{data, {32, 60}, {60, 1}, {16, 64}};  // 120-byte rows
    const int line = __LINE__ + 3;
    try {
      const KernelDef k = copyRows();
      eager ? k.runEager({1, 1, 1}, {oddStride, outBuffer}, {{"BLOCK", 8}}) : k.runInterpreter({1, 1, 1}, {oddStride, outBuffer}, {{"BLOCK", 8}});
      FAIL() << "ran with a descriptor whose rows are not a multiple of 16 bytes";
    } catch (const Error& e) {
      EXPECT_NE(e.message().find("kernel 'copy_rows': descriptor argument 'src': strides[0] is 60 elements "
                                 "(120 bytes); a positive multiple of 16 bytes below 2^40"),
                std::string::npos)
          << e.what();
      EXPECT_EQ(e.location().line, static_cast<unsigned>(line));
    }
    try {
      copyRows().runInterpreter({1, 1, 1}, {outBuffer, outBuffer}, {{"BLOCK", 8}});
      FAIL() << "ran with a buffer for a descriptor";
    } catch (const Error& e) {
      EXPECT_NE(e.message().find("argument 'src' must be a tensor descriptor"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
