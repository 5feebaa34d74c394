// What our kernels are, and so what this pipeline can leave out of O3: one kernel function, whose only calls
// are intrinsics and the libdevice functions it was linked with; straight-line per-element code (tiles are
// unrolled by the lowering into one value per register), with a branch pair per masked element; loops only where
// the tile IR has `for`/`while`. There are no dead stores for DSE to find (it was a third of O3's time on the
// matmuls), nothing to vectorize that the lowering did not already vectorize, no switches, no globals but shared
// memory, no C library calls. O3's passes were left out one at a time, keeping the optimized IR and then the PTX of
// every standard kernel (benchmarks/compile_time and kernel_resources) unchanged: each pass below changed one of
// them when left out, or inlines libdevice. The order is O3's.
#include "backends/common/KernelPipeline.h"

#include <llvm/Passes/OptimizationLevel.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>
#include <llvm/Transforms/IPO/GlobalDCE.h>
#include <llvm/Transforms/IPO/Inliner.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/CorrelatedValuePropagation.h>
#include <llvm/Transforms/Scalar/DivRemPairs.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/GVN.h>
#include <llvm/Transforms/Scalar/IndVarSimplify.h>
#include <llvm/Transforms/Scalar/InferAlignment.h>
#include <llvm/Transforms/Scalar/LICM.h>
#include <llvm/Transforms/Scalar/LoopPassManager.h>
#include <llvm/Transforms/Scalar/LoopRotation.h>
#include <llvm/Transforms/Scalar/LoopUnrollPass.h>
#include <llvm/Transforms/Scalar/Reassociate.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>
#include <llvm/Transforms/Scalar/SpeculativeExecution.h>

namespace tessera::backends {

namespace {

// SimplifyCFG as O3 runs it before loop optimization (canonical loops kept, no speculation of unpredictable
// branches); `rangesToCompares` turns switch ranges into compares, as every run after the first does.
llvm::SimplifyCFGPass simplifyCFG(bool rangesToCompares, bool speculateUnpredictables = false) {
  return llvm::SimplifyCFGPass(llvm::SimplifyCFGOptions()
                                   .convertSwitchRangeToICmp(rangesToCompares)
                                   .speculateUnpredictables(speculateUnpredictables));
}

template <class LoopPass>
auto onLoops(LoopPass pass, bool memorySSA) {
  return llvm::createFunctionToLoopPassAdaptor(std::move(pass), memorySSA);
}

// Before inlining: the lowering's own redundancy. It emits each element's index math and its masked accesses one
// register at a time (a pred.then/pred.join block pair per masked element); simplifycfg merges what it can, early-cse
// drops the repeated lane/warp and layout terms, instcombine folds the linear layouts' XOR/shift/mask arithmetic
// with constant operands.
llvm::FunctionPassManager earlyCleanup() {
  llvm::FunctionPassManager fpm;
  fpm.addPass(simplifyCFG(false));
  fpm.addPass(llvm::EarlyCSEPass(/*UseMemorySSA=*/false));
  fpm.addPass(llvm::InstCombinePass());
  fpm.addPass(simplifyCFG(true));
  return fpm;
}

// The kernel after inlining, in O3's order:
// - early-cse over memory: repeated shared-memory loads of one exchange;
// - speculative-execution (on divergent targets only): hoists cheap per-element work out of the masked blocks;
// - correlated-propagation: thread ids have known ranges (the target's start passes), so the lane/warp
//   divisions and the bounds compares on them simplify;
// - reassociate: gathers each register's constant offset apart from the per-thread base of an address;
// - loop-rotate + licm: the `for` loops (the K loop of a matmul): the address and mask math that does not depend
//   on the induction variable leaves the loop;
// - indvars: one canonical induction variable per loop;
// - gvn: expressions repeated across blocks (the loop body and its masked blocks). Without memory dependence
//   analysis: its load elimination changed no kernel (early-cse over memory has removed the repeated loads by then),
//   while its alias queries, on the shared-memory loads of a layout conversion, were half of this pipeline's time
//   on a matmul;
// - instcombine after the passes that leave new constant operands behind.
llvm::FunctionPassManager kernelSimplification() {
  llvm::FunctionPassManager fpm;
  fpm.addPass(llvm::EarlyCSEPass(/*UseMemorySSA=*/true));
  fpm.addPass(llvm::SpeculativeExecutionPass(/*OnlyIfDivergentTarget=*/true));
  fpm.addPass(llvm::CorrelatedValuePropagationPass());
  fpm.addPass(llvm::InstCombinePass());
  fpm.addPass(llvm::ReassociatePass());
  llvm::LoopPassManager rotateAndHoist;
  rotateAndHoist.addPass(llvm::LoopRotatePass(/*EnableHeaderDuplication=*/true, /*PrepareForLTO=*/false));
  rotateAndHoist.addPass(llvm::LICMPass(llvm::LICMOptions()));
  fpm.addPass(onLoops(std::move(rotateAndHoist), /*memorySSA=*/true));
  fpm.addPass(simplifyCFG(true));
  fpm.addPass(llvm::InstCombinePass());
  fpm.addPass(onLoops(llvm::IndVarSimplifyPass(), /*memorySSA=*/false));
  fpm.addPass(llvm::GVNPass(llvm::GVNOptions().setMemDep(false)));
  fpm.addPass(llvm::CorrelatedValuePropagationPass());
  fpm.addPass(onLoops(llvm::LICMPass(llvm::LICMOptions()), /*memorySSA=*/true));
  return fpm;
}

// Last: loops with small constant trip counts (a `for` over constants in the tile IR) unroll, alignment known
// from the arguments' divisibility reaches the accesses (so codegen can vectorize them), what unrolling exposed is
// folded and hoisted, a division and remainder of the same operands share one computation, a final cleanup.
llvm::FunctionPassManager lateCleanup() {
  llvm::FunctionPassManager fpm;
  fpm.addPass(llvm::LoopUnrollPass(llvm::LoopUnrollOptions(/*OptLevel=*/3)));
  fpm.addPass(llvm::InferAlignmentPass());
  fpm.addPass(llvm::InstCombinePass());
  fpm.addPass(onLoops(llvm::LICMPass(llvm::LICMOptions()), /*memorySSA=*/true));
  fpm.addPass(llvm::DivRemPairsPass());
  fpm.addPass(simplifyCFG(true, /*speculateUnpredictables=*/true));
  return fpm;
}

}  // namespace

llvm::ModulePassManager buildKernelPipeline() {
  llvm::ModulePassManager mpm;
  mpm.addPass(llvm::createModuleToFunctionPassAdaptor(earlyCleanup()));
  // libdevice: its functions are internal after linking; inline them all and drop the bodies.
  mpm.addPass(llvm::AlwaysInlinerPass());
  mpm.addPass(llvm::createModuleToPostOrderCGSCCPassAdaptor(llvm::InlinerPass()));
  mpm.addPass(llvm::GlobalDCEPass());
  mpm.addPass(llvm::createModuleToFunctionPassAdaptor(kernelSimplification()));
  mpm.addPass(llvm::createModuleToFunctionPassAdaptor(lateCleanup()));
  return mpm;
}

}  // namespace tessera::backends
