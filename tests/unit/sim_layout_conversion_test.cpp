// Layout conversions between random layouts, executed: the property linear_layout_test checks on the host (every
// element reaches its place) run here as GPU code on the emulator, for nvptx (sm_90a, warps of 32) and amdgpu
// (gfx942, warps of 64). Each case is a laid-out kernel that loads a tile in a plain blocked layout, converts it
// to a random layout A (blocked, slice or #linear), then to a random layout B, then back, and stores it: the output
// must equal the input, with no finding from memcheck, racecheck, initcheck or synccheck. Whichever way the backend
// lowers each conversion (register permutation, warp shuffles, shared memory, in rounds), it runs here.
#include <gtest/gtest.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include <cstring>
#include <sstream>

#include "RandomLayouts.h"
#include "backends/Target.h"
#include "ir/FloatFormats.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"
#include "jit/CompiledKernel.h"
#include "jit/sim/SimRuntime.h"
#include "tests/gpucheck/GpuCheck.h"
#include "transforms/PassManager.h"

namespace tessera::testing {
namespace {

std::string shapeText(const Shape& shape) {
  std::string s;
  for (int64_t d : shape) s += std::to_string(d) + "x";
  return s;
}

std::string tileType(const Shape& shape, const std::string& element, const Layout& layout) {
  return "tile<" + shapeText(shape) + element + ", " + layout.str() + ">";
}

// `layout` with every dimension but `keep` sliced away, and the layouts met on the way back up: expanding
// dimension `dims[i]` of layouts[i] gives layouts[i + 1] (layouts.back() is `layout`).
struct SliceChain {
  std::vector<int> dims;
  std::vector<Layout> layouts;
};
SliceChain sliceAllBut(const Layout& layout, int keep) {
  SliceChain chain;
  chain.layouts.push_back(layout);
  for (int d = layout.rank() - 1; d >= 0; --d)
    if (d != keep) {
      chain.dims.insert(chain.dims.begin(), d);
      chain.layouts.insert(chain.layouts.begin(), Layout::slice(d, chain.layouts.front()));
    }
  return chain;
}

// out = in over a row-major tile of `shape` (`element` f32 or f16), through `plain` -> a -> b -> plain.
std::string conversionKernel(const Shape& shape, const std::string& element, const Layout& plain, const Layout& a,
                             const Layout& b) {
  std::ostringstream k;
  const int rank = static_cast<int>(shape.size());
  const std::string index = tileType(shape, "i32", plain);
  k << "func @convert(%in: ptr<" << element << "> {divisibility = 16}, %out: ptr<" << element
    << "> {divisibility = 16}) {\n";
  int64_t stride = 1;
  std::string offsets;
  for (int d = rank - 1; d >= 0; --d) {
    // The row-major offset of dimension d: arange over it, expanded back to rank, times its stride, broadcast.
    SliceChain chain = sliceAllBut(plain, d);
    Shape partial = {shape[d]};
    std::string v = "%r" + std::to_string(d);
    k << "  " << v << " = arange {end = " << shape[d] << ", start = 0} : "
      << tileType(partial, "i32", chain.layouts[0]) << "\n";
    for (size_t i = 0; i < chain.dims.size(); ++i) {
      partial.insert(partial.begin() + chain.dims[i], 1);
      const std::string next = v + "e" + std::to_string(i);
      k << "  " << next << " = expand_dims " << v << " {axis = " << chain.dims[i] << "} : "
        << tileType(partial, "i32", chain.layouts[i + 1]) << "\n";
      v = next;
    }
    const std::string scaled = "%s" + std::to_string(d);
    k << "  %k" << d << " = constant {value = " << stride << "} : " << tileType(partial, "i32", plain) << "\n";
    k << "  " << scaled << " = mul " << v << ", %k" << d << " : " << tileType(partial, "i32", plain) << "\n";
    const std::string full = "%b" + std::to_string(d);
    k << "  " << full << " = broadcast " << scaled << " : " << index << "\n";
    if (offsets.empty()) {
      offsets = full;
    } else {
      k << "  %o" << d << " = add " << offsets << ", " << full << " : " << index << "\n";
      offsets = "%o" + std::to_string(d);
    }
    stride *= shape[d];
  }
  const std::string ptrs = tileType(shape, "ptr<" + element + ">", plain);
  k << "  %ins = splat %in : " << ptrs << "\n  %inp = addptr %ins, " << offsets << " : " << ptrs << "\n";
  k << "  %v = load %inp : " << tileType(shape, element, plain) << "\n";
  k << "  %a = convert_layout %v : " << tileType(shape, element, a) << "\n";
  k << "  %b = convert_layout %a : " << tileType(shape, element, b) << "\n";
  k << "  %c = convert_layout %b : " << tileType(shape, element, plain) << "\n";
  k << "  %outs = splat %out : " << ptrs << "\n  %outp = addptr %outs, " << offsets << " : " << ptrs << "\n";
  k << "  store %outp, %c\n  return\n}\n";
  return k.str();
}

// The laid-out kernel through the shared-memory passes, lowered and optimized for `target` as the JIT would.
std::shared_ptr<const jit::CompiledKernel> compileLaidOut(const std::string& text, const std::string& targetName,
                                                          const std::string& arch, int numWarps) {
  std::unique_ptr<ir::Module> m = ir::parseModule(text, "convert.tir");
  ir::verify(*m);
  ir::Function& f = *m->functions().at(0);
  f.attrs()["num_warps"] = ir::Attr::integer(numWarps);
  std::unique_ptr<backends::Target> target = backends::createTarget(targetName);
  transforms::PassManager passes;
  const transforms::PassOptions options = target->passOptions(numWarps, 1);
  passes.add("allocate-shared-memory", options);
  passes.add("insert-barriers", options);
  passes.run(f);
  return gpucheck::compileAfterPasses(f, targetName, arch, numWarps);
}

gpucheck::HostBuffer sequence(const std::string& element, int64_t n) {
  gpucheck::HostBuffer b{element == "f32" ? ir::ScalarKind::F32 : ir::ScalarKind::F16, {}, std::nullopt};
  for (int64_t i = 0; i < n; ++i) {
    const float value = static_cast<float>(i % 2048);  // exact in f16 too
    if (element == "f32") {
      b.bytes.resize(b.bytes.size() + 4);
      std::memcpy(b.bytes.data() + 4 * i, &value, 4);
    } else {
      const uint16_t bits = static_cast<uint16_t>(ir::encodeF16(value));
      b.bytes.resize(b.bytes.size() + 2);
      std::memcpy(b.bytes.data() + 2 * i, &bits, 2);
    }
  }
  return b;
}

struct Emulated {
  const char* target;
  const char* arch;
  int64_t warpSize;
  const char* shuffle;  // the warp shuffle as it appears in the optimized LLVM IR
};

class SimLayoutConversion : public ::testing::TestWithParam<Emulated> {};

TEST_P(SimLayoutConversion, RandomConversionChainsReturnEveryElementToItsPlace) {
  const Emulated e = GetParam();
  sim::SimRuntime& runtime = sim::simRuntime(e.arch);
  int cases = 0, viaShared = 0, viaShuffles = 0;
  for (uint32_t seed = 0; seed < 24; ++seed) {
    std::mt19937 rng(seed);
    const int rank = static_cast<int>(pick(rng, 1, 3));
    const Machine m{e.warpSize, int64_t(1) << pick(rng, 0, 3)};
    // The loads and stores: one element per thread along the last dimension, warps along the first.
    std::vector<int64_t> tpw(rank, 1), wpc(rank, 1), order(rank);
    tpw[rank - 1] = m.warpSize;
    wpc[0] = m.numWarps;
    for (int d = 0; d < rank; ++d) order[d] = rank - 1 - d;
    const Layout plain = Layout::blocked(std::vector<int64_t>(rank, 1), tpw, wpc, order);
    const Layout a = randomDistributed(rng, rank, m);
    Layout b = randomDistributed(rng, rank, m);
    const Shape shape = fitShape(b, fitShape(a, randomShape(rng, rank, int64_t(1) << 10)));
    if (pick(rng, 0, 2) == 0) b = Layout::linear(randomLinear(rng, shape, m));
    const std::string element = pick(rng, 0, 1) == 0 ? "f32" : "f16";
    const std::string text = conversionKernel(shape, element, plain, a, b);
    SCOPED_TRACE("seed " + std::to_string(seed) + ", " + std::to_string(m.numWarps) + " warps:\n" + text);
    std::shared_ptr<const jit::CompiledKernel> kernel = compileLaidOut(text, e.target, e.arch, int(m.numWarps));
    const ir::Type ptr = ir::Type::ptr(element == "f32" ? ir::Type::f32() : ir::Type::f16());
    const int64_t n = numElements(shape);
    gpucheck::HostBuffer input = sequence(element, n);
    gpucheck::HostBuffer zeros{input.element, std::vector<uint8_t>(input.bytes.size()), std::nullopt};
    std::vector<gpucheck::HostBuffer> out =
        gpucheck::launchCompiled(kernel, {ptr, ptr}, {1, 1, 1}, {input, zeros}, runtime);
    ASSERT_EQ(out.size(), 2u);
    ASSERT_EQ(out[1].bytes, input.bytes) << "the converted tile differs from the input";
    std::optional<sim::Report> report = runtime.lastReport();
    ASSERT_TRUE(report);
    EXPECT_FALSE(report->failed()) << report->str();
    ++cases;
    viaShared += kernel->sharedBytes > 0;
    viaShuffles += kernel->optimizedLLVMIR.find(e.shuffle) != std::string::npos;
  }
  EXPECT_EQ(cases, 24);
  // Both non-trivial lowerings occur, so the cases mean something.
  EXPECT_GT(viaShared, 0);
  EXPECT_GT(viaShuffles, 0);
}

// Layouts made of 8 x 8 matrices of 16-bit elements (a lane's word is two neighbouring columns, 4 lanes a 16-byte
// row, 8 lanes a matrix: the mma.sync and wgmma accumulators, the mma.sync A operand) are read from the exchange
// buffer with ldmatrix and, on sm_90, written with stmatrix (backends/common/MatrixTransfers.h). Each case converts
// a plain tile into such a layout (ldmatrix) and back (stmatrix), on the emulator.
struct MatrixLayoutCase {
  Shape shape;
  int64_t numWarps;
  std::vector<LinearLayout::Basis> registers, warps;  // the lanes are the matrix rows' (kMatrixLanes)
  int matrices;  // per instruction: x1, x2, x4
  bool planned;  // whether the layout is one of matrices
};

class SimMatrixConversion : public ::testing::TestWithParam<const char*> {};

TEST_P(SimMatrixConversion, MatrixLayoutsMoveWithLdmatrixAndStmatrix) {
  const std::string arch = GetParam();
  sim::SimRuntime& runtime = sim::simRuntime(arch);
  const std::vector<LinearLayout::Basis> matrixLanes = {{0, 2}, {0, 4}, {1, 0}, {2, 0}, {4, 0}};
  const MatrixLayoutCase cases[] = {
      {{8, 8}, 1, {{0, 1}}, {}, 1, true},
      {{16, 8}, 1, {{0, 1}, {8, 0}}, {}, 2, true},
      {{8, 32}, 2, {{0, 1}, {0, 8}, {0, 16}}, {{0, 0}}, 4, true},  // 2 warps holding the same elements
      {{16, 16}, 1, {{0, 1}, {8, 0}, {0, 8}}, {}, 4, true},        // the mma.sync A operand
      {{16, 16}, 2, {{0, 1}, {8, 0}, {0, 8}}, {{1, 0}}, 4, true},   // warp 1's rows permuted
      {{8, 16}, 2, {{0, 1}, {0, 8}}, {{0, 4}}, 2, false},          // a warp base inside a 16-byte row
      {{32, 64}, 8, {{0, 1}, {8, 0}, {16, 0}}, {{0, 8}, {0, 16}, {0, 32}}, 4, true},             // attention's output
      {{64, 64}, 4, {{0, 1}, {8, 0}, {0, 8}, {0, 16}, {0, 32}}, {{16, 0}, {32, 0}}, 4, true},  // the wgmma accumulator
  };
  for (const MatrixLayoutCase& c : cases) {
    const int rank = static_cast<int>(c.shape.size());
    std::vector<LinearLayout::InDim> ins = {{ir::kRegisterDim, c.registers}, {ir::kLaneDim, matrixLanes},
                                            {ir::kWarpDim, c.warps}};
    std::vector<LinearLayout::OutDim> outs;
    for (int d = 0; d < rank; ++d) outs.push_back({ir::tensorDimName(d), c.shape[d]});
    const Layout matrix = Layout::linear(LinearLayout(std::move(ins), std::move(outs)));
    // One element a thread along the rows: plain -> matrices (ldmatrix) -> plain (stmatrix) -> plain (no-op). A
    // column-major reader would take a pad that leaves rows unaligned (its conflict-free one), and no stmatrix.
    const Layout rowsFirst = Layout::blocked({1, 1}, {1, 32}, {c.numWarps, 1}, {1, 0});
    const std::string text = conversionKernel(c.shape, "f16", rowsFirst, matrix, rowsFirst);
    SCOPED_TRACE(arch + ", " + std::to_string(c.numWarps) + " warps:\n" + text);
    std::shared_ptr<const jit::CompiledKernel> kernel = compileLaidOut(text, "nvptx", arch, int(c.numWarps));
    const ir::Type ptr = ir::Type::ptr(ir::Type::f16());
    gpucheck::HostBuffer input = sequence("f16", numElements(c.shape));
    gpucheck::HostBuffer zeros{input.element, std::vector<uint8_t>(input.bytes.size()), std::nullopt};
    std::vector<gpucheck::HostBuffer> out = gpucheck::launchCompiled(kernel, {ptr, ptr}, {1, 1, 1}, {input, zeros}, runtime);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[1].bytes, input.bytes) << "the converted tile differs from the input";
    std::optional<sim::Report> report = runtime.lastReport();
    ASSERT_TRUE(report);
    EXPECT_FALSE(report->failed()) << report->str();
    // The matrix instructions are the ones the layouts allow, and only those.
    const std::string x = ".x" + std::to_string(c.matrices);
    const std::string& ir = kernel->optimizedLLVMIR;
    EXPECT_EQ(ir.find("llvm.nvvm.ldmatrix.sync.aligned.m8n8" + x + ".b16") != std::string::npos, c.planned);
    EXPECT_EQ(ir.find("stmatrix.sync.aligned.m8n8" + x + ".shared.b16") != std::string::npos,
              c.planned && arch == "sm_90a");
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, SimMatrixConversion, ::testing::Values("sm_80", "sm_90a"),
                         [](const auto& info) { return std::string(info.param); });

INSTANTIATE_TEST_SUITE_P(Targets, SimLayoutConversion,
                         ::testing::Values(Emulated{"nvptx", "sm_90a", 32, "@llvm.nvvm.shfl.sync"},
                                           Emulated{"amdgpu", "gfx942", 64, "@llvm.amdgcn.ds.bpermute"}),
                         [](const auto& info) { return std::string(info.param.target); });

}  // namespace
}  // namespace tessera::testing
