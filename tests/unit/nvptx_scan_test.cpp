// The parallel scan lowering (backends/common/LowerReduce.cpp): per-thread register scan, XOR-butterfly warp
// scan, cross-warp carries through shared memory.
//  * Every configuration (forward/reverse cumsum, max-scan, a 2-input order-sensitive scan; axis 0 and 1 of 2-D
//    tiles; 1, 4 and 8 warps; several registers per thread) compiles to PTX that ptxas accepts for sm_90a and
//    sm_80 without spills, uses warp shuffles, no serial per-line loop, and one barrier exactly when warps
//    split the axis.
//  * The same lowered LLVM IR runs on the host under a small SIMT emulation (one host thread per GPU thread;
//    shuffles and barriers rendezvous through std::barrier) and must equal a serial scan exactly.
#include <gtest/gtest.h>

#include <barrier>
#include <cstring>
#include <random>
#include <thread>

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/TargetSelect.h>

#include "NVPTXTestUtil.h"
#include "backends/common/LowerToLLVM.h"
#include "ir/Layout.h"

namespace tessera::testing {
namespace {

enum class Combine { Sum, Max, Recurrence };  // Recurrence: 2 inputs (a, b), (a1*a2, a2*b1 + b2): not commutative

struct ScanCase {
  int64_t rows, cols;
  std::string layout;  // a 2-D #blocked layout
  int numWarps;
  int axis;
  bool reverse;
  Combine combine;
  std::string name() const {
    return std::to_string(rows) + "x" + std::to_string(cols) + " " + layout + " warps=" + std::to_string(numWarps) +
           " axis=" + std::to_string(axis) + (reverse ? " reverse" : "") +
           (combine == Combine::Sum ? " sum" : combine == Combine::Max ? " max" : " recurrence");
  }
};

// A kernel (%in0, %in1, %out0, %out1) that loads a rows x cols row-major tile (two for Recurrence), scans it, and
// stores the result(s). Scan scratch follows the transforms/analysis/SharedScratch.h rule (each operand's full tile).
std::string scanKernel(const ScanCase& c) {
  const bool two = c.combine == Combine::Recurrence;
  const std::string elem = c.combine == Combine::Sum || c.combine == Combine::Max ? "f32" : "i32";
  const std::string shape = std::to_string(c.rows) + "x" + std::to_string(c.cols);
  const std::string T = "tile<" + shape + "x" + elem + ", #P>", PT = "tile<" + shape + "xptr<" + elem + ">, #P>";
  const int64_t bytes = c.rows * c.cols * 4;
  const int64_t smem = two ? 2 * bytes : bytes;
  std::string s = "func @k(%in0: ptr<" + elem + "> {divisibility = 16}, %in1: ptr<" + elem +
                  "> {divisibility = 16}, %out0: ptr<" + elem + "> {divisibility = 16}, %out1: ptr<" + elem +
                  "> {divisibility = 16}) attributes {num_warps = " + std::to_string(c.numWarps) +
                  ", smem_bytes = " + std::to_string(smem) + "} {\n";
  s += "  %i = arange {end = " + std::to_string(c.rows) + ", start = 0} : tile<" + std::to_string(c.rows) + "xi32, #R>\n";
  s += "  %j = arange {end = " + std::to_string(c.cols) + ", start = 0} : tile<" + std::to_string(c.cols) + "xi32, #C>\n";
  s += "  %i2 = expand_dims %i {axis = 1} : tile<" + std::to_string(c.rows) + "x1xi32, #P>\n";
  s += "  %j2 = expand_dims %j {axis = 0} : tile<1x" + std::to_string(c.cols) + "xi32, #P>\n";
  s += "  %kc = constant {value = " + std::to_string(c.cols) + "} : tile<" + std::to_string(c.rows) + "x1xi32, #P>\n";
  s += "  %ik = mul %i2, %kc : tile<" + std::to_string(c.rows) + "x1xi32, #P>\n";
  s += "  %ib = broadcast %ik : tile<" + shape + "xi32, #P>\n";
  s += "  %jb = broadcast %j2 : tile<" + shape + "xi32, #P>\n";
  s += "  %offs = add %ib, %jb : tile<" + shape + "xi32, #P>\n";
  for (const char* io : {"in0", "in1", "out0", "out1"}) {
    s += "  %" + std::string(io) + "b = splat %" + io + " : " + PT + "\n";
    s += "  %" + std::string(io) + "p = addptr %" + io + "b, %offs : " + PT + "\n";
  }
  s += "  %x = load %in0p : " + T + "\n";
  const std::string attrs = "{axis = " + std::to_string(c.axis) + ", reverse = " + (c.reverse ? "true" : "false") +
                            ", smem_bytes = " + std::to_string(smem) + ", smem_offset = 0}";
  if (!two) {
    const std::string op = c.combine == Combine::Sum ? "add" : "max";
    s += "  %r = scan %x " + attrs + " : " + T + " {\n  ^(%a: f32, %b: f32):\n    %s = " + op +
         " %a, %b : f32\n    yield %s\n  }\n";
    s += "  store %out0p, %r\n";
  } else {
    s += "  %y = load %in1p : " + T + "\n";
    s += "  %ra, %rb = scan %x, %y " + attrs + " : " + T + ", " + T +
         " {\n  ^(%a1: i32, %b1: i32, %a2: i32, %b2: i32):\n    %a = mul %a1, %a2 : i32\n"
         "    %m = mul %a2, %b1 : i32\n    %b = add %m, %b2 : i32\n    yield %a, %b\n  }\n";
    s += "  store %out0p, %ra\n  store %out1p, %rb\n";
  }
  s += "  return\n}\n";
  return withLayouts(s, {{"#P", c.layout},
                         {"#R", "#slice{dim = 1, parent = " + c.layout + "}"},
                         {"#C", "#slice{dim = 0, parent = " + c.layout + "}"}});
}

// Layouts over 1, 4 and 8 warps, with the axis split over registers only, lanes, warps, and repeated registers.
std::vector<ScanCase> allCases() {
  struct L {
    int64_t rows, cols;
    std::string layout;
    int warps;
  };
  const std::vector<L> layouts = {
      {32, 32, "#blocked{order = [1, 0], spt = [1, 4], tpw = [4, 8], wpc = [4, 1]}", 4},
      {32, 64, "#blocked{order = [1, 0], spt = [2, 2], tpw = [2, 16], wpc = [2, 2]}", 4},
      {16, 16, "#blocked{order = [0, 1], spt = [2, 1], tpw = [8, 4], wpc = [1, 1]}", 1},
      {64, 32, "#blocked{order = [1, 0], spt = [1, 1], tpw = [1, 32], wpc = [8, 1]}", 8},
      {64, 16, "#blocked{order = [0, 1], spt = [4, 1], tpw = [4, 8], wpc = [2, 4]}", 8},
  };
  std::vector<ScanCase> cases;
  for (const L& l : layouts)
    for (int axis : {0, 1})
      for (bool reverse : {false, true})
        for (Combine combine : {Combine::Sum, Combine::Max, Combine::Recurrence})
          cases.push_back({l.rows, l.cols, l.layout, l.warps, axis, reverse, combine});
  return cases;
}

// Whether some warp (or, with `lanes`, lane) bit of the layout moves along the axis for this tile: then the scan
// needs shared memory (shuffles).
bool threadsSplitAxis(const ScanCase& c, bool lanes) {
  const std::string tile = "tile<" + std::to_string(c.rows) + "x" + std::to_string(c.cols) + "xf32, " + c.layout + ">";
  std::unique_ptr<ir::Module> m = ir::parseModule("func @f(%a: ptr<f32>) {\n  %t = splat %a : " +
                                                      withLayouts(tile, {}) + "\n  return\n}\n", "layout.tir");
  ir::Type t = (*m->functions().at(0)->body()->ops().begin())->result(0)->type();
  std::optional<ir::Layout> layout = ir::Layout::ofType(t);
  for (int64_t bit = 1; bit < (lanes ? 32 : c.numWarps); bit <<= 1)
    if (layout->coords({c.rows, c.cols}, lanes ? 0 : bit, lanes ? bit : 0, 0)[c.axis] != 0) return true;
  return false;
}

TEST(NVPTXScan, EveryLayoutAssemblesWithShufflesAndNoSerialLoop) {
  for (const ScanCase& c : allCases()) {
    SCOPED_TRACE(c.name());
    Compiled out = compileAndAssemble(scanKernel(c), /*clean=*/true, c.numWarps);
    EXPECT_EQ(out.llvm.find("scan.line"), std::string::npos) << "serial fallback used";
    EXPECT_EQ(countOccurrences(out.ptx, "shfl.sync.bfly") > 0, threadsSplitAxis(c, /*lanes=*/true)) << out.ptx;
    EXPECT_EQ(countOccurrences(out.ptx, "bar.sync"), threadsSplitAxis(c, /*lanes=*/false) ? 1 : 0) << out.ptx;
  }
}

// ---- host SIMT emulation

struct Simulator {
  int threads = 0;
  std::unique_ptr<std::barrier<>> all;
  std::vector<std::unique_ptr<std::barrier<>>> warps;
  std::vector<int32_t> lanes;  // shuffle exchange slots, one per thread
  std::vector<uint8_t> smem;
};
Simulator* gSim = nullptr;
thread_local int32_t tThreadId = 0;

extern "C" int32_t simThreadId() { return tThreadId; }
extern "C" void simBarrier() { gSim->all->arrive_and_wait(); }
extern "C" void* simSharedMemory() { return gSim->smem.data(); }
extern "C" int32_t simShuffleXor(int32_t v, int32_t mask) {
  const int32_t warp = tThreadId / 32, lane = tThreadId % 32;
  gSim->lanes[tThreadId] = v;
  gSim->warps[warp]->arrive_and_wait();
  int32_t r = gSim->lanes[warp * 32 + (lane ^ mask)];
  gSim->warps[warp]->arrive_and_wait();
  return r;
}

extern "C" int32_t simShuffleIdx(int32_t v, int32_t from) {
  const int32_t warp = tThreadId / 32;
  gSim->lanes[tThreadId] = v;
  gSim->warps[warp]->arrive_and_wait();
  int32_t r = gSim->lanes[warp * 32 + from];
  gSim->warps[warp]->arrive_and_wait();
  return r;
}

// Hooks that call the emulation's runtime functions instead of GPU intrinsics.
class HostHooks : public backends::LoweringHooks {
 public:
  int warpSize() const override { return 32; }
  void configureKernel(llvm::Function&, int) override {}
  llvm::Value* threadId(backends::IRBuilder& b) override { return call(b, "simThreadId", b.getInt32Ty(), {}); }
  llvm::Value* programId(backends::IRBuilder& b, int) override { return b.getInt32(0); }
  llvm::Value* numPrograms(backends::IRBuilder& b, int) override { return b.getInt32(1); }
  llvm::Value* shuffleXorI32(backends::IRBuilder& b, llvm::Value* v, int laneMask) override {
    return call(b, "simShuffleXor", b.getInt32Ty(), {v, b.getInt32(static_cast<uint32_t>(laneMask))});
  }
  llvm::Value* shuffleIdxI32(backends::IRBuilder& b, llvm::Value* v, llvm::Value* lane) override {
    return call(b, "simShuffleIdx", b.getInt32Ty(), {v, lane});
  }
  void barrier(backends::IRBuilder& b) override { call(b, "simBarrier", b.getVoidTy(), {}); }
  llvm::Value* sharedMemoryBase(backends::IRBuilder& b) override {
    return call(b, "simSharedMemory", b.getPtrTy(), {});
  }
  llvm::Value* unaryMath(backends::IRBuilder&, ir::OpKind, llvm::Value*, bool) override { return nullptr; }
  llvm::Value* fmod(backends::IRBuilder&, llvm::Value*, llvm::Value*) override { return nullptr; }
  void print(backends::IRBuilder&, const std::string&, const std::vector<llvm::Value*>&) override {}
  void assertFail(backends::IRBuilder&, const std::string&, const std::string&, unsigned, const std::string&) override {}
  llvm::SyncScope::ID atomicScope(llvm::LLVMContext&, const std::string&) override { return llvm::SyncScope::System; }

 private:
  static llvm::Value* call(backends::IRBuilder& b, const char* name, llvm::Type* ret, std::vector<llvm::Value*> args) {
    std::vector<llvm::Type*> types;
    for (llvm::Value* a : args) types.push_back(a->getType());
    llvm::Module& m = *b.GetInsertBlock()->getModule();
    return b.CreateCall(m.getOrInsertFunction(name, llvm::FunctionType::get(ret, types, false)), args);
  }
};

using KernelFn = void (*)(void*, void*, void*, void*);

// Lowers the case with HostHooks, JIT-compiles it for the host, and runs one program of numWarps * 32 threads.
void runOnHost(const ScanCase& c, std::vector<int32_t>& in0, std::vector<int32_t>& in1, std::vector<int32_t>& out0,
               std::vector<int32_t>& out1) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  std::unique_ptr<ir::Module> m = ir::parseModule(scanKernel(c), "scan.tir");
  ir::verify(*m);
  auto ctx = std::make_unique<llvm::LLVMContext>();
  HostHooks hooks;
  backends::LoweringOptions opts;
  opts.numWarps = c.numWarps;
  std::unique_ptr<llvm::Module> lm = backends::lowerFunction(*m->functions().at(0), *ctx, hooks, opts);
  ASSERT_FALSE(llvm::verifyModule(*lm, &llvm::errs()));
  auto jit = llvm::cantFail(llvm::orc::LLJITBuilder().create());
  lm->setDataLayout(jit->getDataLayout());
  lm->setTargetTriple(jit->getTargetTriple().str());
  auto& jd = jit->getMainJITDylib();
  llvm::orc::SymbolMap symbols;
  auto add = [&](const char* name, auto* fn) {
    symbols[jit->mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn), llvm::JITSymbolFlags::Exported};
  };
  add("simThreadId", &simThreadId);
  add("simBarrier", &simBarrier);
  add("simSharedMemory", &simSharedMemory);
  add("simShuffleXor", &simShuffleXor);
  add("simShuffleIdx", &simShuffleIdx);
  llvm::cantFail(jd.define(llvm::orc::absoluteSymbols(std::move(symbols))));
  llvm::cantFail(jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(lm), std::move(ctx))));
  auto kernel = llvm::cantFail(jit->lookup("k")).toPtr<KernelFn>();

  Simulator sim;
  sim.threads = c.numWarps * 32;
  sim.all = std::make_unique<std::barrier<>>(sim.threads);
  for (int w = 0; w < c.numWarps; ++w) sim.warps.push_back(std::make_unique<std::barrier<>>(32));
  sim.lanes.assign(sim.threads, 0);
  sim.smem.assign(2 * c.rows * c.cols * 4, 0xAB);  // garbage: the scan must not read what it did not write
  gSim = &sim;
  std::vector<std::thread> pool;
  for (int t = 0; t < sim.threads; ++t)
    pool.emplace_back([&, t] {
      tThreadId = t;
      kernel(in0.data(), in1.data(), out0.data(), out1.data());
    });
  for (std::thread& t : pool) t.join();
  gSim = nullptr;
}

// The serial scan in scan order along the axis.
void referenceScan(const ScanCase& c, const std::vector<int32_t>& in0, const std::vector<int32_t>& in1,
                   std::vector<int32_t>& out0, std::vector<int32_t>& out1) {
  const int64_t len = c.axis == 0 ? c.rows : c.cols, lines = c.axis == 0 ? c.cols : c.rows;
  for (int64_t line = 0; line < lines; ++line) {
    float acc = 0, x;
    int32_t a = 0, bb = 0;
    for (int64_t k = 0; k < len; ++k) {
      const int64_t pos = c.reverse ? len - 1 - k : k;
      const int64_t idx = c.axis == 0 ? pos * c.cols + line : line * c.cols + pos;
      if (c.combine == Combine::Recurrence) {
        const int32_t a2 = in0[idx], b2 = in1[idx];
        if (k == 0) {
          a = a2;
          bb = b2;
        } else {  // wrapping i32 arithmetic, as the kernel's
          bb = static_cast<int32_t>(static_cast<uint32_t>(a2) * static_cast<uint32_t>(bb) + static_cast<uint32_t>(b2));
          a = static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(a2));
        }
        out0[idx] = a;
        out1[idx] = bb;
      } else {
        std::memcpy(&x, &in0[idx], 4);
        acc = k == 0 ? x : c.combine == Combine::Sum ? acc + x : std::max(acc, x);
        std::memcpy(&out0[idx], &acc, 4);
      }
    }
  }
}

TEST(NVPTXScan, HostEmulationMatchesSerialScan) {
  std::mt19937 rng(7);
  for (const ScanCase& c : allCases()) {
    SCOPED_TRACE(c.name());
    const size_t n = static_cast<size_t>(c.rows * c.cols);
    std::vector<int32_t> in0(n), in1(n), out0(n, -1), out1(n, -1), want0(n, -1), want1(n, -1);
    for (size_t i = 0; i < n; ++i) {
      if (c.combine == Combine::Recurrence) {
        in0[i] = static_cast<int32_t>(rng() % 7) - 3;
        in1[i] = static_cast<int32_t>(rng() % 1000) - 500;
      } else {  // small integers: every f32 sum is exact, so any association gives the serial result
        float v = static_cast<float>(static_cast<int>(rng() % 17) - 8);
        std::memcpy(&in0[i], &v, 4);
      }
    }
    referenceScan(c, in0, in1, want0, want1);
    runOnHost(c, in0, in1, out0, out1);
    ASSERT_EQ(out0, want0);
    if (c.combine == Combine::Recurrence) ASSERT_EQ(out1, want1);
  }
}

}  // namespace
}  // namespace tessera::testing
