#include "backends/nvptx/NVPTXHooks.h"

#include <llvm/IR/IntrinsicsNVPTX.h>

#include <optional>
#include <vector>

#include "backends/nvptx/SharedMemoryLimits.h"
#include "ir/Error.h"
#include "transforms/analysis/SharedScratch.h"

namespace tessera::backends::nvptx {

using ir::OpKind;

namespace {

void addAnnotation(llvm::Module& m, llvm::Function& f, const char* key, int value) {
  llvm::LLVMContext& ctx = m.getContext();
  llvm::NamedMDNode* md = m.getOrInsertNamedMetadata("nvvm.annotations");
  llvm::Metadata* ops[] = {llvm::ValueAsMetadata::get(&f), llvm::MDString::get(ctx, key),
                           llvm::ValueAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), value))};
  md->addOperand(llvm::MDNode::get(ctx, ops));
}

llvm::Value* sreg(IRBuilder& b, llvm::Intrinsic::ID id) { return b.CreateIntrinsic(id, {}, {}); }

}  // namespace

int64_t programsPerMultiprocessor(const std::string& arch, int64_t sharedBytes) {
  constexpr int64_t kReservedPerProgram = 1024;  // the driver's, per program (sm_80 and up)
  const std::optional<SharedMemoryLimits> limits = sharedMemoryLimits(arch);
  if (!limits || sharedBytes < 0) return 0;
  return limits->perMultiprocessor / (sharedBytes + kReservedPerProgram);
}

void NVPTXHooks::declareMinPrograms(llvm::Function& kernel, int64_t programs) {
  if (minProgramsDeclared_) return;
  addAnnotation(*kernel.getParent(), kernel, "minctasm", static_cast<int>(programs));
  minProgramsDeclared_ = true;
}

void NVPTXHooks::configureKernel(llvm::Function& kernel, int numWarps) {
  kernel.setCallingConv(llvm::CallingConv::PTX_Kernel);
  llvm::Module& m = *kernel.getParent();
  addAnnotation(m, kernel, "kernel", 1);
  const int64_t threads = int64_t{numWarps} * warpSize();
  addAnnotation(m, kernel, "maxntidx", static_cast<int>(threads));
  // 65536 registers over programs x threads >= 256 each: the declaration bounds nothing a thread may use, it only
  // tells ptxas that more programs cannot fit.
  constexpr int64_t kRegisterFile = 65536, kMaxRegistersPerThread = 256;
  if (programsBySharedMemory_ > 0 && programsBySharedMemory_ * threads * kMaxRegistersPerThread <= kRegisterFile)
    declareMinPrograms(kernel, programsBySharedMemory_);
  kernel.addFnAttr(llvm::Attribute::NoUnwind);
}

void NVPTXHooks::configureWarpSpecialized(llvm::Function& kernel) { declareMinPrograms(kernel, 1); }

void NVPTXHooks::declareDescriptorParameter(llvm::Function& kernel, unsigned argNo, int64_t bytes, int64_t align) {
  LoweringHooks::declareDescriptorParameter(kernel, argNo, bytes, align);
  // !{ptr @kernel, !"grid_constant", !{i32 p1, i32 p2, ...}}: LLVM's NVPTX backend numbers parameters from 1 here,
  // and reads one such node per kernel (a second node's parameters would not be grid constants, and taking their
  // address would copy them to the stack), so every descriptor parameter joins the kernel's one node.
  llvm::LLVMContext& ctx = kernel.getContext();
  llvm::NamedMDNode* annotations = kernel.getParent()->getOrInsertNamedMetadata("nvvm.annotations");
  std::vector<llvm::Metadata*> indices;
  std::optional<unsigned> existing;
  for (unsigned i = 0; i < annotations->getNumOperands(); ++i) {
    llvm::MDNode* node = annotations->getOperand(i);
    if (node->getNumOperands() != 3) continue;
    auto* key = llvm::dyn_cast<llvm::MDString>(node->getOperand(1));
    auto* owner = llvm::dyn_cast_or_null<llvm::ValueAsMetadata>(node->getOperand(0));
    if (!key || key->getString() != "grid_constant" || !owner || owner->getValue() != &kernel) continue;
    for (const llvm::MDOperand& index : llvm::cast<llvm::MDNode>(node->getOperand(2))->operands())
      indices.push_back(index);
    existing = i;
  }
  indices.push_back(llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), argNo + 1)));
  llvm::Metadata* ops[] = {llvm::ValueAsMetadata::get(&kernel), llvm::MDString::get(ctx, "grid_constant"),
                           llvm::MDNode::get(ctx, indices)};
  if (existing)
    annotations->setOperand(*existing, llvm::MDNode::get(ctx, ops));
  else
    annotations->addOperand(llvm::MDNode::get(ctx, ops));
}

llvm::Value* NVPTXHooks::threadId(IRBuilder& b) { return sreg(b, llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x); }

llvm::Value* NVPTXHooks::programId(IRBuilder& b, int axis) {
  static const llvm::Intrinsic::ID ids[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x,
                                            llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_y,
                                            llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_z};
  return sreg(b, ids[axis]);
}

llvm::Value* NVPTXHooks::numPrograms(IRBuilder& b, int axis) {
  static const llvm::Intrinsic::ID ids[] = {llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_x,
                                            llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_y,
                                            llvm::Intrinsic::nvvm_read_ptx_sreg_nctaid_z};
  return sreg(b, ids[axis]);
}

llvm::Value* NVPTXHooks::shuffleXorI32(IRBuilder& b, llvm::Value* v, int laneMask) {
  return b.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_bfly_i32, {},
                           {b.getInt32(0xFFFFFFFFu), v, b.getInt32(static_cast<uint32_t>(laneMask)), b.getInt32(0x1F)});
}

llvm::Value* NVPTXHooks::shuffleIdxI32(IRBuilder& b, llvm::Value* v, llvm::Value* lane) {
  return b.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_idx_i32, {},
                           {b.getInt32(0xFFFFFFFFu), v, lane, b.getInt32(0x1F)});
}

void NVPTXHooks::barrier(IRBuilder& b) { b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {}); }

llvm::Value* NVPTXHooks::sharedMemoryBase(IRBuilder& b) {
  llvm::Module& m = module(b);
  if (llvm::GlobalVariable* g = m.getNamedGlobal(kSharedMemorySymbol)) return g;
  auto* ty = llvm::ArrayType::get(b.getInt8Ty(), 0);
  auto* g = new llvm::GlobalVariable(m, ty, false, llvm::GlobalValue::ExternalLinkage, nullptr, kSharedMemorySymbol,
                                     nullptr, llvm::GlobalValue::NotThreadLocal, 3);
  g->setAlignment(llvm::Align(transforms::kSharedAlignment));  // scratch offsets are multiples of it
  return g;
}

llvm::Value* NVPTXHooks::callLibdevice(IRBuilder& b, const std::string& name, llvm::ArrayRef<llvm::Value*> args) {
  std::vector<llvm::Type*> types;
  for (llvm::Value* a : args) types.push_back(a->getType());
  auto* fty = llvm::FunctionType::get(args[0]->getType(), types, false);
  llvm::FunctionCallee f = module(b).getOrInsertFunction(name, fty);
  return b.CreateCall(f, args);
}

llvm::Value* NVPTXHooks::unaryMath(IRBuilder& b, OpKind op, llvm::Value* x, bool fast) {
  const bool f32 = x->getType()->isFloatTy();
  if (!f32 && !x->getType()->isDoubleTy()) return nullptr;
  if (fast && f32) {
    // The approximate SFU instructions Triton uses for f32 (max relative error ~2^-22 for ex2/lg2).
    llvm::Value* log2e = llvm::ConstantFP::get(b.getFloatTy(), 1.4426950408889634);
    llvm::Value* ln2 = llvm::ConstantFP::get(b.getFloatTy(), 0.6931471805599453);
    switch (op) {
      case OpKind::Exp2: return b.CreateIntrinsic(llvm::Intrinsic::nvvm_ex2_approx_f, {}, {x});
      case OpKind::Exp: return b.CreateIntrinsic(llvm::Intrinsic::nvvm_ex2_approx_f, {}, {b.CreateFMul(x, log2e)});
      case OpKind::Log2: return b.CreateIntrinsic(llvm::Intrinsic::nvvm_lg2_approx_f, {}, {x});
      case OpKind::Log: return b.CreateFMul(b.CreateIntrinsic(llvm::Intrinsic::nvvm_lg2_approx_f, {}, {x}), ln2);
      case OpKind::Rsqrt: return b.CreateIntrinsic(llvm::Intrinsic::nvvm_rsqrt_approx_f, {}, {x});
      default: break;
    }
  }
  const char* name = nullptr;
  switch (op) {
    case OpKind::Exp: name = f32 ? "__nv_expf" : "__nv_exp"; break;
    case OpKind::Exp2: name = f32 ? "__nv_exp2f" : "__nv_exp2"; break;
    case OpKind::Log: name = f32 ? "__nv_logf" : "__nv_log"; break;
    case OpKind::Log2: name = f32 ? "__nv_log2f" : "__nv_log2"; break;
    case OpKind::Rsqrt: name = f32 ? "__nv_rsqrtf" : "__nv_rsqrt"; break;
    case OpKind::Sin: name = f32 ? "__nv_sinf" : "__nv_sin"; break;
    case OpKind::Cos: name = f32 ? "__nv_cosf" : "__nv_cos"; break;
    case OpKind::Tanh: name = f32 ? "__nv_tanhf" : "__nv_tanh"; break;
    case OpKind::Erf: name = f32 ? "__nv_erff" : "__nv_erf"; break;
    default: return nullptr;
  }
  return callLibdevice(b, name, {x});
}

llvm::Value* NVPTXHooks::fmod(IRBuilder& b, llvm::Value* x, llvm::Value* y) {
  if (x->getType()->isFloatTy()) return callLibdevice(b, "__nv_fmodf", {x, y});
  if (x->getType()->isDoubleTy()) return callLibdevice(b, "__nv_fmod", {x, y});
  return nullptr;
}

void NVPTXHooks::print(IRBuilder& b, const std::string& format, const std::vector<llvm::Value*>& args) {
  llvm::Module& m = module(b);
  llvm::LLVMContext& ctx = m.getContext();
  // vprintf(format, buffer): the arguments packed in a local buffer with natural alignment.
  std::vector<llvm::Type*> fields;
  for (llvm::Value* a : args) fields.push_back(a->getType());
  auto* bufTy = llvm::StructType::get(ctx, fields);
  llvm::Function* f = b.GetInsertBlock()->getParent();
  IRBuilder entry(&f->getEntryBlock(), f->getEntryBlock().begin());
  llvm::Value* buf = entry.CreateAlloca(bufTy);
  for (size_t i = 0; i < args.size(); ++i) b.CreateStore(args[i], b.CreateStructGEP(bufTy, buf, static_cast<unsigned>(i)));
  llvm::Value* fmt = b.CreateGlobalStringPtr(format, "fmt", 0, &m);
  auto* ptrTy = llvm::PointerType::get(ctx, 0);
  llvm::FunctionCallee vprintf = m.getOrInsertFunction("vprintf", llvm::FunctionType::get(b.getInt32Ty(), {ptrTy, ptrTy}, false));
  b.CreateCall(vprintf, {fmt, buf});
}

void NVPTXHooks::assertFail(IRBuilder& b, const std::string& message, const std::string& file, unsigned line,
                            const std::string& function) {
  llvm::Module& m = module(b);
  auto* ptrTy = llvm::PointerType::get(m.getContext(), 0);
  llvm::FunctionCallee fail = m.getOrInsertFunction(
      "__assertfail",
      llvm::FunctionType::get(b.getVoidTy(), {ptrTy, ptrTy, b.getInt32Ty(), ptrTy, b.getInt64Ty()}, false));
  b.CreateCall(fail, {b.CreateGlobalStringPtr(message, "assert_msg", 0, &m), b.CreateGlobalStringPtr(file, "assert_file", 0, &m),
                      b.getInt32(line), b.CreateGlobalStringPtr(function, "assert_func", 0, &m), b.getInt64(1)});
}

llvm::SyncScope::ID NVPTXHooks::atomicScope(llvm::LLVMContext& ctx, const std::string& scope) {
  if (scope == "sys") return llvm::SyncScope::System;
  if (scope == "gpu") return ctx.getOrInsertSyncScopeID("device");
  if (scope == "cta") return ctx.getOrInsertSyncScopeID("block");
  throw Error("unknown atomic scope '" + scope + "' (expected cta, gpu or sys)");
}

}  // namespace tessera::backends::nvptx
