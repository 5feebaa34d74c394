// The op-by-op lowering of one laid-out tile-IR function to an LLVM kernel (backend-internal).
//
// Representation: every tile value becomes, in each thread, the list of its registers (ThreadMap::numRegs of
// its type) as LLVM scalars; a scalar IR value is one register, identical in every thread. The coordinates of
// a register are its constant register part XOR the thread part, computed once per layout from the lane and
// warp ids. The lowering is split by op family over several files (member functions of this class, which keeps
// the shared state private); the targets' hooks use the public interface.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "backends/common/LowerToLLVM.h"
#include "backends/common/ThreadMap.h"
#include "transforms/analysis/AxisInfo.h"
#include "transforms/analysis/SharedScratch.h"

namespace tessera::backends {

class DebugLocations;
using Regs = std::vector<llvm::Value*>;
using CoordFn = std::function<Coords(const Coords&)>;  // an affine map between coordinate spaces

// One side of a data exchange (see KernelLowering::exchange).
struct ExchangeSource {
  const ThreadMap* map;
  const Regs* regs;
  CoordFn toBuffer;  // source coordinates -> buffer coordinates
};
struct ExchangeDest {
  const ThreadMap* map;
  CoordFn fromBuffer;  // destination coordinates -> buffer coordinates it reads
};

class KernelLowering {
 public:
  KernelLowering(const ir::Function& f, llvm::LLVMContext& ctx, LoweringHooks& hooks, const LoweringOptions& opts);
  std::unique_ptr<llvm::Module> run();

  // ---- the interface of the per-family lowerings and of the targets' hooks (e.g. tensor-core dot)

  IRBuilder& builder() { return b_; }
  llvm::LLVMContext& context() { return ctx_; }
  LoweringHooks& hooks() { return hooks_; }

  // Types: the register type of an element, and its in-memory type (i1 is a byte, pointers in shared memory are
  // i64, fp8 is i8).
  llvm::Type* regType(ir::Type element);
  llvm::Type* memType(ir::Type element);
  // Converts between register and memory representations (i1 <-> i8, pointer <-> i64).
  llvm::Value* toMemory(llvm::Value* v, ir::Type element);
  llvm::Value* fromMemory(llvm::Value* v, ir::Type element);

  // The registers of a lowered value.
  Regs& get(const ir::Value* v);
  void set(const ir::Value* v, Regs regs);

  const ThreadMap& mapOf(ir::Type t, const std::string& what);
  // The thread-dependent part of every coordinate of `map`, per dimension (i32), computed in the prologue.
  const std::vector<llvm::Value*>& threadPart(const ThreadMap& map);
  llvm::Value* coord(const ThreadMap& map, int64_t reg, int dim);  // i32
  // Whether this thread owns (may write) register `reg` of `map` (i1).
  llvm::Value* ownsRegister(const ThreadMap& map, int64_t reg);
  llvm::Value* laneId();
  llvm::Value* warpId();
  // Exchanges a scalar (<= 64 bits, or a pointer) with lane `lane ^ laneMask` of the same warp.
  llvm::Value* shuffleXor(llvm::Value* v, int laneMask);

  // Shared memory: a pointer to the op's scratch (transforms/analysis/SharedScratch.h); throws if the op has no
  // `smem_offset` or its `smem_bytes` is smaller than `need`.
  llvm::Value* scratch(const ir::Op& op, int64_t need);
  llvm::Value* smemElementPtr(llvm::Value* base, llvm::Type* elemTy, llvm::Value* index);
  // Where a dot stages A and B: the byte ranges of transforms::dotStaging in the dot's scratch. The FMA lowering
  // writes them row-major; tensor-core lowerings permute elements within each range. Null for an operand that is
  // not staged (transforms::dotOperandBuffer: read from its local_load's buffer instead).
  struct DotStagingBuffers {
    llvm::Value* a;
    llvm::Value* b;
  };
  DotStagingBuffers dotStagingBuffers(const ir::Op& dot);
  // A shared buffer's stage (LowerSharedBuffers.cpp): the address of stage `stage` (an i32 IR value) of `buffer`
  // (a local_alloc result), and the element index of `coords` (i32 values) within a stage laid out by `layout`
  // (a #shared or #linear_shared layout; throws tessera::Error naming `op` for others).
  llvm::Value* sharedStage(const ir::Value* buffer, const ir::Value* stage);
  llvm::Value* sharedElementIndex(const ir::Op& op, const ir::Layout& layout, const std::vector<int64_t>& shape,
                                  const std::vector<llvm::Value*>& coords);
  // The same for each register of `map`: the function returns register `reg`'s index. Over a tile shape both
  // layouts are linear, so an index is the thread's part (built here, once) XOR the register's, a constant. The
  // constant's bits that no thread's part can have are added rather than XOR-ed: they fold into the addresses'
  // immediates, so a thread's copies into a buffer share one base instead of holding an address per register.
  std::function<llvm::Value*(int64_t reg)> sharedElementIndices(const ir::Op& op, const ir::Layout& layout,
                                                                const std::vector<int64_t>& shape,
                                                                const ThreadMap& map);
  // The same split for coordinates `thread` XOR c: `thread` a per-thread part (i32 per dimension) whose bits lie
  // within those of `threadBases`, c a constant the function takes. Empty where the layout is not linear over
  // `shape` (then index each coordinate with sharedElementIndex).
  std::function<llvm::Value*(const Coords& c)> sharedIndexer(const ir::Layout& layout, const std::vector<int64_t>& shape,
                                                             const std::vector<llvm::Value*>& thread,
                                                             const std::vector<Coords>& threadBases);
  // Writes `regs` (a tile laid out by `map`) into the shared stage at `stage` laid out by `layout` over `shape`:
  // each element by its owner, `vec` consecutive registers at a time where they are consecutive in the stage too
  // (at most 16 bytes).
  void storeToShared(const ir::Op& op, const Regs& regs, const ThreadMap& map, ir::Type element,
                     const ir::Layout& layout, const std::vector<int64_t>& shape, llvm::Value* stage);

  // Runs `then` only where `pred` holds; `then` returns the value (or null) produced on that path, and the result
  // is that value where `pred` holds and `otherwise` elsewhere.
  llvm::Value* predicated(llvm::Value* pred, const std::function<llvm::Value*()>& then, llvm::Value* otherwise);

  // Lowers a reduce/scan combine region on scalars; returns the yielded values.
  Regs lowerCombine(const ir::Block& region, const Regs& args);

  [[noreturn]] void fail(const ir::Op& op, const std::string& why);

  // Records how `dot` was lowered (kDotsMetadata): the instruction it runs on ("wgmma m64n128k16 f16", "fma", ...)
  // and, where a faster one was passed over, why ("not wgmma: ..."; empty otherwise).
  void noteDot(const ir::Op& dot, const std::string& instruction, const std::string& note = "");

  // A barrier of every thread that runs the code being lowered: barrier 0 of the program, or in a warp_specialize
  // consumer region a named barrier of the consumers alone (the producers never arrive there).
  void barrier();

 private:
  // ---- control
  void lowerBlock(const ir::Block& block);
  void lowerOp(const ir::Op& op);
  // Lowers a region's ops except its final `yield`, whose operands' registers it returns.
  std::vector<Regs> lowerRegion(const ir::Block& region);

  // ---- per-family entry points (one file each)
  void lowerConstantLike(const ir::Op& op);      // LowerShape.cpp: constant, ids, arange, splat
  void lowerShapeOp(const ir::Op& op);           // LowerShape.cpp: broadcast, expand_dims, reshape, trans, ...
  void lowerConvertLayout(const ir::Op& op);     // LowerConvertLayout.cpp
  void lowerElementwise(const ir::Op& op);       // LowerArith.cpp
  llvm::Value* castScalar(llvm::Value* v, ir::Type from, ir::Type to);  // LowerArith.cpp
  void lowerLoad(const ir::Op& op);              // LowerMemory.cpp
  void lowerStore(const ir::Op& op);             // LowerMemory.cpp
  void lowerAtomic(const ir::Op& op);            // LowerAtomic.cpp: atomic_rmw, atomic_cas
  void lowerDescriptorOp(const ir::Op& op);      // LowerDescriptors.cpp: desc_field (desc_load is expanded before)
  void lowerReduce(const ir::Op& op);            // LowerReduce.cpp
  void lowerScan(const ir::Op& op);              // LowerScan.cpp
  void lowerDot(const ir::Op& op);               // LowerDot.cpp
  void lowerSharedBufferOp(const ir::Op& op);    // LowerSharedBuffers.cpp: local_alloc, async_*, local_load
  void lowerTmaOp(const ir::Op& op);             // LowerTmaCopies.cpp: mbarrier_alloc, async_tma_copy, mbarrier_wait
  void lowerTmaStore(const ir::Op& op);          // LowerTmaCopies.cpp: desc_store through the tensor map
  void lowerControlFlow(const ir::Op& op);       // LowerControl.cpp: for, if, while
  void lowerWarpSpecialize(const ir::Op& op);    // LowerWarpSpecialize.cpp
  void lowerTurn(const ir::Op& op);              // LowerWarpSpecialize.cpp
  llvm::Value* consumerGroup(const ir::Op& op);  // LowerWarpSpecialize.cpp: the consumer group of this thread (i32)
  int64_t groupThreads() const;                   // LowerWarpSpecialize.cpp: threads of one consumer group
  // Where one thread issues a TMA copy or initializes mbarriers: thread 0, or the producer region's one thread.
  llvm::Value* issuingThread();
  void lowerDebugOp(const ir::Op& op);           // LowerControl.cpp: debug_print, device_assert
  std::vector<llvm::Value*> printedProgramIds(const ir::Op& op);  // debug_print's program ids

  // What a memory op accesses: its pointer operand (registers and layout) and the element in memory.
  struct MemoryAccess {
    const ir::Value* ptr;
    const ThreadMap& map;
    Regs ptrs;  // anchoredPointers
    ir::Type elem;
    int64_t bytes;
    llvm::Type* memType;
  };
  MemoryAccess memoryAccess(const ir::Op& op);
  Regs anchoredPointers(const ir::Value* ptr, const ThreadMap& map);
  llvm::Value* maskedGlobalLoad(llvm::Type* type, llvm::Value* ptr, llvm::Value* pred, llvm::Value* fallback,
                                int64_t alignBytes, bool isVolatile = false);
  // The widest vector (in elements) for accessing memory through `ptr` under `mask` (null: none), and the
  // dimension its elements run along.
  int64_t vectorWidth(const ir::Value* ptr, const ThreadMap& map, const ir::Value* mask);
  std::pair<int, int64_t> vectorRun(const ir::Value* ptr, const ThreadMap& map, const ir::Value* mask);
  // How many consecutive registers (along vectorRun's dimension) address consecutive elements.
  int64_t contiguousRun(const ir::Value* ptr, const ThreadMap& map);
  // Lanes of a vector of `length` (a scalar when 1 lane): a part of `count` lanes from `first`, and `whole` with that
  // part replaced.
  llvm::Value* extractLanes(llvm::Value* whole, int64_t first, int64_t count, int64_t length);
  llvm::Value* insertLanes(llvm::Value* whole, llvm::Value* part, int64_t first, int64_t count, int64_t length);

  // Moves elements between layouts: every destination register is the buffer element its coordinates map to,
  // written by the sources. Registers are remapped directly when each thread already holds what it needs;
  // otherwise the data goes through the op's shared-memory scratch (write, barrier, read), laid out as the
  // row-padded exchange buffer of transforms/analysis/SharedScratch.h.
  std::vector<Regs> exchange(const ir::Op& op, ir::Type element, const std::vector<int64_t>& bufferShape,
                             const std::vector<ExchangeSource>& sources, const std::vector<ExchangeDest>& dests);

  int64_t constIntOf(const ir::Value* v, bool* known);  // value of a `constant` scalar, if it is one
  template <class F>
  auto inPrologue(F fn);
  void declareKernel();
  void declareDescriptor(unsigned argNo);

  llvm::LLVMContext& ctx_;
  LoweringHooks& hooks_;
  LoweringOptions opts_;
  const ir::Function& func_;
  std::unique_ptr<llvm::Module> module_;
  llvm::Function* kernel_ = nullptr;
  IRBuilder b_;
  int warpSize_;
  // Warp specialization (LowerWarpSpecialize.cpp): the producer warps beyond num_warps (0 without), and the region
  // being lowered.
  int64_t producerWarps_ = 0;
  int64_t consumerGroups_ = 1;  // > 1: ping-pong consumers, groups of num_warps warps each on its own tiles
  enum class WarpRole { All, Producer, Consumers } role_ = WarpRole::All;
  transforms::AxisInfoAnalysis axis_;  // contiguity/alignment facts for vectorizing memory accesses
  // Registers loaded by async_copy's loads and stores since the last round of them ended
  // (LoweringHooks::copyRoundRegisters), in the order ops are lowered.
  int64_t copyRoundLoaded_ = 0;

  std::unordered_map<const ir::Value*, Regs> values_;
  std::unordered_map<ir::Type, ThreadMap, ir::TypeHash> maps_;
  std::map<std::vector<Coords>, std::vector<llvm::Value*>> threadParts_;  // keyed by the thread bases
  llvm::BasicBlock* prologue_ = nullptr;
  llvm::Value* laneId_ = nullptr;
  llvm::Value* warpId_ = nullptr;
  llvm::Value* smemBase_ = nullptr;
  std::unique_ptr<DebugLocations> debugLocations_;  // the kernel author's locations on every instruction
};

}  // namespace tessera::backends
