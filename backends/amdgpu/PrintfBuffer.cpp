#include "backends/amdgpu/PrintfBuffer.h"

#include <llvm/IR/IntrinsicsAMDGPU.h>

#include "ir/Error.h"

namespace tessera::backends::amdgpu {

namespace {

constexpr const char* kFormatsMetadata = "llvm.printf.fmts";

// Pointers travel as their 64-bit address; everything else as its own bits.
llvm::Value* recordValue(IRBuilder& b, llvm::Value* arg) {
  return arg->getType()->isPointerTy() ? b.CreatePtrToInt(arg, b.getInt64Ty()) : arg;
}

}  // namespace

unsigned printfArgumentBytes(const llvm::Value* arg) {
  llvm::Type* t = arg->getType();
  if (t->isIntegerTy(32) || t->isFloatTy()) return 4;
  if (t->isIntegerTy(64) || t->isDoubleTy() || t->isPointerTy()) return 8;
  std::string name;
  llvm::raw_string_ostream os(name);
  t->print(os);
  throw Error("amdgpu printf: cannot pass a value of LLVM type " + name + " (expected i32, i64, float, double or a pointer)");
}

std::string printfFormatRecord(unsigned id, const std::string& format, const std::vector<unsigned>& argBytes) {
  std::string s = std::to_string(id) + ":" + std::to_string(argBytes.size()) + ":";
  for (unsigned bytes : argBytes) s += std::to_string(bytes) + ":";
  // The runtime reads the record with C escapes, and ':' separates its fields.
  for (char c : format) {
    switch (c) {
      case '\a': s += "\\a"; break;
      case '\b': s += "\\b"; break;
      case '\f': s += "\\f"; break;
      case '\n': s += "\\n"; break;
      case '\r': s += "\\r"; break;
      case '\v': s += "\\v"; break;
      case ':': s += "\\72"; break;
      default: s += c;
    }
  }
  return s;
}

unsigned registerPrintfFormat(llvm::Module& m, const std::string& format, const std::vector<llvm::Value*>& args) {
  llvm::NamedMDNode* formats = m.getOrInsertNamedMetadata(kFormatsMetadata);
  unsigned id = formats->getNumOperands() + 1;
  std::vector<unsigned> bytes;
  for (const llvm::Value* a : args) bytes.push_back(printfArgumentBytes(a));
  llvm::LLVMContext& ctx = m.getContext();
  formats->addOperand(llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, printfFormatRecord(id, format, bytes))}));
  return id;
}

llvm::Value* printfBufferPointer(IRBuilder& b) {
  llvm::Value* implicitArgs = b.CreateIntrinsic(llvm::Intrinsic::amdgcn_implicitarg_ptr, {}, {});
  llvm::Value* slot = b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), implicitArgs, kPrintfBufferImplicitArgOffset);
  llvm::LoadInst* p = b.CreateAlignedLoad(llvm::PointerType::get(b.getContext(), kGlobalAddrSpace), slot, llvm::Align(8));
  p->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(b.getContext(), {}));
  return p;
}

void writePrintfRecord(IRBuilder& b, llvm::Value* buffer, unsigned id, const std::vector<llvm::Value*>& args) {
  llvm::LLVMContext& ctx = b.getContext();
  llvm::Function* f = b.GetInsertBlock()->getParent();
  uint64_t recordBytes = 4;
  for (const llvm::Value* a : args) recordBytes += printfArgumentBytes(a);

  llvm::BasicBlock* reserve = llvm::BasicBlock::Create(ctx, "printf.reserve", f);
  llvm::BasicBlock* tryClaim = llvm::BasicBlock::Create(ctx, "printf.try", f);
  llvm::BasicBlock* claim = llvm::BasicBlock::Create(ctx, "printf.claim", f);
  llvm::BasicBlock* write = llvm::BasicBlock::Create(ctx, "printf.write", f);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx, "printf.done", f);
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Type* i64 = b.getInt64Ty();
  llvm::SyncScope::ID agent = ctx.getOrInsertSyncScopeID("agent");

  b.CreateCondBr(b.CreateIsNotNull(buffer), reserve, done);

  b.SetInsertPoint(reserve);
  llvm::Value* capacity = b.CreateAlignedLoad(i32, b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), buffer, 4), llvm::Align(4));
  llvm::LoadInst* usedNow = b.CreateAlignedLoad(i32, buffer, llvm::Align(4));
  usedNow->setAtomic(llvm::AtomicOrdering::Monotonic, agent);
  b.CreateBr(tryClaim);

  // Claim [used, used + recordBytes) unless that runs past the capacity; on a lost race, retry from what won.
  b.SetInsertPoint(tryClaim);
  llvm::PHINode* used = b.CreatePHI(i32, 2, "printf.used");
  used->addIncoming(usedNow, reserve);
  llvm::Value* end = b.CreateAdd(b.CreateZExt(used, i64), b.getInt64(kPrintfBufferHeaderBytes + recordBytes));
  b.CreateCondBr(b.CreateICmpULE(end, b.CreateZExt(capacity, i64)), claim, done);

  b.SetInsertPoint(claim);
  llvm::Value* newUsed = b.CreateAdd(used, b.getInt32(static_cast<uint32_t>(recordBytes)));
  llvm::AtomicCmpXchgInst* cas = b.CreateAtomicCmpXchg(buffer, used, newUsed, llvm::MaybeAlign(4),
                                                       llvm::AtomicOrdering::Monotonic,
                                                       llvm::AtomicOrdering::Monotonic, agent);
  used->addIncoming(b.CreateExtractValue(cas, 0), claim);
  b.CreateCondBr(b.CreateExtractValue(cas, 1), write, tryClaim);

  b.SetInsertPoint(write);
  llvm::Value* at = b.CreateInBoundsGEP(b.getInt8Ty(), buffer,
                                        b.CreateAdd(b.CreateZExt(used, i64), b.getInt64(kPrintfBufferHeaderBytes)));
  b.CreateAlignedStore(b.getInt32(id), at, llvm::Align(4));
  uint64_t offset = 4;
  for (llvm::Value* a : args) {
    b.CreateAlignedStore(recordValue(b, a), b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), at, offset), llvm::Align(4));
    offset += printfArgumentBytes(a);
  }
  b.CreateBr(done);

  b.SetInsertPoint(done);
}

}  // namespace tessera::backends::amdgpu
