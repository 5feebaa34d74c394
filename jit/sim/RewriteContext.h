// What the steps of the rewriting (HostModule.cpp) share while they turn one GPU module into host code: the
// runtime's declarations (typed from SimABI.h itself, so the two cannot disagree), the site table, stack
// scratch for values passed by address, and errors that name the kernel and the author's source location.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <llvm/IR/DataLayout.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "backends/common/DebugLocations.h"
#include "backends/nvptx/WgmmaAsm.h"
#include "jit/sim/SimABI.h"

namespace tessera::sim {

enum class GpuTarget { Nvptx, Amdgpu };

// The LLVM type of a SimABI.h parameter or result: integers by width, every pointer as `ptr`.
template <class T>
llvm::Type* abiType(llvm::LLVMContext& ctx) {
  if constexpr (std::is_void_v<T>) return llvm::Type::getVoidTy(ctx);
  else if constexpr (std::is_pointer_v<T>) return llvm::PointerType::get(ctx, 0);
  else {
    static_assert(std::is_integral_v<T>, "SimABI.h passes integers and pointers only");
    return llvm::Type::getIntNTy(ctx, 8 * sizeof(T));
  }
}
template <class F>
struct AbiFunction;
template <class R, class... A>
struct AbiFunction<R(A...)> {
  static llvm::FunctionType* type(llvm::LLVMContext& ctx) {
    return llvm::FunctionType::get(abiType<R>(ctx), {abiType<A>(ctx)...}, false);
  }
};

// A runtime function: its name and its LLVM type, both taken from its declaration in SimABI.h.
struct RuntimeFunction {
  const char* name;
  llvm::FunctionType* (*type)(llvm::LLVMContext&);
};
#define TSIM_FUNCTION(fn) ::tessera::sim::RuntimeFunction{#fn, &::tessera::sim::AbiFunction<decltype(fn)>::type}

class RewriteContext {
 public:
  RewriteContext(llvm::Module& m, GpuTarget target, llvm::Function& kernel, const llvm::DataLayout& gpuLayout);

  llvm::Module& module;
  llvm::LLVMContext& ctx;
  const GpuTarget target;
  llvm::Function& kernel;
  const llvm::DataLayout gpuLayout;  // the GPU module's own; the module itself already has the host's

  // Calls runtime function `f` at `b`'s insertion point.
  llvm::CallInst* call(llvm::IRBuilder<>& b, RuntimeFunction f, llvm::ArrayRef<llvm::Value*> args);

  // Registers `inst` (the GPU instruction being replaced) as a site; returns its id as an i32 constant.
  llvm::ConstantInt* site(const llvm::Instruction& inst, SiteKind kind, AddressSpace space = AddressSpace::Generic,
                          uint32_t bytes = 0, uint32_t align = 0);
  SiteTable sites;
  // The id of each wgmma.mma_async of the module (guardWgmmaRegisterReads numbers them).
  std::map<const llvm::CallInst*, uint32_t> wgmmaIssues;

  // A stack slot of `type` in the entry block of `f`. Rewritten instructions pass values through it right
  // around one runtime call, so every instruction of `f` shares slot `index` of each type.
  llvm::AllocaInst* scratch(llvm::Function& f, llvm::Type* type, unsigned index = 0);

  // An error naming the kernel, the target and the instruction's tile-IR op, at the author's source location.
  [[noreturn]] void fail(const llvm::Instruction& at, const std::string& why) const;
  std::string targetName() const { return target == GpuTarget::Nvptx ? "nvptx" : "amdgpu"; }

 private:
  backends::OpTable ops_;
  std::unordered_map<const llvm::Instruction*, std::string> text_;  // the GPU module's instructions, printed
  std::map<std::tuple<llvm::Function*, llvm::Type*, unsigned>, llvm::AllocaInst*> scratch_;
};

// A pointer as the 64-bit host address SimABI.h takes.
inline llvm::Value* hostAddress(llvm::IRBuilder<>& b, llvm::Value* ptr) { return b.CreatePtrToInt(ptr, b.getInt64Ty()); }
// The host address of a 32-bit shared address operand of the inline-asm table (mbarriers, TMA, stmatrix), which the
// rewriting made an offset into the shared buffer (HostAddressSpaces.cpp).
llvm::Value* sharedHostAddress(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::Value* offset);

// mma.sync and MFMA: `call`'s first `operands` arguments, as registers, are A, B and C (`registers` of each);
// the runtime's D becomes a value of the call's type.
struct MatrixRegisters {
  unsigned a, b, c;
};
llvm::Value* matrixMultiply(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::CallInst& call, MmaKind kind,
                            MatrixRegisters registers, unsigned operands);

// The 32-bit registers of `v` (a scalar, vector or struct whose parts are multiples of 32 bits), low bits first,
// as SimABI.h passes warp-level matrix operands.
std::vector<llvm::Value*> toWords(llvm::IRBuilder<>& b, llvm::Value* v);
// Rebuilds a value of `type` from words[next...]; advances `next` past the words it used.
llvm::Value* fromWords(llvm::IRBuilder<>& b, llvm::Type* type, llvm::ArrayRef<llvm::Value*> words, size_t& next);
// Stores `words` into an [N x i32] scratch slot of the current function (slot `index`), returning it.
llvm::Value* wordArray(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::ArrayRef<llvm::Value*> words, unsigned index);
// Loads `count` words from `array`.
std::vector<llvm::Value*> loadWords(llvm::IRBuilder<>& b, llvm::Value* array, unsigned count);

// ---- the steps, in the order HostModule runs them (one file each)

// NvptxPredicatedAccesses.cpp (first): the predicated global stores and loads of backends/nvptx/InlineAsmTable.h
// as a branch around an ordinary store or load (the load's fallback elsewhere), at the asm's source line.
void expandPredicatedAccesses(RewriteContext& rc);
// HostAddressSpaces.cpp: the shared-memory symbol becomes __tsim_shared_base() in every function; shared
// pointer <-> integer casts get offset semantics; private (addrspace 5) allocas become host allocas.
void rewriteAddressSpaces(RewriteContext& rc, const char* sharedSymbol);
// HostMemoryAccesses.cpp: loads, stores, atomics (rewriteMemoryAccess) and memcpy/memmove/memset
// (rewriteMemoryIntrinsic, false for any other call) on anything but the stack and constants become runtime
// calls with a site.
void rewriteMemoryAccess(RewriteContext& rc, llvm::Instruction& inst);
bool rewriteMemoryIntrinsic(RewriteContext& rc, llvm::CallInst& call);
// NvptxOperations.cpp, AmdgpuOperations.cpp, HostMath.cpp: the target's operations and libraries, and
// approximate GPU math as host math. Each returns the value replacing `call` (any value when it is void),
// emitted at `b`, or null, having emitted nothing, for a callee it does not know.
llvm::Value* nvptxOperation(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::CallInst& call);
llvm::Value* amdgpuOperation(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::CallInst& call);
llvm::Value* hostMath(llvm::IRBuilder<>& b, llvm::CallInst& call);
// HostMath.cpp: bf16 arithmetic in f32 followed by a conversion to bf16 (first), and conversions to bf16 as inline
// integer arithmetic (the host may lack __truncsfbf2).
void expandBFloat16Arithmetic(llvm::Module& m);
void expandBFloat16Truncations(llvm::Module& m);
// NvptxWgmma.cpp: the wgmma inline asm (backends/nvptx/WgmmaAsm.h) `call` is, if it is one; its runtime calls;
// and, first of all, a __tsim_wgmma_register_read before every instruction reading what a wgmma.mma_async wrote
// (through extractvalue, insertvalue, phi, select, bitcast, freeze) other than wgmma.mma_async and wait_group.
std::optional<backends::nvptx::WgmmaAsm> wgmmaAsmOf(const llvm::CallInst& call);
llvm::Value* nvptxWgmma(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::CallInst& call,
                        const backends::nvptx::WgmmaAsm& wgmma);
void guardWgmmaRegisterReads(RewriteContext& rc);
// Before it: each wgmma group (a dot's whole issue in one asm, WgmmaAsm.h) as the single instructions of the table
// it stands for, which the emulator runs and checks one by one.
void expandWgmmaGroups(RewriteContext& rc);
// NvptxMbarriers.cpp: mbarrier intrinsics, and the mbarrier and TMA entries of backends/nvptx/InlineAsmTable.h
// (null for any other call or entry).
llvm::Value* nvptxMbarrierOperation(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::CallInst& call);
llvm::Value* nvptxMbarrierInlineAsm(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::CallInst& call,
                                    std::string_view operation);
// NvptxOperations.cpp: the operation of an entry of backends/nvptx/InlineAsmTable.h (null when it has none).
llvm::Value* nvptxInlineAsm(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::CallInst& call,
                            std::string_view operation);

}  // namespace tessera::sim
