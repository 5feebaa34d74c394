// NVPTX operations as runtime calls: special registers (the cluster's too), bar.sync/barrier0 (named and counted
// barriers too), barrier.cluster, setmaxnreg, bar.warp.sync,
// shfl.sync, vote.sync, ldmatrix, mma.sync, cp.async with its groups, and CUDA's vprintf and __assertfail; and
// the operations of the backend's inline-asm table as host IR (stmatrix as a runtime call).
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsNVPTX.h>

#include "jit/sim/RewriteContext.h"

namespace tessera::sim {

namespace {

using ID = llvm::Intrinsic::ID;
namespace I = llvm::Intrinsic;

struct MmaIntrinsic {
  ID id;
  MmaKind kind;
  MatrixRegisters registers;  // 32-bit registers per lane of A, B and C (PTX ISA, mma.sync fragments)
};
constexpr MmaIntrinsic kMmaIntrinsics[] = {
    {I::nvvm_mma_m16n8k16_row_col_f32_f32, kMmaM16N8K16_F16_F32, {4, 2, 4}},
    {I::nvvm_mma_m16n8k16_row_col_bf16, kMmaM16N8K16_BF16_F32, {4, 2, 4}},
    {I::nvvm_mma_m16n8k16_row_col_f16_f16, kMmaM16N8K16_F16_F16, {4, 2, 2}},
    {I::nvvm_mma_m16n8k8_row_col_f32_f32, kMmaM16N8K8_F16_F32, {2, 1, 4}},
    {I::nvvm_mma_m16n8k8_row_col_bf16, kMmaM16N8K8_BF16_F32, {2, 1, 4}},
    {I::nvvm_mma_m16n8k8_row_col_tf32, kMmaM16N8K8_TF32_F32, {4, 2, 4}},
    {I::nvvm_mma_m16n8k4_row_col_tf32, kMmaM16N8K4_TF32_F32, {2, 1, 4}},
    {I::nvvm_mma_m16n8k32_row_col_s8, kMmaM16N8K32_S8_S32, {4, 2, 4}},
    {I::nvvm_mma_m16n8k32_row_col_u8, kMmaM16N8K32_U8_S32, {4, 2, 4}},
    {I::nvvm_mma_m16n8k16_row_col_s8, kMmaM16N8K16_S8_S32, {2, 1, 4}},
};

struct LdMatrixIntrinsic {
  ID id;
  unsigned matrices;
  bool transpose;
};
constexpr LdMatrixIntrinsic kLdMatrixIntrinsics[] = {
    {I::nvvm_ldmatrix_sync_aligned_m8n8_x1_b16, 1, false}, {I::nvvm_ldmatrix_sync_aligned_m8n8_x1_trans_b16, 1, true},
    {I::nvvm_ldmatrix_sync_aligned_m8n8_x2_b16, 2, false}, {I::nvvm_ldmatrix_sync_aligned_m8n8_x2_trans_b16, 2, true},
    {I::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16, 4, false}, {I::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16, 4, true},
};

// The table's stmatrix asm (LLVM 19 has no intrinsic): $0 is the lane's 32-bit shared row address, then one
// register per matrix.
struct StMatrixAsm {
  std::string_view operation;
  unsigned matrices;
};
constexpr StMatrixAsm kStMatrixAsm[] = {{"stmatrix.x1", 1}, {"stmatrix.x2", 2}, {"stmatrix.x4", 4}};

const StMatrixAsm* findStMatrix(std::string_view operation) {
  for (const StMatrixAsm& s : kStMatrixAsm)
    if (s.operation == operation) return &s;
  return nullptr;
}

struct ShuffleIntrinsic {
  ID id;
  ShuffleMode mode;
  bool withPredicate;  // the .p forms also return whether the source lane was in range
};
constexpr ShuffleIntrinsic kShuffleIntrinsics[] = {
    {I::nvvm_shfl_sync_idx_i32, kShuffleIdx, false},   {I::nvvm_shfl_sync_idx_f32, kShuffleIdx, false},
    {I::nvvm_shfl_sync_up_i32, kShuffleUp, false},     {I::nvvm_shfl_sync_up_f32, kShuffleUp, false},
    {I::nvvm_shfl_sync_down_i32, kShuffleDown, false}, {I::nvvm_shfl_sync_down_f32, kShuffleDown, false},
    {I::nvvm_shfl_sync_bfly_i32, kShuffleBfly, false}, {I::nvvm_shfl_sync_bfly_f32, kShuffleBfly, false},
    {I::nvvm_shfl_sync_idx_i32p, kShuffleIdx, true},   {I::nvvm_shfl_sync_idx_f32p, kShuffleIdx, true},
    {I::nvvm_shfl_sync_up_i32p, kShuffleUp, true},     {I::nvvm_shfl_sync_up_f32p, kShuffleUp, true},
    {I::nvvm_shfl_sync_down_i32p, kShuffleDown, true}, {I::nvvm_shfl_sync_down_f32p, kShuffleDown, true},
    {I::nvvm_shfl_sync_bfly_i32p, kShuffleBfly, true}, {I::nvvm_shfl_sync_bfly_f32p, kShuffleBfly, true},
};

struct CpAsyncIntrinsic {
  ID id;
  uint32_t bytes;
  bool sourceSize;  // the .s forms read only their third operand's number of bytes and zero-fill the rest
};
constexpr CpAsyncIntrinsic kCpAsyncIntrinsics[] = {
    {I::nvvm_cp_async_ca_shared_global_4, 4, false},    {I::nvvm_cp_async_ca_shared_global_8, 8, false},
    {I::nvvm_cp_async_ca_shared_global_16, 16, false},  {I::nvvm_cp_async_cg_shared_global_16, 16, false},
    {I::nvvm_cp_async_ca_shared_global_4_s, 4, true},   {I::nvvm_cp_async_ca_shared_global_8_s, 8, true},
    {I::nvvm_cp_async_ca_shared_global_16_s, 16, true}, {I::nvvm_cp_async_cg_shared_global_16_s, 16, true},
};

template <class Table>
auto find(const Table& table, ID id) -> decltype(&table[0]) {
  for (const auto& entry : table)
    if (entry.id == id) return &entry;
  return nullptr;
}

// The special registers: [function, axis] per intrinsic.
llvm::Value* specialRegister(RewriteContext& rc, llvm::IRBuilder<>& b, ID id) {
  struct Register {
    ID id;
    RuntimeFunction function;
    int axis;  // -1: the function takes none
  };
  static const Register registers[] = {
      {I::nvvm_read_ptx_sreg_tid_x, TSIM_FUNCTION(__tsim_thread_id), 0},
      {I::nvvm_read_ptx_sreg_tid_y, TSIM_FUNCTION(__tsim_thread_id), 1},
      {I::nvvm_read_ptx_sreg_tid_z, TSIM_FUNCTION(__tsim_thread_id), 2},
      {I::nvvm_read_ptx_sreg_ntid_x, TSIM_FUNCTION(__tsim_threads_per_program), 0},
      {I::nvvm_read_ptx_sreg_ntid_y, TSIM_FUNCTION(__tsim_threads_per_program), 1},
      {I::nvvm_read_ptx_sreg_ntid_z, TSIM_FUNCTION(__tsim_threads_per_program), 2},
      {I::nvvm_read_ptx_sreg_ctaid_x, TSIM_FUNCTION(__tsim_program_id), 0},
      {I::nvvm_read_ptx_sreg_ctaid_y, TSIM_FUNCTION(__tsim_program_id), 1},
      {I::nvvm_read_ptx_sreg_ctaid_z, TSIM_FUNCTION(__tsim_program_id), 2},
      {I::nvvm_read_ptx_sreg_nctaid_x, TSIM_FUNCTION(__tsim_num_programs), 0},
      {I::nvvm_read_ptx_sreg_nctaid_y, TSIM_FUNCTION(__tsim_num_programs), 1},
      {I::nvvm_read_ptx_sreg_nctaid_z, TSIM_FUNCTION(__tsim_num_programs), 2},
      {I::nvvm_read_ptx_sreg_laneid, TSIM_FUNCTION(__tsim_lane_id), -1},
      {I::nvvm_read_ptx_sreg_warpid, TSIM_FUNCTION(__tsim_warp_id), -1},
  };
  for (const Register& r : registers)
    if (r.id == id)
      return r.axis < 0 ? rc.call(b, r.function, {}) : rc.call(b, r.function, {b.getInt32(r.axis)});
  if (id == I::nvvm_read_ptx_sreg_warpsize) return b.getInt32(32);
  // Thread-block clusters (sm_90): [ClusterQuery, axis] per intrinsic.
  struct ClusterRegister {
    ID id;
    ClusterQuery query;
    uint32_t axis;
  };
  static const ClusterRegister clusterRegisters[] = {
      {I::nvvm_read_ptx_sreg_cluster_ctaid_x, kClusterCtaId, 0},
      {I::nvvm_read_ptx_sreg_cluster_ctaid_y, kClusterCtaId, 1},
      {I::nvvm_read_ptx_sreg_cluster_ctaid_z, kClusterCtaId, 2},
      {I::nvvm_read_ptx_sreg_cluster_nctaid_x, kClusterNumCtaId, 0},
      {I::nvvm_read_ptx_sreg_cluster_nctaid_y, kClusterNumCtaId, 1},
      {I::nvvm_read_ptx_sreg_cluster_nctaid_z, kClusterNumCtaId, 2},
      {I::nvvm_read_ptx_sreg_clusterid_x, kClusterId, 0},
      {I::nvvm_read_ptx_sreg_clusterid_y, kClusterId, 1},
      {I::nvvm_read_ptx_sreg_clusterid_z, kClusterId, 2},
      {I::nvvm_read_ptx_sreg_nclusterid_x, kNumClusters, 0},
      {I::nvvm_read_ptx_sreg_nclusterid_y, kNumClusters, 1},
      {I::nvvm_read_ptx_sreg_nclusterid_z, kNumClusters, 2},
      {I::nvvm_read_ptx_sreg_cluster_ctarank, kClusterCtaRank, 0},
      {I::nvvm_read_ptx_sreg_cluster_nctarank, kClusterNumCtaRank, 0},
  };
  for (const ClusterRegister& r : clusterRegisters)
    if (r.id == id) return rc.call(b, TSIM_FUNCTION(__tsim_cluster_query), {b.getInt32(r.query), b.getInt32(r.axis)});
  return nullptr;
}

// barrier.cluster.arrive[.relaxed][.aligned] and barrier.cluster.wait[.aligned] (whether a warp executes an
// .aligned one together is not checked). Null: not one of them.
llvm::Value* clusterBarrier(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::CallInst& call) {
  auto arrive = [&](bool relaxed) {
    return rc.call(b, TSIM_FUNCTION(__tsim_cluster_arrive), {b.getInt32(relaxed), rc.site(call, SiteKind::Barrier)});
  };
  switch (call.getIntrinsicID()) {
    case I::nvvm_barrier_cluster_arrive: case I::nvvm_barrier_cluster_arrive_aligned: return arrive(false);
    case I::nvvm_barrier_cluster_arrive_relaxed: case I::nvvm_barrier_cluster_arrive_relaxed_aligned:
      return arrive(true);
    case I::nvvm_barrier_cluster_wait: case I::nvvm_barrier_cluster_wait_aligned:
      return rc.call(b, TSIM_FUNCTION(__tsim_cluster_wait), {rc.site(call, SiteKind::Barrier)});
    default: return nullptr;
  }
}

// bar.sync / barrier.sync: barrier 0 of every thread as __tsim_barrier; any other id, a non-constant one or a
// thread count (id and count may be values) as __tsim_named_barrier, which checks them. Null: not a barrier.
llvm::Value* barrier(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::CallInst& call) {
  llvm::Value* count = nullptr;
  switch (call.getIntrinsicID()) {
    case I::nvvm_barrier0: return rc.call(b, TSIM_FUNCTION(__tsim_barrier), {rc.site(call, SiteKind::Barrier)});
    case I::nvvm_barrier_sync: case I::nvvm_barrier_n: case I::nvvm_bar_sync: {
      const auto* id = llvm::dyn_cast<llvm::ConstantInt>(call.getArgOperand(0));
      if (id && id->isZero()) return rc.call(b, TSIM_FUNCTION(__tsim_barrier), {rc.site(call, SiteKind::Barrier)});
      count = b.getInt32(kTsimAllThreads);
      break;
    }
    case I::nvvm_barrier: case I::nvvm_barrier_sync_cnt: count = call.getArgOperand(1); break;
    default: return nullptr;
  }
  return rc.call(b, TSIM_FUNCTION(__tsim_named_barrier),
                 {call.getArgOperand(0), count, rc.site(call, SiteKind::Barrier)});
}

llvm::Value* shuffle(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::CallInst& call, const ShuffleIntrinsic& s) {
  llvm::Value* value = call.getArgOperand(1);
  llvm::Type* valueTy = value->getType();
  // The predicate comes back through `valid` (SimABI.h: null when the instruction does not want it).
  llvm::Value* valid = s.withPredicate ? static_cast<llvm::Value*>(rc.scratch(*call.getFunction(), b.getInt32Ty()))
                                       : llvm::ConstantPointerNull::get(b.getPtrTy());
  llvm::Value* bits = rc.call(b, TSIM_FUNCTION(__tsim_shuffle),
                              {b.getInt32(s.mode), call.getArgOperand(0), b.CreateBitCast(value, b.getInt32Ty()),
                               call.getArgOperand(2), call.getArgOperand(3), valid, rc.site(call, SiteKind::Shuffle)});
  llvm::Value* result = b.CreateBitCast(bits, valueTy);
  if (!s.withPredicate) return result;
  llvm::Value* inRange = b.CreateICmpNE(b.CreateLoad(b.getInt32Ty(), valid), b.getInt32(0));
  llvm::Value* pair = b.CreateInsertValue(llvm::PoisonValue::get(call.getType()), result, {0});
  return b.CreateInsertValue(pair, inRange, {1});
}

llvm::Value* vote(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::CallInst& call, VoteMode mode) {
  llvm::Value* predicate = b.CreateZExt(call.getArgOperand(1), b.getInt32Ty());
  llvm::Value* result = rc.call(b, TSIM_FUNCTION(__tsim_vote),
                                {b.getInt32(mode), call.getArgOperand(0), predicate, rc.site(call, SiteKind::Vote)});
  return mode == kVoteBallot ? result : b.CreateICmpNE(result, b.getInt32(0));
}

llvm::Value* ldmatrix(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::CallInst& call, const LdMatrixIntrinsic& l) {
  llvm::Value* row = call.getArgOperand(0);
  const unsigned space = row->getType()->getPointerAddressSpace();
  if (space != 0 && space != 3) rc.fail(call, "ldmatrix from address space " + std::to_string(space));
  // Each lane supplies the address of one 16-byte row.
  llvm::ConstantInt* site = rc.site(call, SiteKind::LdMatrix, space == 3 ? AddressSpace::Shared : AddressSpace::Generic,
                                    16, 16);
  llvm::Value* out = rc.scratch(*call.getFunction(), llvm::ArrayType::get(b.getInt32Ty(), l.matrices));
  rc.call(b, TSIM_FUNCTION(__tsim_ldmatrix),
          {b.getInt32(l.matrices), b.getInt32(l.transpose), hostAddress(b, row), out, site});
  size_t next = 0;
  return fromWords(b, call.getType(), loadWords(b, out, l.matrices), next);
}

llvm::Value* stmatrix(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::CallInst& call, const StMatrixAsm& s) {
  if (call.arg_size() != 1 + s.matrices) rc.fail(call, std::string(s.operation) + " with the wrong operand count");
  std::vector<llvm::Value*> registers;
  for (unsigned m = 0; m < s.matrices; ++m) registers.push_back(call.getArgOperand(1 + m));
  llvm::Value* in = wordArray(rc, b, registers, 0);
  // Like ldmatrix, each lane supplies the address of one 16-byte row.
  return rc.call(b, TSIM_FUNCTION(__tsim_stmatrix),
                 {b.getInt32(s.matrices), b.getInt32(0), sharedHostAddress(rc, b, call.getArgOperand(0)), in,
                  rc.site(call, SiteKind::StMatrix, AddressSpace::Shared, 16, 16)});
}

llvm::Value* cpAsync(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::CallInst& call, const CpAsyncIntrinsic& c) {
  llvm::Value* sourceBytes = c.sourceSize ? call.getArgOperand(2) : b.getInt32(c.bytes);
  // The site describes the global read (its coalescing is what the counters report).
  llvm::ConstantInt* site = rc.site(call, SiteKind::CpAsync, AddressSpace::Global, c.bytes, c.bytes);
  return rc.call(b, TSIM_FUNCTION(__tsim_cp_async),
                 {hostAddress(b, call.getArgOperand(0)), hostAddress(b, call.getArgOperand(1)), b.getInt32(c.bytes),
                  sourceBytes, site});
}

// CUDA's device-side library calls the lowering emits.
llvm::Value* libraryCall(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::CallInst& call) {
  llvm::StringRef name = call.getCalledFunction()->getName();
  if (name == "vprintf" && call.arg_size() == 2)
    return rc.call(b, TSIM_FUNCTION(__tsim_vprintf),
                   {call.getArgOperand(0), call.getArgOperand(1), rc.site(call, SiteKind::Print)});
  if (name == "__assertfail" && call.arg_size() == 5)
    return rc.call(b, TSIM_FUNCTION(__tsim_assert_fail),
                   {call.getArgOperand(0), call.getArgOperand(1), call.getArgOperand(2), call.getArgOperand(3),
                    rc.site(call, SiteKind::Assert)});
  return nullptr;
}

}  // namespace

llvm::Value* nvptxOperation(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::CallInst& call) {
  const ID id = call.getIntrinsicID();
  if (id == I::not_intrinsic) return libraryCall(rc, b, call);
  if (llvm::Value* v = specialRegister(rc, b, id)) return v;
  if (llvm::Value* v = barrier(rc, b, call)) return v;
  if (llvm::Value* v = clusterBarrier(rc, b, call)) return v;
  if (id == I::nvvm_setmaxnreg_inc_sync_aligned_u32 || id == I::nvvm_setmaxnreg_dec_sync_aligned_u32)
    return rc.call(b, TSIM_FUNCTION(__tsim_setmaxnreg),  // a synchronization site, as the warpgroup executes it together
                   {b.getInt32(id == I::nvvm_setmaxnreg_inc_sync_aligned_u32), call.getArgOperand(0),
                    rc.site(call, SiteKind::Barrier)});
  if (id == I::nvvm_bar_warp_sync)
    return rc.call(b, TSIM_FUNCTION(__tsim_warp_sync), {call.getArgOperand(0), rc.site(call, SiteKind::WarpSync)});
  if (const ShuffleIntrinsic* s = find(kShuffleIntrinsics, id)) return shuffle(rc, b, call, *s);
  switch (id) {
    case I::nvvm_vote_all_sync: return vote(rc, b, call, kVoteAll);
    case I::nvvm_vote_any_sync: return vote(rc, b, call, kVoteAny);
    case I::nvvm_vote_uni_sync: return vote(rc, b, call, kVoteUni);
    case I::nvvm_vote_ballot_sync: return vote(rc, b, call, kVoteBallot);
    case I::nvvm_cp_async_commit_group:
      return rc.call(b, TSIM_FUNCTION(__tsim_cp_async_commit), {rc.site(call, SiteKind::CpAsyncCommit)});
    case I::nvvm_cp_async_wait_group:
      return rc.call(b, TSIM_FUNCTION(__tsim_cp_async_wait),
                     {call.getArgOperand(0), rc.site(call, SiteKind::CpAsyncWait)});
    case I::nvvm_cp_async_wait_all:  // SimABI.h: wait_all also waits for copies not committed yet
      rc.call(b, TSIM_FUNCTION(__tsim_cp_async_commit), {rc.site(call, SiteKind::CpAsyncCommit)});
      return rc.call(b, TSIM_FUNCTION(__tsim_cp_async_wait), {b.getInt32(0), rc.site(call, SiteKind::CpAsyncWait)});
    default: break;
  }
  if (const LdMatrixIntrinsic* l = find(kLdMatrixIntrinsics, id)) return ldmatrix(rc, b, call, *l);
  if (const MmaIntrinsic* m = find(kMmaIntrinsics, id))
    return matrixMultiply(rc, b, call, m->kind, m->registers, static_cast<unsigned>(call.arg_size()));
  if (const CpAsyncIntrinsic* c = find(kCpAsyncIntrinsics, id)) return cpAsync(rc, b, call, *c);
  return nvptxMbarrierOperation(rc, b, call);
}

llvm::Value* nvptxInlineAsm(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::CallInst& call,
                            std::string_view operation) {
  if (const StMatrixAsm* s = findStMatrix(operation)) return stmatrix(rc, b, call, *s);
  if (operation == "bar.arrive")
    return rc.call(b, TSIM_FUNCTION(__tsim_named_barrier_arrive),
                   {call.getArgOperand(0), call.getArgOperand(1), rc.site(call, SiteKind::Barrier)});
  if (operation == "rcp.approx.ftz.f32") {
    // The NVVM intrinsic of the same instruction, made host math like any other.
    llvm::CallInst* rcp = b.CreateIntrinsic(I::nvvm_rcp_approx_ftz_f, {}, {call.getArgOperand(0)});
    llvm::Value* result = hostMath(b, *rcp);
    rcp->eraseFromParent();
    return result;
  }
  if (operation == "mad.wide.u64" || operation == "mul.wide.u64" || operation == "add.u128" ||
      operation == "sub.u128") {
    // In u128 on the host; the asm's operands and results are the {low, high} u64 halves.
    llvm::Type* i128 = b.getInt128Ty();
    auto wide = [&](unsigned i) { return b.CreateZExt(call.getArgOperand(i), i128); };
    auto pairOf = [&](unsigned low) {
      return b.CreateOr(wide(low), b.CreateShl(wide(low + 1), 64));
    };
    llvm::Value* r;
    if (operation == "mad.wide.u64") r = b.CreateAdd(b.CreateMul(wide(0), wide(1)), wide(2));
    else if (operation == "mul.wide.u64") r = b.CreateMul(wide(0), wide(1));
    else if (operation == "add.u128") r = b.CreateAdd(pairOf(0), pairOf(2));
    else r = b.CreateSub(pairOf(0), pairOf(2));
    llvm::Value* pair = b.CreateInsertValue(llvm::PoisonValue::get(call.getType()), b.CreateTrunc(r, b.getInt64Ty()), {0});
    return b.CreateInsertValue(pair, b.CreateTrunc(b.CreateLShr(r, 64), b.getInt64Ty()), {1});
  }
  if (operation == "mad.wide.u32") {
    llvm::Type* i64 = b.getInt64Ty();
    auto wide = [&](unsigned i) { return b.CreateZExt(call.getArgOperand(i), i64); };
    llvm::Value* sum = b.CreateAdd(b.CreateMul(wide(0), wide(1)), wide(2));
    llvm::Value* pair = b.CreateInsertValue(llvm::PoisonValue::get(call.getType()), b.CreateTrunc(sum, b.getInt32Ty()), {0});
    return b.CreateInsertValue(pair, b.CreateTrunc(b.CreateLShr(sum, b.getInt64(32)), b.getInt32Ty()), {1});
  }
  return nullptr;
}

}  // namespace tessera::sim
