// Tensor descriptor parameters in the DSL (TensorDesc<E>): a kernel specializes on each descriptor's block, so
// tracing needs the descriptor types and the interpreter and eager mode take them from the launch's
// interp::TensorDesc arguments, which they check with the same rules as a GPU launch, at the caller's line.
// load(desc, {offsets...}) reads a block, zero outside the tensor; misuse is reported at the kernel's line.
#include <gtest/gtest.h>

#include <span>
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
  const KernelDef k = copyRows();  // params() refers into the KernelDef, which must outlive `p`
  const ParamInfo& p = k.params()[0];
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

// The BLOCK x BLOCK block of `src` at (row0, 8), stored to out (BLOCK x BLOCK, row-major).
void copy_block(TensorDesc<f32> src, Ptr<f32> out, Int row0, Const<int> BLOCK) {
  Tensor block = load(src, {row0, 8});
  store(out + expand_dims(arange(0, BLOCK), 1) * BLOCK + expand_dims(arange(0, BLOCK), 0), block);
}

KernelDef copyBlock() { return kernel("copy_block", copy_block, {"src", "out", "row0", "BLOCK"}); }

TEST(FrontendDescriptor, LoadTracesToDescLoad) {
  std::unique_ptr<ir::Module> m = copyBlock().trace({{"BLOCK", 8}}, {{"src", ir::Type::tensorDesc({8, 8}, ir::Type::f32())}});
  const std::string text = ir::print(*m);
  EXPECT_NE(text.find("= desc_load %src, %row0, %"), std::string::npos) << text;
  EXPECT_NE(text.find(": tile<8x8xf32>"), std::string::npos) << text;
}

TEST(FrontendDescriptor, LoadReadsTheBlockAndZerosOutsideTheTensor) {
  constexpr int64_t kRows = 6, kCols = 12, kBlock = 8;
  std::vector<float> matrix(kRows * kCols);
  for (size_t i = 0; i < matrix.size(); ++i) matrix[i] = static_cast<float>(i + 1);
  const interp::TensorDesc src{{matrix.data(), matrix.size() * 4}, {kRows, kCols}, {kCols, 1}, {kBlock, kBlock}};
  for (bool eager : {false, true}) {
    std::vector<float> out(kBlock * kBlock, -1.0f);
    const std::vector<interp::Arg> args{src, interp::Buffer{out.data(), out.size() * 4}, int64_t{-2}};
    eager ? copyBlock().runEager({1, 1, 1}, args, {{"BLOCK", kBlock}})
          : copyBlock().runInterpreter({1, 1, 1}, args, {{"BLOCK", kBlock}});
    for (int64_t r = 0; r < kBlock; ++r)
      for (int64_t c = 0; c < kBlock; ++c) {
        const int64_t y = r - 2, x = c + 8;  // rows -2 and -1 and columns 12 to 15 are outside
        const float expected = y >= 0 && y < kRows && x < kCols ? matrix[y * kCols + x] : 0.0f;
        ASSERT_EQ(out[r * kBlock + c], expected) << (eager ? "eager" : "interpreter") << " row " << r << " col " << c;
      }
  }
}

int g_misuseLine = 0;

// MODE 0: one offset for a 2-d block; MODE 1: a float offset; MODE 2: a tile offset.
void misuse(TensorDesc<f32> src, Ptr<f32> out, Const<int> MODE) {
  Tensor block;
  if (MODE == 0) {
    g_misuseLine = __LINE__ + 1;
    block = load(src, {0});
  } else if (MODE == 1) {
    g_misuseLine = __LINE__ + 1;
    block = load(src, {0, 1.5f});
  } else {
    g_misuseLine = __LINE__ + 1;
    block = load(src, {arange(0, 8), 0});
  }
  store(out + arange(0, 8), 1.0f);
}

// Traces `k` with MODE = each case's mode, expecting its message at `line` (which tracing that case sets).
void expectMisuse(const KernelDef& k, const DescriptorTypes& desc, std::span<const std::pair<int, const char*>> cases,
                  const int& line) {
  for (const auto& [mode, message] : cases) {
    try {
      k.trace({{"MODE", mode}}, desc);
      ADD_FAILURE() << "traced misuse " << mode;
    } catch (const Error& e) {
      EXPECT_NE(e.message().find(message), std::string::npos) << e.what();
      EXPECT_EQ(e.location().line, static_cast<unsigned>(line)) << e.what();
    }
  }
}

TEST(FrontendDescriptor, LoadMisuseIsReportedAtTheKernelsLine) {
  const KernelDef k = kernel("misuse", misuse, {"src", "out", "MODE"});
  const DescriptorTypes desc{{"src", ir::Type::tensorDesc({8, 8}, ir::Type::f32())}};
  const std::pair<int, const char*> cases[] = {
      {0, "'load': a descriptor of tensordesc<8x8xf32> takes 2 offsets (one per dimension), got 1"},
      {1, "'load': descriptor offset #1 must be an integer scalar, got f32"},
      {2, "'load': descriptor offset #0 must be an integer scalar, got tile<8xi32>"}};
  expectMisuse(k, desc, cases, g_misuseLine);
}

// The BLOCK x BLOCK block of `src` at (row0, 8), doubled, stored through `dst` at (row0 + shift, 8 + shift).
void move_block(TensorDesc<f32> src, TensorDesc<f32> dst, Int row0, Int shift, Const<int> BLOCK) {
  store(dst, {row0 + shift, shift + 8}, load(src, {row0, 8}) * 2.0f);
}

KernelDef moveBlock() { return kernel("move_block", move_block, {"src", "dst", "row0", "shift", "BLOCK"}); }

TEST(FrontendDescriptor, StoreTracesToDescStoreAndWritesOnlyInsideTheTensor) {
  const ir::Type desc = ir::Type::tensorDesc({8, 8}, ir::Type::f32());
  const std::string text = ir::print(*moveBlock().trace({{"BLOCK", 8}}, {{"src", desc}, {"dst", desc}}));
  EXPECT_NE(text.find("desc_store %dst, %"), std::string::npos) << text;
  constexpr int64_t kRows = 6, kCols = 12, kBlock = 8;
  std::vector<float> matrix(kRows * kCols);
  for (size_t i = 0; i < matrix.size(); ++i) matrix[i] = static_cast<float>(i + 1);
  const interp::TensorDesc src{{matrix.data(), matrix.size() * 4}, {kRows, kCols}, {kCols, 1}, {kBlock, kBlock}};
  for (bool eager : {false, true}) {
    // dst: 5 x 14 elements in rows of 16 (the two padding columns must stay untouched too).
    std::vector<float> out(5 * 16, -1.0f);
    const interp::TensorDesc dst{{out.data(), out.size() * 4}, {5, 14}, {16, 1}, {kBlock, kBlock}};
    const std::vector<interp::Arg> args{src, dst, int64_t{-2}, int64_t{3}};
    eager ? moveBlock().runEager({1, 1, 1}, args, {{"BLOCK", kBlock}})
          : moveBlock().runInterpreter({1, 1, 1}, args, {{"BLOCK", kBlock}});
    for (int64_t y = 0; y < 5; ++y)
      for (int64_t x = 0; x < 16; ++x) {
        // dst (y, x) holds block element (y - 1, x - 11), which is src (y - 3, x - 3) read at rows -2.., cols 8..
        const int64_t r = y - 1, c = x - 11, sy = r - 2, sx = c + 8;
        const bool written = x < 14 && r >= 0 && r < kBlock && c >= 0 && c < kBlock;
        const float read = sy >= 0 && sy < kRows && sx >= 0 && sx < kCols ? matrix[sy * kCols + sx] : 0.0f;
        ASSERT_EQ(out[y * 16 + x], written ? 2 * read : -1.0f)
            << (eager ? "eager" : "interpreter") << " row " << y << " col " << x;
      }
  }
}

int g_storeMisuseLine = 0;

// MODE 0: a value of another block shape; MODE 1: one offset for a 2-d block; MODE 2: a pointer value.
void store_misuse(TensorDesc<f32> dst, Ptr<f32> out, Const<int> MODE) {
  if (MODE == 0) {
    g_storeMisuseLine = __LINE__ + 1;
    store(dst, {0, 0}, zeros<f32>({4, 8}));
  } else if (MODE == 1) {
    g_storeMisuseLine = __LINE__ + 1;
    store(dst, {0}, 1.0f);
  } else {
    g_storeMisuseLine = __LINE__ + 1;
    store(dst, {0, 0}, out);
  }
}

TEST(FrontendDescriptor, StoreMisuseIsReportedAtTheKernelsLine) {
  const KernelDef k = kernel("store_misuse", store_misuse, {"dst", "out", "MODE"});
  const DescriptorTypes desc{{"dst", ir::Type::tensorDesc({8, 8}, ir::Type::f32())}};
  const std::pair<int, const char*> cases[] = {
      {0, "'store': incompatible shapes [4, 8] and [8, 8]"},
      {1, "'store': a descriptor of tensordesc<8x8xf32> takes 2 offsets (one per dimension), got 1"},
      {2, "'store': cannot store pointers"}};
  expectMisuse(k, desc, cases, g_storeMisuseLine);
}

}  // namespace
