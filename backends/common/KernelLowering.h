// The op-by-op lowering of one laid-out tile-IR function to an LLVM kernel (backend-internal).
//
// Representation: every tile value becomes, in each thread, the list of its registers (ThreadMap::numRegs of
// its type) as LLVM scalars; a scalar IR value is one register, identical in every thread. The coordinates of
// a register are its constant register part XOR the thread part, computed once per layout from the lane and
// warp ids. The lowering is split by op family over several files; this class holds the shared state.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "backends/common/LowerToLLVM.h"
#include "backends/common/ThreadMap.h"
#include "transforms/AxisInfo.h"

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

  // ---- shared state and helpers (used by the per-family files)
  llvm::LLVMContext& ctx;
  LoweringHooks& hooks;
  LoweringOptions opts;
  const ir::Function& func;
  std::unique_ptr<llvm::Module> module;
  llvm::Function* kernel = nullptr;
  IRBuilder b;
  int warpSize;
  transforms::AxisInfoAnalysis axis;  // contiguity/alignment facts for vectorizing memory accesses

  // Types: the register type of an element, and its in-memory type (i1 is a byte, pointers in shared memory are
  // i64, fp8 is i8).
  llvm::Type* regType(ir::Type element);
  llvm::Type* memType(ir::Type element);
  int64_t memBytes(ir::Type element);

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

  // Shared memory: a pointer `byteOffset` bytes into the op's scratch; throws if the op has no `smem_offset` or
  // its `smem_bytes` is smaller than `need`.
  llvm::Value* scratch(const ir::Op& op, int64_t need);
  llvm::Value* smemElementPtr(llvm::Value* base, llvm::Type* elemTy, llvm::Value* index);
  // Converts between register and memory representations (i1 <-> i8, pointer <-> i64).
  llvm::Value* toMemory(llvm::Value* v, ir::Type element);
  llvm::Value* fromMemory(llvm::Value* v, ir::Type element);

  // Moves elements between layouts: every destination register is the buffer element its coordinates map to,
  // written by the sources. Registers are remapped directly when each thread already holds what it needs;
  // otherwise the data goes through the op's shared-memory scratch (write, barrier, read), laid out as the
  // row-padded exchange buffer of transforms/SharedMemory.h.
  std::vector<Regs> exchange(const ir::Op& op, ir::Type element, const std::vector<int64_t>& bufferShape,
                             const std::vector<ExchangeSource>& sources, const std::vector<ExchangeDest>& dests);
  // Whether `exchange` can work without shared memory.
  static bool canRemapInRegisters(const std::vector<ExchangeSource>& sources, const std::vector<ExchangeDest>& dests);

  // Runs `then` only where `pred` holds; `then` returns the value (or null) produced on that path, and the result
  // is that value where `pred` holds and `otherwise` elsewhere.
  llvm::Value* predicated(llvm::Value* pred, const std::function<llvm::Value*()>& then, llvm::Value* otherwise);

  [[noreturn]] void fail(const ir::Op& op, const std::string& why);
  int64_t constIntOf(const ir::Value* v, bool* known);  // value of a `constant` scalar, if it is one

  // ---- control
  void lowerBlock(const ir::Block& block);
  void lowerOp(const ir::Op& op);
  // Lowers a region's ops except its final `yield`, whose operands' registers it returns.
  std::vector<Regs> lowerRegion(const ir::Block& region);
  // Lowers a reduce/scan combine region on scalars; returns the yielded values.
  Regs lowerCombine(const ir::Block& region, const Regs& args);

  // ---- per-family entry points (one file each)
  void lowerConstantLike(const ir::Op& op);      // LowerShape.cpp: constant, ids, arange, splat
  void lowerShapeOp(const ir::Op& op);           // LowerShape.cpp: broadcast, expand_dims, reshape, trans, ...
  void lowerElementwise(const ir::Op& op);       // LowerArith.cpp
  llvm::Value* castScalar(llvm::Value* v, ir::Type from, ir::Type to);  // LowerArith.cpp
  void lowerMemoryOp(const ir::Op& op);          // LowerMemory.cpp
  void lowerReduce(const ir::Op& op);            // LowerReduce.cpp
  void lowerScan(const ir::Op& op);              // LowerReduce.cpp
  void lowerDot(const ir::Op& op);               // LowerDot.cpp
  void lowerControlFlow(const ir::Op& op);       // LowerControl.cpp: for, if, while
  void lowerDebugOp(const ir::Op& op);           // LowerControl.cpp: debug_print, device_assert

 private:
  std::unordered_map<const ir::Value*, Regs> values_;
  std::unordered_map<ir::Type, ThreadMap, ir::TypeHash> maps_;
  std::map<std::vector<Coords>, std::vector<llvm::Value*>> threadParts_;  // keyed by the thread bases
  llvm::BasicBlock* prologue_ = nullptr;
  llvm::Value* laneId_ = nullptr;
  llvm::Value* warpId_ = nullptr;
  llvm::Value* smemBase_ = nullptr;
  std::unique_ptr<DebugLocations> debugLocations_;  // the kernel author's locations on every instruction
  template <class F>
  auto inPrologue(F fn);
  void declareKernel();
};

// Alignment-aware rounding used for scratch layouts.
inline int64_t alignTo(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

}  // namespace tessera::backends
