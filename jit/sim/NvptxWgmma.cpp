// The wgmma inline asm of the NVPTX backend (backends/nvptx/WgmmaAsm.h) as runtime calls, and the guards that let
// the runtime report a read of registers a wgmma.mma_async writes before the wait_group that completes it.
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Instructions.h>

#include <set>

#include "jit/sim/RewriteContext.h"

namespace tessera::sim {

namespace {

using backends::nvptx::WgmmaAsm;

bool isKind(const llvm::Instruction& inst, std::initializer_list<WgmmaAsm::Kind> kinds) {
  const auto* call = llvm::dyn_cast<llvm::CallInst>(&inst);
  if (!call) return false;
  std::optional<WgmmaAsm> wgmma = wgmmaAsmOf(*call);
  return wgmma && std::find(kinds.begin(), kinds.end(), wgmma->kind) != kinds.end();
}

// Instructions that pass a value on without reading it as data.
bool forwards(const llvm::Instruction& inst) {
  return llvm::isa<llvm::ExtractValueInst, llvm::InsertValueInst, llvm::PHINode, llvm::SelectInst, llvm::BitCastInst,
                   llvm::FreezeInst>(inst);
}

uint32_t inputKind(backends::nvptx::WgmmaInput input) {
  switch (input) {
    case backends::nvptx::WgmmaInput::F16: return kWgmmaF16;
    case backends::nvptx::WgmmaInput::BF16: return kWgmmaBF16;
    case backends::nvptx::WgmmaInput::E4M3: return kWgmmaE4M3;
    case backends::nvptx::WgmmaInput::E5M2: return kWgmmaE5M2;
  }
  return kWgmmaF16;
}

// A wgmma.wait_group N with N > 0.
bool leavesGroupsPending(const llvm::Instruction& inst) {
  const auto* call = llvm::dyn_cast<llvm::CallInst>(&inst);
  if (!call) return false;
  std::optional<WgmmaAsm> wgmma = wgmmaAsmOf(*call);
  return wgmma && wgmma->kind == WgmmaAsm::Kind::Wait && wgmma->pendingGroups > 0;
}

void guard(RewriteContext& rc, llvm::CallInst& mma, uint32_t issue) {
  std::vector<llvm::Instruction*> work{&mma};
  std::set<llvm::Instruction*> seen{&mma}, guarded;
  while (!work.empty()) {
    llvm::Instruction* value = work.back();
    work.pop_back();
    for (llvm::User* user : value->users()) {
      auto* inst = llvm::cast<llvm::Instruction>(user);
      // A wait_group that may leave groups pending (N > 0: the dot's own group, left in flight across iterations)
      // passes the registers on as they are; whether this mma is complete is the runtime's check where they are read.
      if (forwards(*inst) || leavesGroupsPending(*inst)) {
        if (seen.insert(inst).second) work.push_back(inst);
        continue;
      }
      // wgmma's own reads: an accumulator of a later mma_async, or a register a wait_group passes through.
      if (isKind(*inst, {WgmmaAsm::Kind::Mma, WgmmaAsm::Kind::Wait}) || !guarded.insert(inst).second) continue;
      llvm::IRBuilder<> b(inst);
      rc.call(b, TSIM_FUNCTION(__tsim_wgmma_register_read),
              {b.getInt32(issue), rc.site(*inst, SiteKind::WgmmaRegisterRead)});
    }
  }
}

llvm::CallInst* callAsm(llvm::IRBuilder<>& b, llvm::Type* result, std::string_view text, std::string_view constraints,
                        llvm::ArrayRef<llvm::Value*> args) {
  std::vector<llvm::Type*> params;
  for (llvm::Value* arg : args) params.push_back(arg->getType());
  return b.CreateCall(llvm::InlineAsm::get(llvm::FunctionType::get(result, params, false), std::string(text),
                                           std::string(constraints), /*hasSideEffects=*/true),
                      args);
}

// `registers` as the struct `call` returns.
llvm::Value* asStruct(llvm::IRBuilder<>& b, llvm::Type* type, const std::vector<llvm::Value*>& registers) {
  llvm::Value* result = llvm::PoisonValue::get(type);
  for (size_t i = 0; i < registers.size(); ++i) result = b.CreateInsertValue(result, registers[i], {static_cast<unsigned>(i)});
  return result;
}

// The single instructions a group stands for (operands: WgmmaAsm.h), each an asm of the table, at the group's
// source line; the wait passes at most kWgmmaMaxWaitRegisters registers at once, as the backend's dot_wait does.
void expandGroup(RewriteContext& rc, llvm::CallInst& call, const backends::nvptx::WgmmaGroup& g) {
  namespace nv = backends::nvptx;
  llvm::IRBuilder<> b(&call);
  const unsigned perIssue = static_cast<unsigned>(g.aOperands() + 1);
  const unsigned issueOperands = static_cast<unsigned>(g.issues()) * perIssue;
  const auto registers = static_cast<unsigned>(g.registers());
  if (call.arg_size() != issueOperands + 1 + registers)
    rc.fail(call, "wgmma group passes " + std::to_string(call.arg_size()) + " operands, expected " +
                      std::to_string(issueOperands + 1 + registers));
  llvm::Value* scale = call.getArgOperand(issueOperands);
  std::vector<llvm::Value*> d;
  for (unsigned i = 0; i < registers; ++i) d.push_back(call.getArgOperand(issueOperands + 1 + i));
  callAsm(b, b.getVoidTy(), nv::kProxyFenceAsm, "", {});
  callAsm(b, b.getVoidTy(), nv::kWgmmaFenceAsm, "", {});
  const unsigned perMma = static_cast<unsigned>(g.mma.n / 2);
  llvm::Type* slice = llvm::StructType::get(b.getContext(), std::vector<llvm::Type*>(perMma, b.getFloatTy()));
  const std::string mmaText = nv::wgmmaMmaAsm(g.mma), mmaConstraints = nv::wgmmaMmaConstraints(g.mma.n, g.mma.aInRegisters);
  for (unsigned issue = 0; issue < static_cast<unsigned>(g.issues()); ++issue) {
    const unsigned first = issue % static_cast<unsigned>(g.slices) * perMma;
    std::vector<llvm::Value*> args(call.arg_begin() + issue * perIssue, call.arg_begin() + (issue + 1) * perIssue);
    args.push_back(scale);
    args.insert(args.end(), d.begin() + first, d.begin() + first + perMma);
    llvm::Value* out = callAsm(b, slice, mmaText, mmaConstraints, args);
    for (unsigned i = 0; i < perMma; ++i) d[first + i] = b.CreateExtractValue(out, {i});
  }
  callAsm(b, b.getVoidTy(), nv::kWgmmaCommitAsm, "", {});
  for (size_t first = 0; first < d.size(); first += nv::kWgmmaMaxWaitRegisters) {
    const size_t count = std::min(d.size() - first, static_cast<size_t>(nv::kWgmmaMaxWaitRegisters));
    const std::vector<llvm::Value*> part(d.begin() + first, d.begin() + first + count);
    llvm::Type* waited = llvm::StructType::get(b.getContext(), std::vector<llvm::Type*>(count, b.getFloatTy()));
    llvm::Value* out = callAsm(b, waited, nv::wgmmaWaitAsm(g.pendingGroups),
                               nv::wgmmaWaitConstraints(static_cast<int>(count)), part);
    for (size_t i = 0; i < count; ++i) d[first + i] = b.CreateExtractValue(out, {static_cast<unsigned>(i)});
  }
  call.replaceAllUsesWith(asStruct(b, call.getType(), d));
  call.eraseFromParent();
}

}  // namespace

void expandWgmmaGroups(RewriteContext& rc) {
  std::vector<std::pair<llvm::CallInst*, backends::nvptx::WgmmaGroup>> groups;
  for (llvm::Function& f : rc.module)
    for (llvm::BasicBlock& block : f)
      for (llvm::Instruction& inst : block)
        if (auto* call = llvm::dyn_cast<llvm::CallInst>(&inst))
          if (std::optional<WgmmaAsm> wgmma = wgmmaAsmOf(*call); wgmma && wgmma->kind == WgmmaAsm::Kind::Group)
            groups.emplace_back(call, wgmma->group);
  for (auto& [call, group] : groups) expandGroup(rc, *call, group);
}

std::optional<WgmmaAsm> wgmmaAsmOf(const llvm::CallInst& call) {
  const auto* asmValue = llvm::dyn_cast<llvm::InlineAsm>(call.getCalledOperand());
  if (!asmValue) return std::nullopt;
  return backends::nvptx::findWgmmaAsm(asmValue->getAsmString(), asmValue->getConstraintString());
}

void guardWgmmaRegisterReads(RewriteContext& rc) {
  std::vector<llvm::CallInst*> mmas;
  for (llvm::Function& f : rc.module)
    for (llvm::BasicBlock& block : f)
      for (llvm::Instruction& inst : block)
        if (isKind(inst, {WgmmaAsm::Kind::Mma})) mmas.push_back(llvm::cast<llvm::CallInst>(&inst));
  for (llvm::CallInst* mma : mmas) {
    const uint32_t issue = static_cast<uint32_t>(rc.wgmmaIssues.size());
    rc.wgmmaIssues[mma] = issue;
    guard(rc, *mma, issue);
  }
}

llvm::Value* nvptxWgmma(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::CallInst& call, const WgmmaAsm& wgmma) {
  switch (wgmma.kind) {
    case WgmmaAsm::Kind::Fence:
      return rc.call(b, TSIM_FUNCTION(__tsim_wgmma_fence), {rc.site(call, SiteKind::WgmmaFence)});
    case WgmmaAsm::Kind::ProxyFence:
      // Memory is sequentially consistent in the emulator (docs/Sim.md): the proxies see the same bytes, so this is
      // an ordering point for the host compiler only.
      return b.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent, llvm::SyncScope::SingleThread);
    case WgmmaAsm::Kind::Commit:
      return rc.call(b, TSIM_FUNCTION(__tsim_wgmma_commit), {rc.site(call, SiteKind::WgmmaCommit)});
    case WgmmaAsm::Kind::Wait: {
      llvm::Value* done = rc.call(b, TSIM_FUNCTION(__tsim_wgmma_wait),
                                  {b.getInt32(wgmma.pendingGroups), rc.site(call, SiteKind::WgmmaWait)});
      if (wgmma.registers == 0) return done;
      // The registers it passes through, unchanged (their values are final once it returns).
      std::vector<llvm::Value*> words;
      for (llvm::Value* arg : call.args())
        for (llvm::Value* w : toWords(b, arg)) words.push_back(w);
      size_t next = 0;
      return fromWords(b, call.getType(), words, next);
    }
    case WgmmaAsm::Kind::Mma: break;
    case WgmmaAsm::Kind::Group:
      rc.fail(call, "internal error: a wgmma group reached the rewrite unexpanded (expandWgmmaGroups runs first)");
  }
  // Operands: descA (or A's four registers), descB, scale-d, then the accumulator C (WgmmaAsm.h).
  const unsigned aOperands = wgmma.mma.aInRegisters ? 4 : 1;
  std::vector<llvm::Value*> c;
  for (unsigned i = aOperands + 2; i < call.arg_size(); ++i)
    for (llvm::Value* w : toWords(b, call.getArgOperand(i))) c.push_back(w);
  const auto registers = static_cast<unsigned>(wgmma.registers);
  if (c.size() != registers)
    rc.fail(call, "wgmma.mma_async passes " + std::to_string(c.size()) + " accumulator registers, expected " +
                      std::to_string(registers));
  llvm::Value* cArray = wordArray(rc, b, c, 2);
  llvm::Value* d = rc.scratch(*call.getFunction(), llvm::ArrayType::get(b.getInt32Ty(), registers), 3);
  llvm::Value* descA = b.getInt64(0);
  llvm::Value* aArray = llvm::ConstantPointerNull::get(b.getPtrTy());
  if (wgmma.mma.aInRegisters) {
    std::vector<llvm::Value*> a;
    for (unsigned i = 0; i < 4; ++i)
      for (llvm::Value* w : toWords(b, call.getArgOperand(i))) a.push_back(w);
    if (a.size() != 4) rc.fail(call, "wgmma.mma_async passes " + std::to_string(a.size()) + " A words, expected 4");
    aArray = wordArray(rc, b, a, 4);
  } else {
    descA = call.getArgOperand(0);
  }
  const uint32_t transposes = (wgmma.mma.transposeA ? 1u : 0u) | (wgmma.mma.transposeB ? 2u : 0u);
  rc.call(b, TSIM_FUNCTION(__tsim_wgmma_mma),
          {b.getInt32(wgmma.mma.n), b.getInt32(inputKind(wgmma.mma.inputA)), b.getInt32(inputKind(wgmma.mma.inputB)),
           b.getInt32(transposes), descA, aArray, call.getArgOperand(aOperands),
           call.getArgOperand(aOperands + 1), cArray, d, b.getInt32(rc.wgmmaIssues.at(&call)),
           rc.site(call, SiteKind::Wgmma)});
  size_t next = 0;
  return fromWords(b, call.getType(), loadWords(b, d, registers), next);
}

}  // namespace tessera::sim
