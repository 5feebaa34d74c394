// Rewritten GPU modules run on the host against a small recording runtime (one thread, no fibers): the entry
// wrapper passes CUDA-style parameters, memory accesses reach the runtime with their widths and sites, shared
// pointers converted to integers are offsets into the shared buffer, warp-level operations pass their registers
// in SimABI.h's order, private allocas stay on the stack, and GPU math becomes host math.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>

#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include "SimHostTestUtil.h"
#include "TmaTestKernel.h"
#include "backends/nvptx/InlineAsmTable.h"
#include "jit/sim/BFloat16Libcalls.h"

namespace tessera::testing {
namespace {

// ---- the recording runtime

struct Access {
  uint64_t address;
  uint32_t bytes, site;
  bool store;
};

struct Recorder {
  std::vector<Access> accesses;
  alignas(16) uint8_t shared[256] = {};
  uint32_t lane = 0;
  std::vector<uint32_t> mmaWords;  // kind, then A, B and C as passed
  uint64_t ldmatrixAddress = 0;
  std::vector<std::vector<uint64_t>> stmatrixCalls;  // each: matrices, transpose, address, the registers, site
  uint32_t shuffleArgs[5] = {};  // mode, mask, value, lane, clamp
  int barriers = 0;
};
Recorder* recorder = nullptr;

void recordLoad(void* dst, uint64_t address, uint32_t bytes, uint32_t site) {
  std::memcpy(dst, reinterpret_cast<const void*>(address), bytes);
  recorder->accesses.push_back({address, bytes, site, false});
}
void recordStore(uint64_t address, const void* src, uint32_t bytes, uint32_t site) {
  std::memcpy(reinterpret_cast<void*>(address), src, bytes);
  recorder->accesses.push_back({address, bytes, site, true});
}
void* sharedBase() { return recorder->shared; }
uint32_t laneId() { return recorder->lane; }
void barrier(uint32_t) { ++recorder->barriers; }
uint32_t shuffle(uint32_t mode, uint32_t mask, uint32_t value, uint32_t lane, uint32_t clamp, uint32_t* valid,
                 uint32_t) {
  uint32_t args[] = {mode, mask, value, lane, clamp};
  std::memcpy(recorder->shuffleArgs, args, sizeof args);
  *valid = 1;
  return value + 1;
}
void ldmatrix(uint32_t matrices, uint32_t transpose, uint64_t address, uint32_t* out, uint32_t) {
  recorder->ldmatrixAddress = address;
  for (uint32_t i = 0; i < matrices; ++i) out[i] = 100 + i + 10 * transpose;
}
void stmatrix(uint32_t matrices, uint32_t transpose, uint64_t address, const uint32_t* in, uint32_t site) {
  std::vector<uint64_t> args = {matrices, transpose, address};
  args.insert(args.end(), in, in + matrices);
  args.push_back(site);
  recorder->stmatrixCalls.push_back(std::move(args));
}
// m16n8k16 f16 -> f32: 4 + 2 + 4 registers; D = C with each register's bits plus one.
void mma(uint32_t kind, const uint32_t* a, const uint32_t* b, const uint32_t* c, uint32_t* d, uint32_t) {
  recorder->mmaWords = {kind};
  recorder->mmaWords.insert(recorder->mmaWords.end(), a, a + 4);
  recorder->mmaWords.insert(recorder->mmaWords.end(), b, b + 2);
  recorder->mmaWords.insert(recorder->mmaWords.end(), c, c + 4);
  for (int i = 0; i < 4; ++i) d[i] = c[i] + 1;
}

sim::RuntimeSymbols recordingRuntime() {
  sim::RuntimeSymbols symbols = runtimeStubs();
  symbols["__tsim_load"] = reinterpret_cast<const void*>(&recordLoad);
  symbols["__tsim_store"] = reinterpret_cast<const void*>(&recordStore);
  symbols["__tsim_shared_base"] = reinterpret_cast<const void*>(&sharedBase);
  symbols["__tsim_lane_id"] = reinterpret_cast<const void*>(&laneId);
  symbols["__tsim_barrier"] = reinterpret_cast<const void*>(&barrier);
  symbols["__tsim_shuffle"] = reinterpret_cast<const void*>(&shuffle);
  symbols["__tsim_ldmatrix"] = reinterpret_cast<const void*>(&ldmatrix);
  symbols["__tsim_stmatrix"] = reinterpret_cast<const void*>(&stmatrix);
  symbols["__tsim_mma"] = reinterpret_cast<const void*>(&mma);
  return symbols;
}

class SimHostExec : public ::testing::Test {
 protected:
  void SetUp() override { recorder = &state; }
  void TearDown() override { recorder = nullptr; }
  // Rewrites and compiles `gpuModule`, keeping the host module's text and sites.
  sim::HostJit compile(const std::string& gpuModule) {
    sim::HostModule host = sim::rewriteForHost(gpuModule, "test.ll");
    hostText.clear();
    llvm::raw_string_ostream os(hostText);
    host.module->print(os, nullptr);
    return sim::HostJit(std::move(host), recordingRuntime());
  }
  Recorder state;
  std::string hostText;
};

constexpr const char* kNvptxHeader =
    "target datalayout = \"e-i64:64-i128:128-v16:16-v32:32-n16:32:64\"\n"
    "target triple = \"nvptx64-nvidia-cuda\"\n"
    "@global_smem = external addrspace(3) global [0 x i8], align 16\n";

constexpr const char* kAmdgpuHeader =
    "target datalayout = \"e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-"
    "p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-"
    "v2048:2048-n32:64-S32-A5-G1-ni:7:8:9\"\n"
    "target triple = \"amdgcn-amd-amdhsa\"\n"
    "@tessera_lds = internal addrspace(3) global [64 x i8] poison, align 16\n"
    "@llvm.compiler.used = appending global [1 x ptr] [ptr addrspacecast (ptr addrspace(3) @tessera_lds to ptr)], "
    "section \"llvm.metadata\"\n";

TEST_F(SimHostExec, EntryPassesEachParameterByPointer) {
  sim::HostJit jit = compile(std::string(kNvptxHeader) + R"(
define ptx_kernel void @params(ptr addrspace(1) %out, i8 %flag, i32 %a, i64 %b, float %c, double %d) {
  store i8 %flag, ptr addrspace(1) %out, align 1
  %p4 = getelementptr i8, ptr addrspace(1) %out, i64 4
  store i32 %a, ptr addrspace(1) %p4, align 4
  %p8 = getelementptr i8, ptr addrspace(1) %out, i64 8
  store i64 %b, ptr addrspace(1) %p8, align 8
  %p16 = getelementptr i8, ptr addrspace(1) %out, i64 16
  store float %c, ptr addrspace(1) %p16, align 4
  %p24 = getelementptr i8, ptr addrspace(1) %out, i64 24
  store double %d, ptr addrspace(1) %p24, align 8
  ret void
}
)");
  alignas(8) uint8_t out[32] = {};
  void* outPtr = out;
  uint8_t flag = 1;
  int32_t a = -7;
  int64_t b = int64_t(1) << 40;
  float c = 2.5f;
  double d = -0.125;
  void* params[] = {&outPtr, &flag, &a, &b, &c, &d};
  jit.entry()(params);
  EXPECT_EQ(out[0], 1);
  int32_t a2;
  int64_t b2;
  float c2;
  double d2;
  std::memcpy(&a2, out + 4, 4);
  std::memcpy(&b2, out + 8, 8);
  std::memcpy(&c2, out + 16, 4);
  std::memcpy(&d2, out + 24, 8);
  EXPECT_EQ(a2, a);
  EXPECT_EQ(b2, b);
  EXPECT_EQ(c2, c);
  EXPECT_EQ(d2, d);
  // One runtime store per instruction, with its width and its own site.
  ASSERT_EQ(state.accesses.size(), 5u);
  const uint32_t widths[] = {1, 4, 8, 4, 8};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_TRUE(state.accesses[i].store);
    EXPECT_EQ(state.accesses[i].bytes, widths[i]);
    ASSERT_LT(state.accesses[i].site, jit.sites().size());
    const sim::Site& site = jit.sites()[state.accesses[i].site];
    EXPECT_EQ(site.kind, sim::SiteKind::Store);
    EXPECT_EQ(site.space, sim::AddressSpace::Global);
    EXPECT_EQ(site.bytes, widths[i]);
  }
}

TEST_F(SimHostExec, SharedPointersAreOffsetsIntoTheRuntimesBuffer) {
  sim::HostJit jit = compile(std::string(kNvptxHeader) + R"(
define ptx_kernel void @shared(ptr addrspace(1) %out) {
  %p = getelementptr i8, ptr addrspace(3) @global_smem, i32 48
  %offset = ptrtoint ptr addrspace(3) %p to i32
  store i32 %offset, ptr addrspace(1) %out, align 4
  %q = inttoptr i32 64 to ptr addrspace(3)
  store i32 7, ptr addrspace(3) %q, align 4
  ret void
}
)");
  EXPECT_EQ(hostText.find("global_smem"), std::string::npos) << hostText;
  int32_t out = -1;
  void* outPtr = &out;
  void* params[] = {&outPtr};
  jit.entry()(params);
  EXPECT_EQ(out, 48);
  int32_t stored;
  std::memcpy(&stored, state.shared + 64, 4);
  EXPECT_EQ(stored, 7);
  ASSERT_EQ(state.accesses.size(), 2u);
  EXPECT_EQ(state.accesses[1].address, reinterpret_cast<uint64_t>(state.shared + 64));
  EXPECT_EQ(jit.sites()[state.accesses[1].site].space, sim::AddressSpace::Shared);
}

TEST_F(SimHostExec, WarpOperationsPassRegistersLowBitsFirst) {
  sim::HostJit jit = compile(std::string(kNvptxHeader) + R"(
declare { float, i1 } @llvm.nvvm.shfl.sync.bfly.f32p(i32, float, i32, i32)
declare { i32, i32, i32, i32 } @llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.trans.b16.p3(ptr addrspace(3))
declare { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.f32.f32(<2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, float, float, float, float)

define ptx_kernel void @warp(ptr addrspace(1) %out, float %v) {
  %s = call { float, i1 } @llvm.nvvm.shfl.sync.bfly.f32p(i32 -1, float %v, i32 4, i32 31)
  %sv = extractvalue { float, i1 } %s, 0
  %sp = extractvalue { float, i1 } %s, 1
  store float %sv, ptr addrspace(1) %out, align 4
  %spi = zext i1 %sp to i32
  %o1 = getelementptr i32, ptr addrspace(1) %out, i64 1
  store i32 %spi, ptr addrspace(1) %o1, align 4
  %row = getelementptr i8, ptr addrspace(3) @global_smem, i32 32
  %m = call { i32, i32, i32, i32 } @llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.trans.b16.p3(ptr addrspace(3) %row)
  %m3 = extractvalue { i32, i32, i32, i32 } %m, 3
  %o2 = getelementptr i32, ptr addrspace(1) %out, i64 2
  store i32 %m3, ptr addrspace(1) %o2, align 4
  %d = call { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.f32.f32(<2 x half> <half 0xH3C00, half 0xH4000>, <2 x half> zeroinitializer, <2 x half> zeroinitializer, <2 x half> <half 0xH0001, half 0xH8000>, <2 x half> <half 0xH4200, half 0xH4400>, <2 x half> zeroinitializer, float 1.0, float 2.0, float 3.0, float 4.0)
  %d2 = extractvalue { float, float, float, float } %d, 2
  %o3 = getelementptr i32, ptr addrspace(1) %out, i64 3
  store float %d2, ptr addrspace(1) %o3, align 4
  ret void
}
)");
  alignas(16) uint32_t out[4] = {};
  void* outPtr = out;
  float v = 1.0f;
  void* params[] = {&outPtr, &v};
  jit.entry()(params);
  // shfl.sync.bfly.f32p(0xffffffff, v, 4, 31): the value travels as its bits, the predicate comes back.
  const uint32_t expectedArgs[] = {sim::kShuffleBfly, 0xffffffffu, std::bit_cast<uint32_t>(v), 4, 31};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(state.shuffleArgs[i], expectedArgs[i]) << i;
  EXPECT_EQ(out[0], std::bit_cast<uint32_t>(v) + 1);
  EXPECT_EQ(out[1], 1u);
  // ldmatrix x4.trans: this lane's row address in the shared buffer; the fourth register.
  EXPECT_EQ(state.ldmatrixAddress, reinterpret_cast<uint64_t>(state.shared + 32));
  EXPECT_EQ(out[2], 113u);
  // mma: <2 x half> registers with the first element in the low half.
  ASSERT_EQ(state.mmaWords.size(), 11u);
  EXPECT_EQ(state.mmaWords[0], sim::kMmaM16N8K16_F16_F32);
  EXPECT_EQ(state.mmaWords[1], 0x40003C00u);
  EXPECT_EQ(state.mmaWords[4], 0x80000001u);
  EXPECT_EQ(state.mmaWords[5], 0x44004200u);
  EXPECT_EQ(state.mmaWords[7], std::bit_cast<uint32_t>(1.0f));
  EXPECT_EQ(state.mmaWords[10], std::bit_cast<uint32_t>(4.0f));
  EXPECT_EQ(out[3], std::bit_cast<uint32_t>(3.0f) + 1);
}

// The table's stmatrix asm (no LLVM intrinsic): the 32-bit shared address becomes the host address in the shared
// buffer, the registers travel in operand order, the site is a 16-byte shared row access.
TEST_F(SimHostExec, StMatrixAsmPassesTheSharedRowAndTheRegisters) {
  sim::HostJit jit = compile(std::string(kNvptxHeader) + R"(
define ptx_kernel void @st(i32 %a, i32 %b, i32 %c, i32 %d) {
  %row = getelementptr i8, ptr addrspace(3) @global_smem, i32 48
  %at = ptrtoint ptr addrspace(3) %row to i32
  call void asm sideeffect )" + asmOf("stmatrix.x2") + R"((i32 %at, i32 %a, i32 %b)
  %at2 = add i32 %at, 64
  call void asm sideeffect )" + asmOf("stmatrix.x4") + R"((i32 %at2, i32 %a, i32 %b, i32 %c, i32 %d)
  ret void
}
)");
  uint32_t a = 0x11112222, b = 0x33334444, c = 5, d = 6;
  void* params[] = {&a, &b, &c, &d};
  jit.entry()(params);
  const uint64_t shared = reinterpret_cast<uint64_t>(state.shared);
  ASSERT_EQ(state.stmatrixCalls.size(), 2u);
  // .x2 at shared offset 48: matrices, no .trans (the table has none), the address, a and b.
  const std::vector<uint64_t> x2 = state.stmatrixCalls[0], x4 = state.stmatrixCalls[1];
  ASSERT_EQ(x2.size(), 6u);
  EXPECT_EQ(x2[0], 2u);
  EXPECT_EQ(x2[1], 0u);
  EXPECT_EQ(x2[2], shared + 48);
  EXPECT_EQ(x2[3], a);
  EXPECT_EQ(x2[4], b);
  ASSERT_EQ(x4.size(), 8u);
  EXPECT_EQ(x4[0], 4u);
  EXPECT_EQ(x4[2], shared + 112);
  EXPECT_EQ(x4[3], a);
  EXPECT_EQ(x4[4], b);
  EXPECT_EQ(x4[5], c);
  EXPECT_EQ(x4[6], d);
  for (const std::vector<uint64_t>& call : {x2, x4}) {
    const sim::Site& site = jit.sites().at(call.back());
    EXPECT_EQ(site.kind, sim::SiteKind::StMatrix);
    EXPECT_EQ(site.space, sim::AddressSpace::Shared);
    EXPECT_EQ(site.bytes, 16u);
    EXPECT_EQ(site.align, 16u);
  }
  EXPECT_NE(x2.back(), x4.back()) << "a site each";
  // The asm is gone; the rows are the runtime's to write, not plain stores of the host code.
  EXPECT_EQ(hostText.find("stmatrix.sync"), std::string::npos) << hostText;
  EXPECT_TRUE(state.accesses.empty());
}

TEST_F(SimHostExec, NvptxApproximateMathIsHostMath) {
  sim::HostJit jit = compile(std::string(kNvptxHeader) + R"(
declare float @llvm.nvvm.ex2.approx.f(float)
declare float @llvm.nvvm.ex2.approx.ftz.f(float)
declare float @llvm.nvvm.lg2.approx.f(float)
declare float @llvm.nvvm.rsqrt.approx.f(float)
declare float @llvm.nvvm.div.approx.f(float, float)

define ptx_kernel void @math(ptr addrspace(1) %out, float %x) {
  %e = call float @llvm.nvvm.ex2.approx.f(float %x)
  store float %e, ptr addrspace(1) %out, align 4
  %flushed = call float @llvm.nvvm.ex2.approx.ftz.f(float 0x36A0000000000000)
  %o1 = getelementptr float, ptr addrspace(1) %out, i64 1
  store float %flushed, ptr addrspace(1) %o1, align 4
  %l = call float @llvm.nvvm.lg2.approx.f(float %x)
  %o2 = getelementptr float, ptr addrspace(1) %out, i64 2
  store float %l, ptr addrspace(1) %o2, align 4
  %r = call float @llvm.nvvm.rsqrt.approx.f(float %x)
  %o3 = getelementptr float, ptr addrspace(1) %out, i64 3
  store float %r, ptr addrspace(1) %o3, align 4
  %q = call float @llvm.nvvm.div.approx.f(float 1.0, float %x)
  %o4 = getelementptr float, ptr addrspace(1) %out, i64 4
  store float %q, ptr addrspace(1) %o4, align 4
  ret void
}
)");
  float out[5] = {};
  void* outPtr = out;
  float x = 6.25f;
  void* params[] = {&outPtr, &x};
  jit.entry()(params);
  EXPECT_FLOAT_EQ(out[0], std::exp2(6.25f));
  EXPECT_EQ(out[1], 1.0f) << "the .ftz form flushes its subnormal input: 2^0";
  EXPECT_FLOAT_EQ(out[2], std::log2(6.25f));
  EXPECT_FLOAT_EQ(out[3], 0.4f);
  EXPECT_FLOAT_EQ(out[4], 0.16f);
}

// The predicated global stores of backends/nvptx/InlineAsmTable.h (masked tile stores): where the predicate holds,
// one runtime store of the asm's words, with the width of the instruction; where it does not, no access.
TEST_F(SimHostExec, PredicatedGlobalStoresStoreTheirWordsOnlyWherePredicated) {
  sim::HostJit jit = compile(std::string(kNvptxHeader) + R"(
define ptx_kernel void @masked(ptr addrspace(1) %out, i32 %flag) {
  %p = icmp ne i32 %flag, 0
  call void asm sideeffect )" + asmOf("st.global.pred.b16") + R"((i1 %p, ptr addrspace(1) %out, i16 -2)
  %o4 = getelementptr i8, ptr addrspace(1) %out, i64 4
  call void asm sideeffect )" + asmOf("st.global.pred.b32") + R"((i1 %p, ptr addrspace(1) %o4, i32 7)
  %o8 = getelementptr i8, ptr addrspace(1) %out, i64 8
  call void asm sideeffect )" + asmOf("st.global.pred.v2.b32") + R"((i1 %p, ptr addrspace(1) %o8, i32 8, i32 9)
  %o16 = getelementptr i8, ptr addrspace(1) %out, i64 16
  call void asm sideeffect )" + asmOf("st.global.pred.v4.b32") + R"((i1 %p, ptr addrspace(1) %o16, i32 10, i32 11, i32 12, i32 13)
  ret void
}
)");
  for (uint32_t flag : {0u, 1u}) {
    SCOPED_TRACE(flag);
    state.accesses.clear();
    alignas(16) uint32_t out[8] = {};
    void* outPtr = out;
    void* params[] = {&outPtr, &flag};
    jit.entry()(params);
    if (!flag) {
      EXPECT_TRUE(state.accesses.empty());
      EXPECT_EQ(out[0] | out[1] | out[2] | out[3] | out[4], 0u);
      continue;
    }
    ASSERT_EQ(state.accesses.size(), 4u);
    const uint32_t widths[] = {2, 4, 8, 16};
    for (size_t i = 0; i < 4; ++i) {
      EXPECT_TRUE(state.accesses[i].store);
      EXPECT_EQ(state.accesses[i].bytes, widths[i]);
      EXPECT_EQ(jit.sites()[state.accesses[i].site].kind, sim::SiteKind::Store);
    }
    EXPECT_EQ(out[0], 0xFFFEu);
    EXPECT_EQ(out[1], 7u);
    EXPECT_EQ(out[2], 8u);
    EXPECT_EQ(out[3], 9u);
    EXPECT_EQ(out[4], 10u);
    EXPECT_EQ(out[7], 13u);
  }
}

// The predicated global loads of the same table (masked tile loads): where the predicate holds, one runtime load of
// the asm's words, with the width of the instruction; where it does not, no access and the fallback words.
TEST_F(SimHostExec, PredicatedGlobalLoadsLoadTheirWordsOnlyWherePredicated) {
  sim::HostJit jit = compile(std::string(kNvptxHeader) + R"(
define ptx_kernel void @masked(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %flag) {
  %p = icmp ne i32 %flag, 0
  %h = call i16 asm sideeffect )" + asmOf("ld.global.pred.b16") + R"((i1 %p, ptr addrspace(1) %in, i16 -2)
  store i16 %h, ptr addrspace(1) %out, align 2
  %i4 = getelementptr i8, ptr addrspace(1) %in, i64 4
  %o4 = getelementptr i8, ptr addrspace(1) %out, i64 4
  %w = call i32 asm sideeffect )" + asmOf("ld.global.pred.b32") + R"((i1 %p, ptr addrspace(1) %i4, i32 7)
  store i32 %w, ptr addrspace(1) %o4, align 4
  %i8 = getelementptr i8, ptr addrspace(1) %in, i64 8
  %o8 = getelementptr i8, ptr addrspace(1) %out, i64 8
  %v2 = call { i32, i32 } asm sideeffect )" + asmOf("ld.global.pred.v2.b32") + R"((i1 %p, ptr addrspace(1) %i8, i32 8, i32 9)
  store { i32, i32 } %v2, ptr addrspace(1) %o8, align 8
  %i16 = getelementptr i8, ptr addrspace(1) %in, i64 16
  %o16 = getelementptr i8, ptr addrspace(1) %out, i64 16
  %v4 = call { i32, i32, i32, i32 } asm sideeffect )" + asmOf("ld.global.pred.v4.b32") + R"((i1 %p, ptr addrspace(1) %i16, i32 10, i32 11, i32 12, i32 13)
  store { i32, i32, i32, i32 } %v4, ptr addrspace(1) %o16, align 16
  ret void
}
)");
  for (uint32_t flag : {0u, 1u}) {
    SCOPED_TRACE(flag);
    state.accesses.clear();
    alignas(16) uint32_t in[8] = {0xABCD1234u, 101, 102, 103, 104, 105, 106, 107};
    alignas(16) uint32_t out[8] = {};
    void* inPtr = in;
    void* outPtr = out;
    void* params[] = {&inPtr, &outPtr, &flag};
    jit.entry()(params);
    std::vector<Access> loads;
    for (const Access& a : state.accesses)
      if (!a.store) loads.push_back(a);
    if (!flag) {
      EXPECT_TRUE(loads.empty());
      EXPECT_EQ(out[0] & 0xFFFFu, 0xFFFEu);
      EXPECT_EQ(out[1], 7u);
      EXPECT_EQ(out[2], 8u);
      EXPECT_EQ(out[3], 9u);
      EXPECT_EQ(out[4], 10u);
      EXPECT_EQ(out[7], 13u);
      continue;
    }
    ASSERT_EQ(loads.size(), 4u);
    const uint32_t widths[] = {2, 4, 8, 16};
    for (size_t i = 0; i < 4; ++i) {
      EXPECT_EQ(loads[i].bytes, widths[i]);
      EXPECT_EQ(jit.sites()[loads[i].site].kind, sim::SiteKind::Load);
    }
    EXPECT_EQ(out[0] & 0xFFFFu, 0x1234u);
    for (int i = 1; i < 8; ++i) EXPECT_EQ(out[i], 100u + i) << i;
  }
}

// What libdevice brings along: a directed-rounding fma, bit moves of f64, cvt.rni, and the inline asm of
// backends/nvptx/InlineAsmTable.h.
TEST_F(SimHostExec, NvptxLibdeviceOperationsAreExact) {
  sim::HostJit jit = compile(std::string(kNvptxHeader) + R"(
declare float @llvm.nvvm.fma.rz.f(float, float, float)
declare i32 @llvm.nvvm.d2i.lo(double)
declare i32 @llvm.nvvm.d2i.hi(double)
declare double @llvm.nvvm.lohi.i2d(i32, i32)
declare i32 @llvm.nvvm.f2i.rn(float)

define ptx_kernel void @libdevice(ptr addrspace(1) %out, float %a, float %b, float %c, double %d) {
  %f = call float @llvm.nvvm.fma.rz.f(float %a, float %b, float %c)
  store float %f, ptr addrspace(1) %out, align 4
  %lo = call i32 @llvm.nvvm.d2i.lo(double %d)
  %o1 = getelementptr i32, ptr addrspace(1) %out, i64 1
  store i32 %lo, ptr addrspace(1) %o1, align 4
  %hi = call i32 @llvm.nvvm.d2i.hi(double %d)
  %o2 = getelementptr i32, ptr addrspace(1) %out, i64 2
  store i32 %hi, ptr addrspace(1) %o2, align 4
  %swapped = call double @llvm.nvvm.lohi.i2d(i32 %hi, i32 %lo)
  %o4 = getelementptr i32, ptr addrspace(1) %out, i64 4
  store double %swapped, ptr addrspace(1) %o4, align 8
  %n = call i32 @llvm.nvvm.f2i.rn(float %a)
  %o6 = getelementptr i32, ptr addrspace(1) %out, i64 6
  store i32 %n, ptr addrspace(1) %o6, align 4
  %r = call float asm "rcp.approx.ftz.f32 $0,$1;", "=f,f"(float %a)
  %o7 = getelementptr i32, ptr addrspace(1) %out, i64 7
  store float %r, ptr addrspace(1) %o7, align 4
  %m = call { i32, i32 } asm "{\0A\09mad.lo.cc.u32   $0, $2, $3, $4;\0A\09madc.hi.u32     $1, $2, $3,  0;\0A\09}", "=r,=r,r,r,r"(i32 -1, i32 -2, i32 -1)
  %mlo = extractvalue { i32, i32 } %m, 0
  %mhi = extractvalue { i32, i32 } %m, 1
  %o8 = getelementptr i32, ptr addrspace(1) %out, i64 8
  store i32 %mlo, ptr addrspace(1) %o8, align 4
  %o9 = getelementptr i32, ptr addrspace(1) %out, i64 9
  store i32 %mhi, ptr addrspace(1) %o9, align 4
  ret void
}
)");
  struct Case {
    float a, b, c;
    uint32_t fmaTowardZero;
    int32_t nearestEven;  // cvt.rni of a: ties to even
  };
  const float onePlusUlp = std::bit_cast<float>(0x3F800001u);
  // 1.5 * (1 + 2^-23) lies between two f32 and rounds up to nearest but down toward zero; -1 + 2^-60 is -1 in
  // f64, and only the addition's error says the result lies above -1.
  const Case cases[] = {{1.5f, onePlusUlp, 0.0f, 0x3FC00001u, 2},
                        {-1.5f, onePlusUlp, 0.0f, 0xBFC00001u, -2},
                        {0x1p-30f, 0x1p-30f, -1.0f, 0xBF7FFFFFu, 0}};
  for (const Case& c : cases) {
    alignas(8) uint32_t out[10] = {};
    void* outPtr = out;
    float a = c.a, b = c.b, z = c.c;
    double d = -0x1.23456789abcdep+3;
    void* params[] = {&outPtr, &a, &b, &z, &d};
    jit.entry()(params);
    SCOPED_TRACE(c.a);
    EXPECT_EQ(out[0], c.fmaTowardZero) << std::bit_cast<float>(out[0]);
    const uint64_t dBits = std::bit_cast<uint64_t>(d);
    EXPECT_EQ(out[1], static_cast<uint32_t>(dBits));
    EXPECT_EQ(out[2], static_cast<uint32_t>(dBits >> 32));
    EXPECT_EQ(uint64_t(out[4]) | uint64_t(out[5]) << 32, dBits >> 32 | dBits << 32);
    EXPECT_EQ(static_cast<int32_t>(out[6]), c.nearestEven);
    EXPECT_EQ(std::bit_cast<float>(out[7]), 1.0f / c.a);
    // 0xffffffff * 0xfffffffe + 0xffffffff = 0xfffffffe_00000001 (2^64 - 2^33 + 2 - 1)
    EXPECT_EQ(out[8], 0x00000001u);
    EXPECT_EQ(out[9], 0xFFFFFFFEu);
  }
}

// f32 and f64 -> bf16 round to nearest even, computed inline (no __truncsfbf2 needed from the host).
TEST_F(SimHostExec, BFloat16ConversionsRoundToNearestEven) {
  sim::HostJit jit = compile(std::string(kNvptxHeader) + R"(
define ptx_kernel void @bf16(ptr addrspace(1) %out, float %f, double %d) {
  %a = fptrunc float %f to bfloat
  store bfloat %a, ptr addrspace(1) %out, align 2
  %b = fptrunc double %d to bfloat
  %o1 = getelementptr bfloat, ptr addrspace(1) %out, i64 1
  store bfloat %b, ptr addrspace(1) %o1, align 2
  %v0 = insertelement <2 x float> poison, float %f, i64 0
  %v = insertelement <2 x float> %v0, float 0x7FF8000000000000, i64 1
  %vb = fptrunc <2 x float> %v to <2 x bfloat>
  %o2 = getelementptr bfloat, ptr addrspace(1) %out, i64 2
  store <2 x bfloat> %vb, ptr addrspace(1) %o2, align 4
  ret void
}
)");
  struct Case {
    uint32_t f;
    double d;
    uint16_t fromFloat, fromDouble;
  };
  // 0x3F808000 and 0x3F818000 lie halfway between two bf16 (ties to even); 1 + 2^-8 + 2^-40 lies just above
  // halfway, which rounding the f64 to f32 first would lose.
  const Case cases[] = {{0x3F800000u, 1.0, 0x3F80, 0x3F80},
                        {0x3F808000u, 1.0 + 0x1p-8 + 0x1p-40, 0x3F80, 0x3F81},
                        {0x3F818000u, -3.0, 0x3F82, 0xC040},
                        {0xFF800000u, 1e300, 0xFF80, 0x7F80}};
  for (const Case& c : cases) {
    alignas(4) uint16_t out[4] = {};
    void* outPtr = out;
    float f = std::bit_cast<float>(c.f);
    double d = c.d;
    void* params[] = {&outPtr, &f, &d};
    jit.entry()(params);
    EXPECT_EQ(out[0], c.fromFloat) << std::hex << c.f;
    EXPECT_EQ(out[1], c.fromDouble) << c.d;
    EXPECT_EQ(out[2], c.fromFloat);
    EXPECT_EQ(out[3] & 0x7FC0, 0x7FC0) << "a quiet NaN";
  }
}

// The libcalls HostJit resolves for conversions the host's code generator forms itself (BFloat16Libcalls.h) round
// as the inline conversions do. They return the bf16 in the low half of a float's register.
TEST(SimHostLibcalls, BFloat16ConversionsRoundToNearestEven) {
  const sim::RuntimeSymbols& calls = sim::bfloat16Libcalls();
  auto fromFloat = reinterpret_cast<float (*)(float)>(const_cast<void*>(calls.at("__truncsfbf2")));
  auto fromDouble = reinterpret_cast<float (*)(double)>(const_cast<void*>(calls.at("__truncdfbf2")));
  auto bits = [](float returned) { return static_cast<uint16_t>(std::bit_cast<uint32_t>(returned)); };
  EXPECT_EQ(bits(fromFloat(std::bit_cast<float>(0x3F808000u))), 0x3F80);  // a tie: to even
  EXPECT_EQ(bits(fromFloat(std::bit_cast<float>(0x3F818000u))), 0x3F82);
  EXPECT_EQ(bits(fromFloat(-INFINITY)), 0xFF80);
  EXPECT_EQ(bits(fromFloat(NAN)) & 0x7FC0, 0x7FC0) << "a quiet NaN";
  EXPECT_EQ(bits(fromDouble(1.0 + 0x1p-8 + 0x1p-40)), 0x3F81) << "just above a tie: rounding to f32 first loses it";
  EXPECT_EQ(bits(fromDouble(-3.0)), 0xC040);
  EXPECT_EQ(bits(fromDouble(1e300)), 0x7F80);
}

// libdevice's 128-bit arithmetic (the argument reduction of f64 sin and cos) as u128 on the host.
TEST_F(SimHostExec, NvptxWideIntegerAsmIsExact) {
  // An LLVM string constant of the table's asm string: newlines and tabs as \0A and \09.
  auto asmOf = [](std::string_view operation) {
    for (const backends::nvptx::InlineAsmEntry& e : backends::nvptx::kInlineAsmTable) {
      if (e.operation != operation) continue;
      std::string text;
      for (char c : e.asmString) text += c == '\n' ? "\\0A" : c == '\t' ? "\\09" : std::string(1, c);
      return "asm \"" + text + "\", \"" + std::string(e.constraints) + "\"";
    }
    ADD_FAILURE() << operation << " is not in the table";
    return std::string();
  };
  sim::HostJit jit = compile(std::string(kNvptxHeader) +
                             "define ptx_kernel void @wide(ptr addrspace(1) %out, i64 %a, i64 %b, i64 %c) {\n"
                             "  %mad = call { i64, i64 } " + asmOf("mad.wide.u64") + "(i64 %a, i64 %b, i64 %c)\n"
                             "  store { i64, i64 } %mad, ptr addrspace(1) %out, align 8\n"
                             "  %mul = call { i64, i64 } " + asmOf("mul.wide.u64") + "(i64 %a, i64 %b)\n"
                             "  %o1 = getelementptr { i64, i64 }, ptr addrspace(1) %out, i64 1\n"
                             "  store { i64, i64 } %mul, ptr addrspace(1) %o1, align 8\n"
                             "  %add = call { i64, i64 } " + asmOf("add.u128") + "(i64 %a, i64 %b, i64 %c, i64 %a)\n"
                             "  %o2 = getelementptr { i64, i64 }, ptr addrspace(1) %out, i64 2\n"
                             "  store { i64, i64 } %add, ptr addrspace(1) %o2, align 8\n"
                             "  %sub = call { i64, i64 } " + asmOf("sub.u128") + "(i64 %a, i64 %b, i64 %c, i64 %a)\n"
                             "  %o3 = getelementptr { i64, i64 }, ptr addrspace(1) %out, i64 3\n"
                             "  store { i64, i64 } %sub, ptr addrspace(1) %o3, align 8\n"
                             "  ret void\n}\n");
  using u128 = unsigned __int128;
  const uint64_t values[][3] = {{~0ull, ~0ull, ~0ull}, {0x0123456789ABCDEFull, 0xFEDCBA9876543210ull, 5}, {0, 7, 1}};
  for (const auto& v : values) {
    alignas(16) uint64_t out[8] = {};
    void* outPtr = out;
    uint64_t a = v[0], b = v[1], c = v[2];
    void* params[] = {&outPtr, &a, &b, &c};
    jit.entry()(params);
    auto halves = [](u128 x) { return std::pair<uint64_t, uint64_t>(static_cast<uint64_t>(x), static_cast<uint64_t>(x >> 64)); };
    const u128 x = u128(b) << 64 | a, y = u128(a) << 64 | c;  // add/sub operands: {low, high} pairs
    EXPECT_EQ(std::make_pair(out[0], out[1]), halves(u128(a) * b + c));
    EXPECT_EQ(std::make_pair(out[2], out[3]), halves(u128(a) * b));
    EXPECT_EQ(std::make_pair(out[4], out[5]), halves(x + y));
    EXPECT_EQ(std::make_pair(out[6], out[7]), halves(x - y));
  }
}

// cvt.rni / rzi / rmi / rpi to an integral float and cvt.rni to an integer (libdevice's erff, tanhf and sin
// use them) are exact: ties go to even.
TEST_F(SimHostExec, NvptxIntegralRoundingsAreExact) {
  sim::HostJit jit = compile(std::string(kNvptxHeader) + R"(
declare float @llvm.nvvm.round.f(float)
declare float @llvm.nvvm.trunc.f(float)
declare float @llvm.nvvm.floor.f(float)
declare float @llvm.nvvm.ceil.f(float)
declare double @llvm.nvvm.round.d(double)
declare i32 @llvm.nvvm.d2i.rn(double)

define ptx_kernel void @roundings(ptr addrspace(1) %out, float %x, double %d) {
  %r = call float @llvm.nvvm.round.f(float %x)
  store float %r, ptr addrspace(1) %out, align 4
  %t = call float @llvm.nvvm.trunc.f(float %x)
  %o1 = getelementptr float, ptr addrspace(1) %out, i64 1
  store float %t, ptr addrspace(1) %o1, align 4
  %f = call float @llvm.nvvm.floor.f(float %x)
  %o2 = getelementptr float, ptr addrspace(1) %out, i64 2
  store float %f, ptr addrspace(1) %o2, align 4
  %c = call float @llvm.nvvm.ceil.f(float %x)
  %o3 = getelementptr float, ptr addrspace(1) %out, i64 3
  store float %c, ptr addrspace(1) %o3, align 4
  %rd = call double @llvm.nvvm.round.d(double %d)
  %dd = fptrunc double %rd to float
  %o4 = getelementptr float, ptr addrspace(1) %out, i64 4
  store float %dd, ptr addrspace(1) %o4, align 4
  %n = call i32 @llvm.nvvm.d2i.rn(double %d)
  %o5 = getelementptr i32, ptr addrspace(1) %out, i64 5
  store i32 %n, ptr addrspace(1) %o5, align 4
  ret void
}
)");
  struct Case {
    float x;
    double d;
    float round, trunc, floor, ceil, roundD;
    int32_t nearestEven;
  };
  const Case cases[] = {{2.5f, 2.5, 2, 2, 2, 3, 2, 2},
                        {-2.5f, 3.5, -2, -2, -3, -2, 4, 4},
                        {-0.75f, -1.5, -1, -0.0f, -1, -0.0f, -2, -2}};
  for (const Case& c : cases) {
    alignas(4) uint32_t out[6] = {};
    void* outPtr = out;
    float x = c.x;
    double d = c.d;
    void* params[] = {&outPtr, &x, &d};
    jit.entry()(params);
    SCOPED_TRACE(c.x);
    EXPECT_EQ(std::bit_cast<float>(out[0]), c.round);
    EXPECT_EQ(std::bit_cast<float>(out[1]), c.trunc);
    EXPECT_EQ(std::signbit(std::bit_cast<float>(out[1])), std::signbit(c.trunc));
    EXPECT_EQ(std::bit_cast<float>(out[2]), c.floor);
    EXPECT_EQ(std::bit_cast<float>(out[3]), c.ceil);
    EXPECT_EQ(std::bit_cast<float>(out[4]), c.roundD);
    EXPECT_EQ(static_cast<int32_t>(out[5]), c.nearestEven);
  }
}

// bf16 arithmetic (which NVPTX keeps from sm_80 on) is computed in f32 and rounded to bf16 inline: the host would
// otherwise call __truncsfbf2, which its C runtime may lack.
TEST_F(SimHostExec, BFloat16ArithmeticRoundsToNearestEven) {
  sim::HostJit jit = compile(std::string(kNvptxHeader) + R"(
declare bfloat @llvm.fma.bf16(bfloat, bfloat, bfloat)
declare <2 x bfloat> @llvm.maxnum.v2bf16(<2 x bfloat>, <2 x bfloat>)

define ptx_kernel void @bf16_math(ptr addrspace(1) %out, bfloat %x, bfloat %y) {
  %sum = fadd bfloat %x, %y
  store bfloat %sum, ptr addrspace(1) %out, align 2
  %fma = call bfloat @llvm.fma.bf16(bfloat %x, bfloat %y, bfloat %y)
  %o1 = getelementptr bfloat, ptr addrspace(1) %out, i64 1
  store bfloat %fma, ptr addrspace(1) %o1, align 2
  %v0 = insertelement <2 x bfloat> poison, bfloat %x, i64 0
  %v = insertelement <2 x bfloat> %v0, bfloat %y, i64 1
  %w = fmul <2 x bfloat> %v, %v
  %m = call <2 x bfloat> @llvm.maxnum.v2bf16(<2 x bfloat> %w, <2 x bfloat> %v)
  %o2 = getelementptr bfloat, ptr addrspace(1) %out, i64 2
  store <2 x bfloat> %m, ptr addrspace(1) %o2, align 4
  ret void
}
)");
  alignas(4) uint16_t out[4] = {};
  void* outPtr = out;
  // x = 1 + 2^-7 (0x3F81), y = 2^-8 (0x3B80): x + y = 1 + 3 * 2^-8 lies halfway between 0x3F81 and 0x3F82 and
  // rounds to even 0x3F82; x * y + y = 2^-7 + 2^-15 rounds to 2^-7 (0x3C00); max(x * x, x) = 1 + 2^-6 + 2^-14
  // rounds to 1 + 2^-6 (0x3F82); max(y * y, y) = y.
  uint16_t x = 0x3F81, y = 0x3B80;
  void* params[] = {&outPtr, &x, &y};
  jit.entry()(params);
  EXPECT_EQ(out[0], 0x3F82);
  EXPECT_EQ(out[1], 0x3C00);
  EXPECT_EQ(out[2], 0x3F82);
  EXPECT_EQ(out[3], 0x3B80);
}

TEST_F(SimHostExec, AmdgpuLaneIdPrivateMemoryBarrierAndMath) {
  sim::HostJit jit = compile(std::string(kAmdgpuHeader) + R"(
declare i32 @llvm.amdgcn.mbcnt.lo(i32, i32)
declare i32 @llvm.amdgcn.mbcnt.hi(i32, i32)
declare void @llvm.amdgcn.s.barrier()
declare float @llvm.amdgcn.fract.f32(float)
declare float @llvm.amdgcn.sin.f32(float)
declare float @llvm.amdgcn.exp2.f32(float)
declare float @llvm.amdgcn.rsq.f32(float)

define amdgpu_kernel void @amd(ptr addrspace(1) %out, float %x) {
  %slot = alloca i32, align 4, addrspace(5)
  %lo = call i32 @llvm.amdgcn.mbcnt.lo(i32 -1, i32 0)
  %lane = call i32 @llvm.amdgcn.mbcnt.hi(i32 -1, i32 %lo)
  store volatile i32 %lane, ptr addrspace(5) %slot, align 4
  %lane2 = load volatile i32, ptr addrspace(5) %slot, align 4
  store i32 %lane2, ptr addrspace(1) %out, align 4
  %lds = getelementptr i8, ptr addrspace(3) @tessera_lds, i32 16
  %offset = ptrtoint ptr addrspace(3) %lds to i32
  %o1 = getelementptr i32, ptr addrspace(1) %out, i64 1
  store i32 %offset, ptr addrspace(1) %o1, align 4
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire
  %f = call float @llvm.amdgcn.fract.f32(float %x)
  %o2 = getelementptr float, ptr addrspace(1) %out, i64 2
  store float %f, ptr addrspace(1) %o2, align 4
  %s = call float @llvm.amdgcn.sin.f32(float 0.25)
  %o3 = getelementptr float, ptr addrspace(1) %out, i64 3
  store float %s, ptr addrspace(1) %o3, align 4
  %e = call float @llvm.amdgcn.exp2.f32(float 3.0)
  %o4 = getelementptr float, ptr addrspace(1) %out, i64 4
  store float %e, ptr addrspace(1) %o4, align 4
  %r = call float @llvm.amdgcn.rsq.f32(float 16.0)
  %o5 = getelementptr float, ptr addrspace(1) %out, i64 5
  store float %r, ptr addrspace(1) %o5, align 4
  ret void
}
)");
  EXPECT_EQ(hostText.find("fence"), std::string::npos) << "s_barrier's fences stay\n" << hostText;
  EXPECT_EQ(hostText.find("tessera_lds"), std::string::npos) << hostText;
  for (uint32_t lane : {5u, 40u}) {
    state.lane = lane;
    state.accesses.clear();
    uint32_t out[6] = {};
    void* outPtr = out;
    float x = -1.25f;
    void* params[] = {&outPtr, &x};
    jit.entry()(params);
    EXPECT_EQ(out[0], lane) << "mbcnt_hi(-1, mbcnt_lo(-1, 0)) is the lane id";
    EXPECT_EQ(out[1], 16u);
    EXPECT_EQ(std::bit_cast<float>(out[2]), 0.75f);
    EXPECT_NEAR(std::bit_cast<float>(out[3]), 1.0f, 1e-6) << "v_sin takes turns";
    EXPECT_EQ(std::bit_cast<float>(out[4]), 8.0f);
    EXPECT_EQ(std::bit_cast<float>(out[5]), 0.25f);
    // The private slot stays on the stack: only the six global stores reach the runtime.
    EXPECT_EQ(state.accesses.size(), 6u);
  }
  EXPECT_EQ(state.barriers, 2);
}

}  // namespace
}  // namespace tessera::testing
