// The NVPTX target optimizes with the kernel pipeline (backends/common/KernelPipeline.h), a subset of LLVM's O3
// chosen for compile time: on tutorial kernels it must give the same PTX as O3, and it must still do what our
// kernels depend on (libdevice inlined and its __nvvm_reflect queries answered, loop-invariant address math out
// of loops).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/ConstantRange.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include "backends/Target.h"
#include "backends/common/OptimizeModule.h"
#include "backends/common/TargetMachineCache.h"
#include "backends/nvptx/NVPTXTarget.h"
#include "ir/Error.h"
#include "tessera/kernels/layernorm.h"
#include "tessera/kernels/matmul.h"
#include "tessera/kernels/softmax.h"
#include "transforms/Pipeline.h"

namespace tessera::testing {
namespace {

constexpr const char* kArch = "sm_90a";

backends::TargetOptions optionsFor(int numWarps) {
  backends::TargetOptions options;
  options.arch = kArch;
  options.numWarps = numWarps;
  return options;
}

// The kernel's tile IR after the JIT's default passes, lowered to LLVM IR.
std::unique_ptr<llvm::Module> lowered(const KernelDef& kernel, const Constants& constants,
                                      int numWarps, const backends::Target& target, llvm::LLVMContext& ctx) {
  std::unique_ptr<ir::Module> traced = kernel.trace(constants);
  ir::Function& f = *traced->functions().at(0);
  f.attrs()["num_warps"] = ir::Attr::integer(numWarps);
  transforms::PassManager passes;
  transforms::addDefaultPipeline(passes, target.passOptions(numWarps));
  passes.run(f);
  return target.lowerToLLVM(f, ctx, optionsFor(numWarps));
}

std::unique_ptr<llvm::TargetMachine> nvptxMachine() {
  std::string error;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget("nvptx64-nvidia-cuda", error);
  EXPECT_NE(t, nullptr) << error;
  return std::unique_ptr<llvm::TargetMachine>(t->createTargetMachine("nvptx64-nvidia-cuda", kArch, "+ptx80", {},
                                                                     std::nullopt, std::nullopt,
                                                                     llvm::CodeGenOptLevel::Aggressive));
}

bool callsLibdevice(const llvm::Module& m) {
  for (const llvm::Function& f : m)
    if (f.getName().starts_with("__nv")) return true;
  return false;
}

struct PipelineCase {
  const char* name;
  KernelDef (*kernel)();
  Constants constants;
  int numWarps;
};

class KernelPipelineMatchesO3 : public ::testing::TestWithParam<PipelineCase> {};

// The kernel pipeline left out only passes that did not change the PTX of the standard kernels
// (docs/CompileTime.md): compare the two on kernels of each kind, the lowered module optimized both ways.
TEST_P(KernelPipelineMatchesO3, SamePtx) {
  const PipelineCase& c = GetParam();
  std::unique_ptr<backends::Target> target = backends::createTarget("nvptx");
  const backends::TargetOptions options = optionsFor(c.numWarps);
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> viaKernelPipeline = lowered(c.kernel(), c.constants, c.numWarps, *target, ctx);
  ASSERT_FALSE(callsLibdevice(*viaKernelPipeline)) << "O3 is run here without linking libdevice: pick a kernel "
                                                      "that needs none";
  std::unique_ptr<llvm::Module> viaO3 = llvm::CloneModule(*viaKernelPipeline);

  target->optimize(*viaKernelPipeline, options);
  std::unique_ptr<llvm::TargetMachine> tm = nvptxMachine();
  backends::optimizeModule(*viaO3, *tm, llvm::OptimizationLevel::O3,
                           backends::MemoryAccessVectorization::AsGpuCodegen);  // O3, as the target runs it
  EXPECT_EQ(target->emit(*viaKernelPipeline, options), target->emit(*viaO3, options));
}

INSTANTIATE_TEST_SUITE_P(
    Tutorials, KernelPipelineMatchesO3,
    ::testing::Values(PipelineCase{"softmax", kernels::softmax_kernel, {{"BLOCK", 256}}, 4},
                      PipelineCase{"layernorm_fwd", kernels::layernorm_fwd_kernel, {{"BLOCK", 256}}, 4},
                      PipelineCase{"matmul", kernels::matmul_kernel,
                                   {{"BM", 64}, {"BN", 64}, {"BK", 32}, {"GROUP_M", 8}}, 4}),
    [](const ::testing::TestParamInfo<PipelineCase>& info) { return std::string(info.param.name); });

std::unique_ptr<llvm::Module> parseLLVM(const char* text, llvm::LLVMContext& ctx) {
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> m = llvm::parseAssemblyString(text, diagnostic, ctx);
  EXPECT_NE(m, nullptr) << diagnostic.getMessage().str();
  return m;
}

// libdevice's functions are inlined into the kernel and their bodies dropped; its __nvvm_reflect("__CUDA_FTZ")
// and "__CUDA_ARCH" queries are answered at compile time.
TEST(KernelPipeline, InlinesLibdeviceAndAnswersItsReflectQueries) {
  if (backends::nvptx::libdevicePath().empty()) GTEST_SKIP() << "libdevice is not installed (no CUDA toolkit)";
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = parseLLVM(R"(
define ptx_kernel void @k(ptr addrspace(1) %p) {
  %x = load float, ptr addrspace(1) %p
  %y = call float @__nv_expf(float %x)
  %z = call float @__nv_sinf(float %y)
  store float %z, ptr addrspace(1) %p
  ret void
}
declare float @__nv_expf(float)
declare float @__nv_sinf(float)
)", ctx);
  std::unique_ptr<backends::Target> target = backends::createTarget("nvptx");
  target->optimize(*m, optionsFor(4));
  int defined = 0;
  for (const llvm::Function& f : *m) {
    defined += !f.isDeclaration();
    EXPECT_FALSE(f.getName().starts_with("__nv")) << f.getName().str() << " is left in the optimized module";
  }
  EXPECT_EQ(defined, 1);  // the kernel alone
}

// `m` optimized for `arch`, then the constants its kernel @k stores, in order (0 for a store of a non-constant).
std::vector<uint64_t> storedConstantsAfterOptimizing(llvm::Module& m, const std::string& arch) {
  backends::TargetOptions options = optionsFor(4);
  options.arch = arch;
  backends::createTarget("nvptx")->optimize(m, options);
  std::vector<uint64_t> stored;
  for (llvm::Instruction& inst : llvm::instructions(*m.getFunction("k"))) {
    EXPECT_FALSE(llvm::isa<llvm::CallBase>(inst)) << "a reflect query is left";
    if (auto* store = llvm::dyn_cast<llvm::StoreInst>(&inst)) {
      auto* value = llvm::dyn_cast<llvm::ConstantInt>(store->getValueOperand());
      EXPECT_NE(value, nullptr) << "a stored answer is not a constant";
      stored.push_back(value ? value->getZExtValue() : 0);
    }
  }
  return stored;
}

// __nvvm_reflect answers: "__CUDA_ARCH" is the architecture's number times ten, "__CUDA_FTZ" the module's
// nvvm-reflect-ftz flag, anything else 0; a branch on an answer folds (the other architecture's code is gone).
TEST(KernelPipeline, AnswersReflectQueriesForTheArchitecture) {
  for (const auto& [arch, expected] : {std::pair<std::string, uint64_t>{"sm_90a", 900}, {"sm_80", 800}}) {
    SCOPED_TRACE(arch);
    llvm::LLVMContext ctx;
    std::unique_ptr<llvm::Module> m = parseLLVM(R"(
@arch = private unnamed_addr constant [12 x i8] c"__CUDA_ARCH\00"
@ftz = private unnamed_addr constant [11 x i8] c"__CUDA_FTZ\00"
@sqrt = private unnamed_addr constant [17 x i8] c"__CUDA_PREC_SQRT\00"
define ptx_kernel void @k(ptr addrspace(1) %p) {
  %a = call i32 @__nvvm_reflect(ptr @arch)
  store i32 %a, ptr addrspace(1) %p
  %f = call i32 @__nvvm_reflect(ptr @ftz)
  %p1 = getelementptr i32, ptr addrspace(1) %p, i32 1
  store i32 %f, ptr addrspace(1) %p1
  %s = call i32 @__nvvm_reflect(ptr @sqrt)
  %p2 = getelementptr i32, ptr addrspace(1) %p, i32 2
  store i32 %s, ptr addrspace(1) %p2
  %p3 = getelementptr i32, ptr addrspace(1) %p, i32 3
  %new = icmp sge i32 %a, 900
  br i1 %new, label %hopper, label %older
hopper:
  store i32 90, ptr addrspace(1) %p3
  ret void
older:
  store i32 80, ptr addrspace(1) %p3
  ret void
}
declare i32 @__nvvm_reflect(ptr)
!llvm.module.flags = !{!0}
!0 = !{i32 4, !"nvvm-reflect-ftz", i32 1}
)", ctx);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(storedConstantsAfterOptimizing(*m, arch), (std::vector<uint64_t>{expected, 1, 0, expected / 10}))
        << "one branch's store alone is left";
  }
}

// Folding a branch on an answer can erase a PHI node that also uses the answer and still waits to be folded (on
// sm_90a the branch leaves %join one predecessor, and its PHI becomes the constant 1).
TEST(KernelPipeline, ReflectFoldingSurvivesAPhiItsBranchErases) {
  for (const auto& [arch, expected] : {std::pair<std::string, uint64_t>{"sm_90a", 1}, {"sm_80", 800}}) {
    SCOPED_TRACE(arch);
    llvm::LLVMContext ctx;
    std::unique_ptr<llvm::Module> m = parseLLVM(R"(
@arch = private unnamed_addr constant [12 x i8] c"__CUDA_ARCH\00"
define ptx_kernel void @k(ptr addrspace(1) %p) {
entry:
  %a = call i32 @__nvvm_reflect(ptr @arch)
  %new = icmp sge i32 %a, 900
  br i1 %new, label %hopper, label %join
hopper:
  br label %join
join:
  %v = phi i32 [ %a, %entry ], [ 1, %hopper ]
  store i32 %v, ptr addrspace(1) %p
  ret void
}
declare i32 @__nvvm_reflect(ptr)
)", ctx);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(storedConstantsAfterOptimizing(*m, arch), std::vector<uint64_t>{expected});
  }
}

// A query whose operand is not a constant string cannot be answered: a clear error, not a guess.
TEST(KernelPipeline, RefusesAReflectQueryWithoutAConstantName) {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = parseLLVM(R"(
define ptx_kernel void @k(ptr addrspace(1) %p, ptr %name) {
  %a = call i32 @__nvvm_reflect(ptr %name)
  store i32 %a, ptr addrspace(1) %p
  ret void
}
declare i32 @__nvvm_reflect(ptr)
)", ctx);
  ASSERT_NE(m, nullptr);
  try {
    backends::createTarget("nvptx")->optimize(*m, optionsFor(4));
    ADD_FAILURE() << "optimized a reflect query it cannot answer";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("__nvvm_reflect query in 'k' does not name a constant string"),
              std::string::npos)
        << e.what();
  }
}

// Address math that does not depend on the loop's induction variable is computed once, before the loop.
TEST(KernelPipeline, HoistsLoopInvariantAddressMath) {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = parseLLVM(R"(
define ptx_kernel void @k(ptr addrspace(1) %p, i32 %n, i32 %stride) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %go = icmp sgt i32 %n, 0
  br i1 %go, label %loop, label %exit
loop:
  %i = phi i32 [ 0, %entry ], [ %next, %loop ]
  %row = mul i32 %tid, %stride
  %idx = add i32 %row, %i
  %q = getelementptr float, ptr addrspace(1) %p, i32 %idx
  %v = load float, ptr addrspace(1) %q
  %w = fadd float %v, 1.0
  store float %w, ptr addrspace(1) %q
  %next = add i32 %i, 1
  %more = icmp slt i32 %next, %n
  br i1 %more, label %loop, label %exit
exit:
  ret void
}
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
)", ctx);
  std::unique_ptr<backends::Target> target = backends::createTarget("nvptx");
  target->optimize(*m, optionsFor(4));
  llvm::Function& k = *m->getFunction("k");
  llvm::DominatorTree dt(k);
  llvm::LoopInfo loops(dt);
  ASSERT_FALSE(loops.empty()) << "the loop itself must stay (its trip count is not known)";
  int muls = 0;
  for (llvm::Instruction& inst : llvm::instructions(k))
    if (inst.getOpcode() == llvm::Instruction::Mul) {
      ++muls;
      EXPECT_EQ(loops.getLoopFor(inst.getParent()), nullptr) << "tid * stride is computed inside the loop";
    }
  EXPECT_EQ(muls, 1);
}

// The thread-id range and .maxntid of a kernel come from its module's annotation as it is now. LLVM 19's NVPTX
// start passes (nvvm-intr-range) read annotations through a process-wide cache keyed by the module's and the
// function's addresses, which only code generation clears: while our pipeline ran them, a module optimized and
// dropped without code generation (as the emulator's tests do) left its entry, and a later module allocated at
// the same two addresses read it (seen on the emulator: a 4-warp kernel's thread ids were taken to be below 32,
// and its upper warps ran outside the tile). Address reuse is up to the allocator; keeping the module and the
// function and changing the annotation between two optimizations recreates the stale entry every time.
TEST(KernelPipeline, IdRangesAndMaxntidComeFromTheModulesAnnotationAsItIsNow) {
  std::unique_ptr<backends::Target> target = backends::createTarget("nvptx");
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = parseLLVM(R"(
define ptx_kernel void @k(ptr addrspace(1) %p) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %q = getelementptr float, ptr addrspace(1) %p, i32 %t
  store float 1.0, ptr addrspace(1) %q
  ret void
}
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
!nvvm.annotations = !{!0}
!0 = !{ptr @k, !"maxntidx", i32 32}
)", ctx);
  ASSERT_NE(m, nullptr);
  llvm::CallBase* tid = nullptr;
  for (llvm::Instruction& inst : llvm::instructions(*m->getFunction("k")))
    if (auto* call = llvm::dyn_cast<llvm::CallBase>(&inst)) tid = call;
  ASSERT_NE(tid, nullptr);
  auto upperBound = [&]() -> uint64_t {
    std::optional<llvm::ConstantRange> range = tid->getRange();
    return range ? range->getUpper().getZExtValue() : 0;
  };

  target->optimize(*m, optionsFor(1));
  EXPECT_EQ(upperBound(), 32u) << "one warp: thread ids below 32";

  // The same kernel with 4 warps: a new annotation, and the range the first optimization gave dropped.
  llvm::Metadata* annotation[] = {
      llvm::ValueAsMetadata::get(m->getFunction("k")), llvm::MDString::get(ctx, "maxntidx"),
      llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), 128))};
  m->getNamedMetadata("nvvm.annotations")->setOperand(0, llvm::MDNode::get(ctx, annotation));
  tid->removeRetAttr(llvm::Attribute::Range);
  target->optimize(*m, optionsFor(4));
  EXPECT_EQ(upperBound(), 128u) << "four warps: thread ids below 128";
  EXPECT_NE(target->emit(*m, optionsFor(4)).find(".maxntid 128, 1, 1"), std::string::npos);
}

// Every compile on a thread shares one target machine per configuration (backends/common/TargetMachineCache.h):
// created once, found again by its key, and new on another thread. Sharing it changes no PTX: a matmul compiled
// before and after another kernel on the same machine gives the same text.
TEST(TargetMachineCache, OneMachinePerThreadAndKeyThatGivesTheSamePtx) {
  std::unique_ptr<backends::Target> target = backends::createTarget("nvptx");
  auto ptxOf = [&](const KernelDef& kernel, const Constants& constants) {
    llvm::LLVMContext ctx;
    std::unique_ptr<llvm::Module> m = lowered(kernel, constants, 4, *target, ctx);
    target->optimize(*m, optionsFor(4));
    return target->emit(*m, optionsFor(4));
  };
  const Constants matmul = {{"BM", 64}, {"BN", 64}, {"BK", 32}, {"GROUP_M", 8}};
  const std::string before = ptxOf(kernels::matmul_kernel(), matmul);
  EXPECT_NE(ptxOf(kernels::softmax_kernel(), {{"BLOCK", 256}}), before);
  EXPECT_EQ(ptxOf(kernels::matmul_kernel(), matmul), before);

  // (The compiles above registered the NVPTX target that nvptxMachine looks up.)
  int created = 0;
  auto create = [&] {
    ++created;
    return nvptxMachine();
  };
  llvm::TargetMachine& first = backends::cachedTargetMachine("test sm_90a", create);
  EXPECT_EQ(&backends::cachedTargetMachine("test sm_90a", create), &first);
  EXPECT_EQ(created, 1);
  EXPECT_NE(&backends::cachedTargetMachine("test other", create), &first);
  EXPECT_EQ(created, 2);
  const llvm::TargetMachine* onOtherThread = nullptr;
  std::thread([&] { onOtherThread = &backends::cachedTargetMachine("test sm_90a", create); }).join();
  EXPECT_NE(onOtherThread, &first);
  EXPECT_EQ(created, 3);
}

}  // namespace
}  // namespace tessera::testing
