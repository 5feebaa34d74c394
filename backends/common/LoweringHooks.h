// Everything the shared tile-IR -> LLVM lowering needs from a GPU target: thread and program ids, warp
// exchanges, barriers, shared memory, math, printing, assertions, atomic scopes and tensor-core dots.
// backends/nvptx (NVPTXHooks) and backends/amdgpu (AMDGPUHooks) implement it. Backend-internal (names LLVM types).
#pragma once

#include <string>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "backends/common/IdentityFolder.h"
#include "ir/Error.h"
#include "ir/IR.h"
#include "ir/OpInfo.h"

namespace tessera::backends {

using IRBuilder = llvm::IRBuilder<IdentityFolder>;
class KernelLowering;

class LoweringHooks {
 public:
  virtual ~LoweringHooks() = default;

  virtual int warpSize() const = 0;

  // Declares the kernel's ABI: calling convention, launch bounds (numWarps * warpSize threads), and any
  // module-level annotations the driver needs.
  virtual void configureKernel(llvm::Function& kernel, int numWarps) = 0;
  // A warp-specialized kernel (after configureKernel): its warps trade registers (setMaxRegisters), from the
  // registers its program is given at launch, which the target fixes here (one program per multiprocessor).
  virtual void configureWarpSpecialized(llvm::Function& kernel) { (void)kernel; }

  // Tensor descriptor parameters (their bytes: DescriptorParameter.h). Whether they carry a TMA tensor map after
  // their fields; the LLVM type of the parameter, a pointer to its bytes; and the attributes of argument `argNo`
  // of `kernel` that make it `bytes` bytes aligned to `align`, passed by value (byval by default).
  virtual bool descriptorsCarryTensorMaps() const { return false; }
  virtual llvm::Type* descriptorParameterType(llvm::LLVMContext& ctx) { return llvm::PointerType::get(ctx, 0); }
  virtual void declareDescriptorParameter(llvm::Function& kernel, unsigned argNo, int64_t bytes, int64_t align) {
    llvm::Argument* a = kernel.getArg(argNo);
    a->addAttr(llvm::Attribute::getWithByValType(kernel.getContext(),
                                                 llvm::ArrayType::get(llvm::Type::getInt8Ty(kernel.getContext()), bytes)));
    a->addAttr(llvm::Attribute::getWithAlignment(kernel.getContext(), llvm::Align(align)));
  }

  // Ids (i32). threadId is the flat thread index within the program (block).
  virtual llvm::Value* threadId(IRBuilder& b) = 0;
  virtual llvm::Value* programId(IRBuilder& b, int axis) = 0;
  virtual llvm::Value* numPrograms(IRBuilder& b, int axis) = 0;

  // Exchanges a 32-bit integer with the lane `lane ^ laneMask` of the same warp (all lanes participate).
  virtual llvm::Value* shuffleXorI32(IRBuilder& b, llvm::Value* v, int laneMask) = 0;
  // Exchanges a 32-bit integer with lane `lane` (i32, per thread; in [0, warpSize)) of the same warp (all lanes
  // participate).
  virtual llvm::Value* shuffleIdxI32(IRBuilder& b, llvm::Value* v, llvm::Value* lane) = 0;
  // All threads of the program wait; shared-memory writes before are visible to reads after.
  virtual void barrier(IRBuilder& b) = 0;
  // The base of the kernel's dynamic shared memory (an i8 pointer in the shared address space), sized by the
  // function attribute `smem_bytes` and aligned to transforms::kSharedAlignment, the alignment every scratch
  // offset assumes (transforms/analysis/SharedScratch.h).
  virtual llvm::Value* sharedMemoryBase(IRBuilder& b) = 0;

  // Math on a float scalar `x` (f32 or f64; the common code widens f16/bf16 to f32 first). `fast` allows the
  // approximate hardware instructions. Returns null when the target has no lowering for this op and type.
  virtual llvm::Value* unaryMath(IRBuilder& b, ir::OpKind op, llvm::Value* x, bool fast) = 0;
  // C fmod on f32/f64 (exact); null if unavailable.
  virtual llvm::Value* fmod(IRBuilder& b, llvm::Value* x, llvm::Value* y) = 0;

  // printf-like output from the device: `format` uses C conversions (%d %lld %u %f %p ...); doubles for floats.
  virtual void print(IRBuilder& b, const std::string& format, const std::vector<llvm::Value*>& args) = 0;
  // Aborts the program with a message (called on the failing path only).
  virtual void assertFail(IRBuilder& b, const std::string& message, const std::string& file, unsigned line,
                          const std::string& function) = 0;

  // Whether the author's source locations travel as line directives only, without DWARF sections (see
  // backends/common/DebugLocations.h).
  virtual bool lineDirectivesOnly() const { return false; }

  // LLVM sync scope for an atomic of scope "cta", "gpu" or "sys".
  virtual llvm::SyncScope::ID atomicScope(llvm::LLVMContext& ctx, const std::string& scope) = 0;

  // Asynchronous copies from global to shared memory (async_copy and its groups, backends/common/LowerSharedBuffers.cpp).
  // Starts a copy of `bytes` from `globalSrc` to `sharedDst` that writes zeros instead where `pred` (i1) is false;
  // returns false, having emitted nothing, when the target has no asynchronous copy of that size (hasAsyncCopy;
  // the common code then loads and stores, which the commit and wait below need not order).
  virtual bool asyncCopy(IRBuilder& b, llvm::Value* sharedDst, llvm::Value* globalSrc, int64_t bytes, llvm::Value* pred) {
    (void)b, (void)sharedDst, (void)globalSrc, (void)bytes, (void)pred;
    return false;
  }
  virtual bool hasAsyncCopy(int64_t bytes) const {
    (void)bytes;
    return false;
  }
  // A copy asyncCopy cannot start loads into registers and stores them, in rounds of at most this many 32-bit
  // registers of loaded data (a 1- or 2-byte load takes a whole one); 0: in one round. Without rounds the
  // target's scheduler may issue every load before the first store, for latency: at 2-byte alignment a 128x64 f16
  // stage is 64 registers per thread of a warpgroup, beside a 128-register accumulator.
  virtual int64_t copyRoundRegisters() const { return 0; }
  // Ends such a round: the target issues none of this thread's memory accesses after it before those before it.
  // Every thread of the warp executes it.
  virtual void endCopyRound(IRBuilder& b) { (void)b; }
  // A store of `elements` (in memory types, all of one type; 2, 4, 8 or 16 bytes in all, naturally aligned) to
  // the global pointer `ptr`, consecutively, that happens only where `pred` (i1) is true, as one predicated
  // instruction; returns false, having emitted nothing, when the target has none for it or prefers the branch for
  // this predicate (the common code then branches around a plain store).
  virtual bool predicatedGlobalStore(IRBuilder& b, const std::vector<llvm::Value*>& elements, llvm::Value* ptr,
                                     llvm::Value* pred) {
    (void)b, (void)elements, (void)ptr, (void)pred;
    return false;
  }
  // A load of `type` (whole bytes: 2, 4, 8 or 16 in all, naturally aligned) from the global pointer `ptr` that
  // happens only where `pred` (i1) is true and yields `fallback` (of `type`) elsewhere, as one predicated
  // instruction; returns null, having emitted nothing, when the target has none for it or prefers the branch for
  // this predicate (the common code then branches around a plain load).
  virtual llvm::Value* predicatedGlobalLoad(IRBuilder& b, llvm::Type* type, llvm::Value* ptr, llvm::Value* pred,
                                            llvm::Value* fallback) {
    (void)b, (void)type, (void)ptr, (void)pred, (void)fallback;
    return nullptr;
  }
  // Warp-wide transfers of 8 x 8 matrices of 16-bit elements between registers and shared memory (ldmatrix and
  // stmatrix .m8n8 .b16), which the shared-memory exchange of a convert_layout uses where a side's layout is made of
  // them. With 1, 2 or 4 matrices, word m of lane l holds row l / 4, columns 2 (l % 4) and 2 (l % 4) + 1 of matrix
  // m (the lower column in the low half), and lane l gives `rowAddress`, the shared address of row l % 8 of matrix
  // l / 8 (16 contiguous bytes, 16-byte aligned). Every lane of the warp must execute them together.
  virtual bool hasMatrixLoads() const { return false; }
  virtual bool hasMatrixStores() const { return false; }
  virtual std::vector<llvm::Value*> loadMatrices(IRBuilder& b, llvm::Value* rowAddress, int64_t matrices) {
    (void)b, (void)rowAddress, (void)matrices;
    return {};
  }
  virtual void storeMatrices(IRBuilder& b, llvm::Value* rowAddress, const std::vector<llvm::Value*>& words) {
    (void)b, (void)rowAddress, (void)words;
  }
  // Closes the group of copies this thread started since the last commit.
  virtual void asyncCommitGroup(IRBuilder& b) { (void)b; }
  // Waits until at most `pending` of this thread's committed groups are still in flight (other threads' copies are
  // visible only after a barrier too).
  virtual void asyncWait(IRBuilder& b, int64_t pending) { (void)b, (void)pending; }

  // TMA copies and mbarriers (backends/common/LowerTmaCopies.cpp), for targets whose layout policy asks for them
  // (transforms::LayoutPolicy::dotOperandTmaSwizzle); the defaults fail. `barrier` is an mbarrier's address (a
  // pointer in the shared address space), `count` its arrivals per phase.
  virtual void mbarrierInit(IRBuilder& b, llvm::Value* barrier, int64_t count) {
    (void)b, (void)barrier, (void)count;
    throw Error("this target has no mbarriers (TMA copies)");
  }
  // After the barriers are initialized (by one thread) and before any thread uses them: makes the initialization
  // visible to the copies (the caller then synchronizes every thread with barrier()).
  virtual void fenceMbarrierInit(IRBuilder& b) { (void)b; }
  // One arrival on `barrier` that also expects `bytes` transaction bytes in its current phase.
  virtual void mbarrierArriveExpectTx(IRBuilder& b, llvm::Value* barrier, int64_t bytes) {
    (void)b, (void)barrier, (void)bytes;
    throw Error("this target has no mbarriers (TMA copies)");
  }
  // Copies the box at `coordinates` (i32, the tensor map's dimension 0 first) of the tensor map at generic address
  // `tensorMap` (i64) to shared memory at `sharedDst`, completing its bytes on `barrier`.
  virtual void tensorCopyToShared(IRBuilder& b, llvm::Value* sharedDst, llvm::Value* tensorMap,
                                  const std::vector<llvm::Value*>& coordinates, llvm::Value* barrier) {
    (void)b, (void)sharedDst, (void)tensorMap, (void)coordinates, (void)barrier;
    throw Error("this target has no TMA copies");
  }
  // Orders this thread's earlier shared-memory writes before later async-proxy reads of them (TMA stores).
  virtual void fenceSharedForAsyncProxy(IRBuilder& b) {
    (void)b;
    throw Error("this target has no TMA stores");
  }
  // Stores the box at `coordinates` (as tensorCopyToShared's) of the tensor map at generic address `tensorMap` from
  // shared memory at `sharedSrc` to global memory, elements outside the tensor not written, in the thread's
  // current bulk group.
  virtual void tensorStoreFromShared(IRBuilder& b, llvm::Value* sharedSrc, llvm::Value* tensorMap,
                                     const std::vector<llvm::Value*>& coordinates) {
    (void)b, (void)sharedSrc, (void)tensorMap, (void)coordinates;
    throw Error("this target has no TMA stores");
  }
  // Commits the thread's bulk group and waits until every store of it has read its shared memory.
  virtual void waitBulkStoresRead(IRBuilder& b) {
    (void)b;
    throw Error("this target has no TMA stores");
  }
  // Waits (every calling thread) until the phase of parity `parity` (i32) of `barrier` has completed.
  virtual void mbarrierWaitParity(IRBuilder& b, llvm::Value* barrier, llvm::Value* parity) {
    (void)b, (void)barrier, (void)parity;
    throw Error("this target has no mbarriers (TMA copies)");
  }
  // One arrival of the calling thread on `barrier` (warp specialization: consumers hand a stage back).
  virtual void mbarrierArrive(IRBuilder& b, llvm::Value* barrier) {
    (void)b, (void)barrier;
    throw Error("this target has no mbarriers (warp specialization)");
  }

  // Warp specialization (backends/common/LowerWarpSpecialize.cpp). `threads` threads (whole warps) wait at
  // hardware barrier `id` (an i32, 1 or more: barrier 0 is barrier()); shared-memory writes of each before are
  // visible to the reads of each after.
  virtual void namedBarrier(IRBuilder& b, llvm::Value* id, int64_t threads) {
    (void)b, (void)id, (void)threads;
    throw Error("this target has no named barriers (warp specialization)");
  }
  // The calling threads arrive at barrier `id` without waiting: they count towards the `threads` that the threads
  // waiting there (namedBarrier) need.
  virtual void namedBarrierArrive(IRBuilder& b, llvm::Value* id, int64_t threads) {
    (void)b, (void)id, (void)threads;
    throw Error("this target has no named barriers (warp specialization)");
  }
  // The calling warpgroup's register budget becomes `registers` per thread (increase: raises it, else lowers it).
  virtual void setMaxRegisters(IRBuilder& b, bool increase, int64_t registers) {
    (void)b, (void)increase, (void)registers;
    throw Error("this target cannot reallocate registers between warps (warp specialization needs sm_90a)");
  }

  // dot_wait: `registers` (the waited tiles' registers, in order) once at most `pending` groups of this thread's
  // asynchronous dots are in flight. A target whose dots are all synchronous returns them as they are.
  virtual std::vector<llvm::Value*> dotWait(IRBuilder& b, const std::vector<llvm::Value*>& registers, int64_t pending) {
    (void)b, (void)pending;
    return registers;
  }

  // A target-specific lowering of `dot` (tensor cores), with the same shared-memory staging contract as the
  // portable one. Returns false, having emitted nothing, when the target has none for this dot's dtypes, shapes
  // or layouts; the common code then uses its FMA lowering. Having lowered it, it says on which instruction
  // (KernelLowering::noteDot).
  virtual bool lowerDot(KernelLowering& lowering, const ir::Op& dot) {
    (void)lowering;
    (void)dot;
    return false;
  }
  // Why lowerDot left `dot` to FMAs, in words for the dot report (KernelLowering::noteDot); empty where the target
  // has no tensor cores.
  virtual std::string whyNoTensorCores(const ir::Op& dot) const {
    (void)dot;
    return {};
  }
};

}  // namespace tessera::backends
