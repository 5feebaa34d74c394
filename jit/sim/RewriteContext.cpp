#include "jit/sim/RewriteContext.h"

#include <llvm/IR/InstIterator.h>
#include <llvm/IR/ModuleSlotTracker.h>
#include <llvm/Support/raw_ostream.h>

#include "ir/Error.h"

namespace tessera::sim {

namespace {

// Runtime functions whose result depends only on the calling thread (which never changes within a call of
// the kernel): the host optimizer may combine and hoist them.
bool dependsOnlyOnThread(llvm::StringRef name) {
  for (const char* n : {"__tsim_thread_id", "__tsim_threads_per_program", "__tsim_program_id", "__tsim_num_programs",
                        "__tsim_lane_id", "__tsim_warp_id", "__tsim_shared_base", "__tsim_dispatch_ptr",
                        "__tsim_implicitarg_ptr"})
    if (name == n) return true;
  return false;
}

// The instruction as the GPU module prints it, without its debug location.
std::string printed(const llvm::Instruction& inst, llvm::ModuleSlotTracker& slots) {
  std::string text;
  llvm::raw_string_ostream os(text);
  inst.print(os, slots);
  os.flush();
  if (size_t dbg = text.find(", !dbg "); dbg != std::string::npos) {
    size_t end = text.find(", !", dbg + 2);
    text.erase(dbg, end == std::string::npos ? std::string::npos : end - dbg);
  }
  size_t start = text.find_first_not_of(' ');
  return start == std::string::npos ? text : text.substr(start);
}

}  // namespace

RewriteContext::RewriteContext(llvm::Module& m, GpuTarget t, llvm::Function& k, const llvm::DataLayout& layout)
    : module(m), ctx(m.getContext()), target(t), kernel(k), gpuLayout(layout), ops_(m) {
  llvm::ModuleSlotTracker slots(&m);
  for (llvm::Function& f : m) {
    if (f.isDeclaration()) continue;
    slots.incorporateFunction(f);
    for (llvm::Instruction& i : llvm::instructions(f))
      if (i.mayReadOrWriteMemory() || llvm::isa<llvm::CallBase>(i)) text_[&i] = printed(i, slots);
  }
}

llvm::CallInst* RewriteContext::call(llvm::IRBuilder<>& b, RuntimeFunction f, llvm::ArrayRef<llvm::Value*> args) {
  llvm::FunctionCallee callee = module.getOrInsertFunction(f.name, f.type(ctx));
  auto* fn = llvm::cast<llvm::Function>(callee.getCallee());
  fn->setDoesNotThrow();
  if (dependsOnlyOnThread(f.name)) {
    fn->setDoesNotAccessMemory();
    fn->setWillReturn();
  }
  return b.CreateCall(callee, args);
}

llvm::ConstantInt* RewriteContext::site(const llvm::Instruction& inst, SiteKind kind, AddressSpace space,
                                        uint32_t bytes, uint32_t align) {
  backends::OpSource source = ops_.find(inst);
  Site s;
  s.kind = kind;
  s.space = space;
  s.bytes = bytes;
  s.align = align;
  s.op = source.op;
  s.file = source.file;
  s.line = source.line;
  s.column = source.column;
  auto it = text_.find(&inst);
  if (it != text_.end()) {
    s.instruction = it->second;
  } else {
    llvm::ModuleSlotTracker slots(&module);
    s.instruction = printed(inst, slots);
  }
  sites.push_back(std::move(s));
  return llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), sites.size() - 1);
}

llvm::AllocaInst* RewriteContext::scratch(llvm::Function& f, llvm::Type* type, unsigned index) {
  llvm::AllocaInst*& slot = scratch_[{&f, type, index}];
  if (!slot) {
    llvm::IRBuilder<> entry(&f.getEntryBlock(), f.getEntryBlock().getFirstInsertionPt());
    slot = entry.CreateAlloca(type, 0u, nullptr, "tsim.slot");
  }
  return slot;
}

void RewriteContext::fail(const llvm::Instruction& at, const std::string& why) const {
  backends::OpSource source = ops_.find(at);
  std::string message = "sim: cannot emulate kernel '" + kernel.getName().str() + "' (" + targetName() + "): " + why;
  if (!source.op.empty()) message += " (in tile-IR op '" + source.op + "')";
  throw Error(message, Location{source.file, source.line, source.column});
}

llvm::Value* sharedHostAddress(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::Value* offset) {
  llvm::Value* base = hostAddress(b, rc.call(b, TSIM_FUNCTION(__tsim_shared_base), {}));
  return b.CreateAdd(base, b.CreateZExt(offset, b.getInt64Ty()));
}

std::vector<llvm::Value*> toWords(llvm::IRBuilder<>& b, llvm::Value* v) {
  llvm::Type* t = v->getType();
  std::vector<llvm::Value*> words;
  if (t->isStructTy() || t->isArrayTy()) {
    unsigned n = t->isStructTy() ? t->getStructNumElements() : static_cast<unsigned>(t->getArrayNumElements());
    for (unsigned i = 0; i < n; ++i)
      for (llvm::Value* w : toWords(b, b.CreateExtractValue(v, {i}))) words.push_back(w);
    return words;
  }
  const uint64_t bits = t->getPrimitiveSizeInBits().getFixedValue();
  if (bits == 0 || bits % 32 != 0)
    throw Error("sim: internal error: a warp-level matrix operand is not a whole number of 32-bit registers");
  llvm::Type* i32 = b.getInt32Ty();
  const unsigned n = static_cast<unsigned>(bits / 32);
  llvm::Value* ints = b.CreateBitCast(v, n == 1 ? i32 : llvm::FixedVectorType::get(i32, n));
  for (unsigned i = 0; i < n; ++i) words.push_back(n == 1 ? ints : b.CreateExtractElement(ints, uint64_t(i)));
  return words;
}

llvm::Value* fromWords(llvm::IRBuilder<>& b, llvm::Type* type, llvm::ArrayRef<llvm::Value*> words, size_t& next) {
  if (type->isStructTy() || type->isArrayTy()) {
    llvm::Value* v = llvm::PoisonValue::get(type);
    unsigned n = type->isStructTy() ? type->getStructNumElements() : static_cast<unsigned>(type->getArrayNumElements());
    for (unsigned i = 0; i < n; ++i) {
      llvm::Type* part = type->isStructTy() ? type->getStructElementType(i) : type->getArrayElementType();
      v = b.CreateInsertValue(v, fromWords(b, part, words, next), {i});
    }
    return v;
  }
  const uint64_t bits = type->getPrimitiveSizeInBits().getFixedValue();
  const unsigned n = static_cast<unsigned>(bits / 32);
  if (bits == 0 || bits % 32 != 0 || next + n > words.size())
    throw Error("sim: internal error: a warp-level matrix result does not match the registers returned");
  if (n == 1) return b.CreateBitCast(words[next++], type);
  llvm::Value* ints = llvm::PoisonValue::get(llvm::FixedVectorType::get(b.getInt32Ty(), n));
  for (unsigned i = 0; i < n; ++i) ints = b.CreateInsertElement(ints, words[next++], uint64_t(i));
  return b.CreateBitCast(ints, type);
}

llvm::Value* wordArray(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::ArrayRef<llvm::Value*> words, unsigned index) {
  llvm::Type* arrayTy = llvm::ArrayType::get(b.getInt32Ty(), words.size());
  llvm::AllocaInst* array = rc.scratch(*b.GetInsertBlock()->getParent(), arrayTy, index);
  for (size_t i = 0; i < words.size(); ++i)
    b.CreateStore(words[i], b.CreateConstInBoundsGEP2_32(arrayTy, array, 0, static_cast<unsigned>(i)));
  return array;
}

std::vector<llvm::Value*> loadWords(llvm::IRBuilder<>& b, llvm::Value* array, unsigned count) {
  std::vector<llvm::Value*> words;
  for (unsigned i = 0; i < count; ++i)
    words.push_back(b.CreateLoad(b.getInt32Ty(), b.CreateConstInBoundsGEP1_32(b.getInt32Ty(), array, i)));
  return words;
}

llvm::Value* matrixMultiply(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::CallInst& call, MmaKind kind,
                            MatrixRegisters registers, unsigned operands) {
  std::vector<llvm::Value*> words;
  for (unsigned i = 0; i < operands; ++i)
    for (llvm::Value* w : toWords(b, call.getArgOperand(i))) words.push_back(w);
  const unsigned expected = registers.a + registers.b + registers.c;
  if (words.size() != expected)
    rc.fail(call, "the operands are " + std::to_string(words.size()) + " 32-bit registers per lane, expected " +
                      std::to_string(expected));
  llvm::ArrayRef<llvm::Value*> all(words);
  llvm::Value* a = wordArray(rc, b, all.slice(0, registers.a), 0);
  llvm::Value* bArray = wordArray(rc, b, all.slice(registers.a, registers.b), 1);
  llvm::Value* c = wordArray(rc, b, all.slice(registers.a + registers.b, registers.c), 2);
  llvm::Value* d = rc.scratch(*call.getFunction(), llvm::ArrayType::get(b.getInt32Ty(), registers.c), 3);
  const SiteKind site = rc.target == GpuTarget::Nvptx ? SiteKind::Mma : SiteKind::Mfma;
  rc.call(b, TSIM_FUNCTION(__tsim_mma), {b.getInt32(kind), a, bArray, c, d, rc.site(call, site)});
  size_t next = 0;
  return fromWords(b, call.getType(), loadWords(b, d, registers.c), next);
}

}  // namespace tessera::sim
