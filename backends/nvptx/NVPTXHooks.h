// LoweringHooks for NVIDIA GPUs: PTX special registers, shfl.sync, bar.sync, dynamic shared memory as an extern
// addrspace(3) array, fast approximate math (ex2/lg2/rsqrt.approx) and libdevice (__nv_*) for the rest,
// vprintf and __assertfail.
#pragma once

#include "backends/common/LoweringHooks.h"

namespace tessera::backends::nvptx {

// The extern shared-memory array every kernel indexes (sized at launch by the dynamic shared-memory size).
inline constexpr const char* kSharedMemorySymbol = "global_smem";

class NVPTXHooks : public LoweringHooks {
 public:
  // `tensorMaps`: the arch has TMA and stmatrix (sm_90 and up), so descriptor parameters carry tensor maps.
  // `asyncDots`: the arch has wgmma (sm_90a), whose dots may be left in flight (a dot's `pending`).
  // `programsBySharedMemory`: how many programs of this kernel the arch's shared memory lets a multiprocessor
  // hold (programsPerMultiprocessor; 0 where unknown).
  explicit NVPTXHooks(bool tensorMaps = false, bool asyncDots = false, int64_t programsBySharedMemory = 0)
      : tensorMaps_(tensorMaps), asyncDots_(asyncDots), programsBySharedMemory_(programsBySharedMemory) {}
  int warpSize() const override { return 32; }
  // .maxntid, and .minnctapersm where shared memory bounds the programs per multiprocessor at a count whose
  // register share is the most a thread may have anyway (255): left alone, ptxas would spill to reach an
  // occupancy that shared memory forbids (tensor-core kernels: 64x64 attention on sm_80 spilled 20 bytes at 168
  // registers for a third program that 57 KB of shared memory each cannot have).
  void configureKernel(llvm::Function& kernel, int numWarps) override;
  // .minnctapersm 1 beside .maxntid: ptxas then knows the register count at entry (65536 / threads, in steps of
  // 8), which setmaxnreg needs (without it ptxas ignores setmaxnreg, warning C7508).
  void configureWarpSpecialized(llvm::Function& kernel) override;
  bool descriptorsCarryTensorMaps() const override { return tensorMaps_; }
  // A byval parameter marked grid_constant, so that its address is the parameter's own (cvta.param), which
  // cp.async.bulk.tensor may read the tensor map at, rather than a local copy's.
  void declareDescriptorParameter(llvm::Function& kernel, unsigned argNo, int64_t bytes, int64_t align) override;
  llvm::Value* threadId(IRBuilder& b) override;
  llvm::Value* programId(IRBuilder& b, int axis) override;
  llvm::Value* numPrograms(IRBuilder& b, int axis) override;
  llvm::Value* shuffleXorI32(IRBuilder& b, llvm::Value* v, int laneMask) override;
  llvm::Value* shuffleIdxI32(IRBuilder& b, llvm::Value* v, llvm::Value* lane) override;
  void barrier(IRBuilder& b) override;
  llvm::Value* sharedMemoryBase(IRBuilder& b) override;
  llvm::Value* unaryMath(IRBuilder& b, ir::OpKind op, llvm::Value* x, bool fast) override;
  llvm::Value* fmod(IRBuilder& b, llvm::Value* x, llvm::Value* y) override;
  void print(IRBuilder& b, const std::string& format, const std::vector<llvm::Value*>& args) override;
  void assertFail(IRBuilder& b, const std::string& message, const std::string& file, unsigned line,
                  const std::string& function) override;
  llvm::SyncScope::ID atomicScope(llvm::LLVMContext& ctx, const std::string& scope) override;
  // `.loc`/`.file` only: ptxas compiles PTX whose .target says `debug` (DWARF sections) to different code.
  bool lineDirectivesOnly() const override { return true; }
  // cp.async.{ca,cg}.shared.global of 4, 8 or 16 bytes with a source size (0 where masked off), and its groups.
  bool asyncCopy(IRBuilder& b, llvm::Value* sharedDst, llvm::Value* globalSrc, int64_t bytes, llvm::Value* pred) override;
  bool hasAsyncCopy(int64_t bytes) const override { return bytes == 4 || bytes == 8 || bytes == 16; }
  // Copies cp.async cannot make (AsyncCopies.cpp): rounds of at most 64 registers, each ended by bar.warp.sync,
  // which ptxas issues no load across.
  int64_t copyRoundRegisters() const override;
  void endCopyRound(IRBuilder& b) override;
  // @p st.global / @p ld.global {.b16, .b32, .v2.b32, .v4.b32} of the inline-asm table (PredicatedAccesses.cpp).
  bool predicatedGlobalStore(IRBuilder& b, const std::vector<llvm::Value*>& elements, llvm::Value* ptr,
                             llvm::Value* pred) override;
  llvm::Value* predicatedGlobalLoad(IRBuilder& b, llvm::Type* type, llvm::Value* ptr, llvm::Value* pred,
                                    llvm::Value* fallback) override;
  // ldmatrix (every arch Tessera targets) and stmatrix (sm_90 and up, the InlineAsmTable.h entries): MatrixTransfers.cpp.
  bool hasMatrixLoads() const override { return true; }
  bool hasMatrixStores() const override { return tensorMaps_; }
  std::vector<llvm::Value*> loadMatrices(IRBuilder& b, llvm::Value* rowAddress, int64_t matrices) override;
  void storeMatrices(IRBuilder& b, llvm::Value* rowAddress, const std::vector<llvm::Value*>& words) override;
  void asyncCommitGroup(IRBuilder& b) override;
  void asyncWait(IRBuilder& b, int64_t pending) override;
  // TMA copies and mbarriers (TmaCopies.cpp): the InlineAsmTable.h entries and mbarrier.init.
  void mbarrierInit(IRBuilder& b, llvm::Value* barrier, int64_t count) override;
  void fenceMbarrierInit(IRBuilder& b) override;
  void mbarrierArriveExpectTx(IRBuilder& b, llvm::Value* barrier, int64_t bytes) override;
  void tensorCopyToShared(IRBuilder& b, llvm::Value* sharedDst, llvm::Value* tensorMap,
                          const std::vector<llvm::Value*>& coordinates, llvm::Value* barrier) override;
  void mbarrierWaitParity(IRBuilder& b, llvm::Value* barrier, llvm::Value* parity) override;
  // TMA stores (TmaCopies.cpp): fence.proxy.async, cp.async.bulk.tensor from shared memory in bulk groups.
  void fenceSharedForAsyncProxy(IRBuilder& b) override;
  void tensorStoreFromShared(IRBuilder& b, llvm::Value* sharedSrc, llvm::Value* tensorMap,
                             const std::vector<llvm::Value*>& coordinates) override;
  void waitBulkStoresRead(IRBuilder& b) override;
  // Warp specialization (TmaCopies.cpp): mbarrier.arrive, bar.sync id, count, bar.arrive id, count, and
  // setmaxnreg (sm_90a).
  void mbarrierArrive(IRBuilder& b, llvm::Value* barrier) override;
  void namedBarrier(IRBuilder& b, llvm::Value* id, int64_t threads) override;
  void namedBarrierArrive(IRBuilder& b, llvm::Value* id, int64_t threads) override;
  void setMaxRegisters(IRBuilder& b, bool increase, int64_t registers) override;
  // wgmma for the dots WgmmaPlan.h admits (WgmmaDot.cpp), else mma.sync with ldmatrix (MmaDot.cpp).
  bool lowerDot(KernelLowering& lowering, const ir::Op& dot) override;
  // Why the last dot lowerDot refused runs on FMAs: mma.sync's refusal (MmaDot.cpp).
  std::string whyNoTensorCores(const ir::Op& dot) const override {
    (void)dot;
    return dotRefusal_;
  }
  // sm_90a: wgmma.wait_group passing the registers through (WgmmaDot.cpp); elsewhere they are returned as they are.
  std::vector<llvm::Value*> dotWait(IRBuilder& b, const std::vector<llvm::Value*>& registers, int64_t pending) override;

 private:
  bool tensorMaps_;
  bool asyncDots_;
  int64_t programsBySharedMemory_;
  bool minProgramsDeclared_ = false;
  std::string dotRefusal_;  // why lowerDot last returned false
  void declareMinPrograms(llvm::Function& kernel, int64_t programs);
  llvm::Module& module(IRBuilder& b) { return *b.GetInsertBlock()->getModule(); }
  llvm::Value* callLibdevice(IRBuilder& b, const std::string& name, llvm::ArrayRef<llvm::Value*> args);
};

// The programs of `sharedBytes` (dynamic shared memory) that one multiprocessor of `arch` holds at once (each also
// takes the 1 KB the driver reserves per program); 0 for an arch whose shared memory is not known.
int64_t programsPerMultiprocessor(const std::string& arch, int64_t sharedBytes);

// WgmmaDot.cpp: lowers `dot` on wgmma when its layouts are wgmma's (WgmmaPlan.h); false, emitting nothing, else.
bool lowerWgmmaDot(KernelLowering& lowering, const ir::Op& dot);

// MmaDot.cpp: the four 32-bit A registers (a0 a1 in the low and high half of the first, ...) of 16x16 A fragment
// #fragment (fragment row i at K step s: i * K / 16 + s) packed from the registers of `a` (16-bit elements),
// `from` as planMmaOperandARegisters (MmaFragments.h) gives it: what ldmatrix would deliver, and what wgmma
// takes for A from registers.
std::vector<llvm::Value*> packMmaOperandA(KernelLowering& lowering, const ir::Value* a,
                                          const std::vector<int64_t>& from, size_t fragment);

}  // namespace tessera::backends::nvptx
