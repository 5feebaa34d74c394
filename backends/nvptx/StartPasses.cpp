#include "backends/nvptx/StartPasses.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <llvm/Analysis/ConstantFolding.h>
#include <llvm/IR/ConstantRange.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/ValueHandle.h>
#include <llvm/Transforms/Utils/Local.h>

#include "ir/Error.h"

namespace tessera::backends::nvptx {

namespace {

// The string a reflect query names: its operand is a constant C string, directly or through a cast.
std::string reflectName(const llvm::CallBase& call) {
  const auto* global = llvm::dyn_cast<llvm::GlobalVariable>(call.getArgOperand(0)->stripPointerCasts());
  const auto* text = global && global->hasInitializer()
                         ? llvm::dyn_cast<llvm::ConstantDataSequential>(global->getInitializer())
                         : nullptr;
  if (!text || !text->isCString())
    throw Error("nvptx: a __nvvm_reflect query in '" + call.getFunction()->getName().str() +
                "' does not name a constant string");
  return text->getAsCString().str();
}

bool isReflectQuery(const llvm::CallBase& call) {
  const llvm::Function* callee = call.getCalledFunction();
  return callee && (callee->getName() == "__nvvm_reflect" || callee->getIntrinsicID() == llvm::Intrinsic::nvvm_reflect);
}

// The value of annotation `key` on `f` in the module's nvvm.annotations: {ptr @f, !"key", i32 value, ...}.
std::optional<uint64_t> annotation(const llvm::Function& f, llvm::StringRef key) {
  const llvm::NamedMDNode* annotations = f.getParent()->getNamedMetadata("nvvm.annotations");
  if (!annotations) return std::nullopt;
  for (const llvm::MDNode* node : annotations->operands()) {
    if (node->getNumOperands() == 0 ||
        llvm::mdconst::dyn_extract_or_null<llvm::Function>(node->getOperand(0)) != &f)
      continue;
    for (unsigned i = 1; i + 1 < node->getNumOperands(); i += 2) {
      const auto* name = llvm::dyn_cast<llvm::MDString>(node->getOperand(i));
      if (!name || name->getString() != key) continue;
      if (const auto* value = llvm::mdconst::dyn_extract<llvm::ConstantInt>(node->getOperand(i + 1)))
        return value->getZExtValue();
    }
  }
  return std::nullopt;
}

// The product of the x, y and z annotations present (PTX's .maxntid / .reqntid bound the total thread count).
std::optional<uint64_t> threadCount(const llvm::Function& f, const std::string& prefix) {
  std::optional<uint64_t> x = annotation(f, prefix + "x"), y = annotation(f, prefix + "y"),
                          z = annotation(f, prefix + "z");
  if (!x && !y && !z) return std::nullopt;
  return x.value_or(1) * y.value_or(1) * z.value_or(1);
}

void addRange(llvm::CallBase& call, uint64_t low, uint64_t high) {
  if (call.getMetadata(llvm::LLVMContext::MD_range)) return;  // the caller's own, as nvvm-intr-range leaves it
  const unsigned bits = call.getType()->getIntegerBitWidth();
  llvm::ConstantRange range(llvm::APInt(bits, low), llvm::APInt(bits, high));
  if (std::optional<llvm::ConstantRange> existing = call.getRange()) range = range.intersectWith(*existing);
  call.removeRetAttr(llvm::Attribute::Range);
  call.addRangeRetAttr(range);
}

}  // namespace

void answerReflectQueries(llvm::Module& m, unsigned smVersion) {
  int64_t flushToZero = 0;
  if (const auto* flag = llvm::mdconst::extract_or_null<llvm::ConstantInt>(m.getModuleFlag("nvvm-reflect-ftz")))
    flushToZero = flag->getSExtValue();
  std::vector<llvm::CallBase*> queries;
  for (llvm::Function& f : m)
    for (llvm::Instruction& inst : llvm::instructions(f))
      if (auto* call = llvm::dyn_cast<llvm::CallBase>(&inst); call && isReflectQuery(*call)) queries.push_back(call);
  // What depends on an answer folds now, branches included, as nvvm-reflect does: code for other architectures
  // (an intrinsic sm_80 lacks, say) must not reach code generation, and the inliner then sees the smaller bodies.
  // Weak handles: folding a branch can erase a PHI node that is still waiting in the work list.
  std::vector<llvm::WeakVH> toFold, toErase;
  for (llvm::CallBase* call : queries) {
    const std::string name = reflectName(*call);
    const int64_t answer = name == "__CUDA_FTZ" ? flushToZero : name == "__CUDA_ARCH" ? int64_t{smVersion} * 10 : 0;
    for (llvm::User* user : call->users()) toFold.emplace_back(user);
    call->replaceAllUsesWith(llvm::ConstantInt::get(call->getType(), answer));
    toErase.emplace_back(call);
  }
  while (!toFold.empty()) {
    auto* inst = llvm::dyn_cast_or_null<llvm::Instruction>(toFold.back());
    toFold.pop_back();
    if (!inst) continue;
    if (llvm::Constant* folded = llvm::ConstantFoldInstruction(inst, m.getDataLayout())) {
      for (llvm::User* user : inst->users()) toFold.emplace_back(user);
      inst->replaceAllUsesWith(folded);
      if (llvm::isInstructionTriviallyDead(inst)) toErase.emplace_back(inst);
    } else if (inst->isTerminator()) {
      llvm::ConstantFoldTerminator(inst->getParent());
    }
  }
  std::vector<llvm::Instruction*> dead;
  for (const llvm::WeakVH& handle : toErase)
    if (auto* inst = llvm::dyn_cast_or_null<llvm::Instruction>(handle)) dead.push_back(inst);
  std::sort(dead.begin(), dead.end());
  dead.erase(std::unique(dead.begin(), dead.end()), dead.end());
  for (llvm::Instruction* inst : dead) inst->eraseFromParent();
}

void addIdRanges(llvm::Module& m) {
  for (llvm::Function& f : m) {
    if (f.isDeclaration()) continue;
    // Without an annotation a program has at most 1024 threads (64 along z).
    const uint64_t threads = threadCount(f, "reqntid").value_or(threadCount(f, "maxntid").value_or(UINT32_MAX));
    const uint64_t blockX = std::min<uint64_t>(1024, threads), blockY = blockX, blockZ = std::min<uint64_t>(64, threads);
    constexpr uint64_t kGridX = 0x7fffffff, kGridYZ = 0xffff;
    for (llvm::Instruction& inst : llvm::instructions(f)) {
      auto* call = llvm::dyn_cast<llvm::IntrinsicInst>(&inst);
      if (!call) continue;
      switch (call->getIntrinsicID()) {
        case llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x: addRange(*call, 0, blockX); break;
        case llvm::Intrinsic::nvvm_read_ptx_sreg_tid_y: addRange(*call, 0, blockY); break;
        case llvm::Intrinsic::nvvm_read_ptx_sreg_tid_z: addRange(*call, 0, blockZ); break;
        case llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x: addRange(*call, 1, blockX + 1); break;
        case llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_y: addRange(*call, 1, blockY + 1); break;
        case llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_z: addRange(*call, 1, blockZ + 1); break;
        case llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x: addRange(*call, 0, kGridX); break;
        case llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y: addRange(*call, 0, kGridYZ); break;
        case llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z: addRange(*call, 0, kGridYZ); break;
        case llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x: addRange(*call, 1, kGridX + 1); break;
        case llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y: addRange(*call, 1, kGridYZ + 1); break;
        case llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z: addRange(*call, 1, kGridYZ + 1); break;
        case llvm::Intrinsic::nvvm_read_ptx_sreg_warpsize: addRange(*call, 32, 33); break;
        case llvm::Intrinsic::nvvm_read_ptx_sreg_laneid: addRange(*call, 0, 32); break;
        default: break;
      }
    }
  }
}

}  // namespace tessera::backends::nvptx
