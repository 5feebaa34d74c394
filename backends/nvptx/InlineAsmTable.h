// Every inline PTX string an NVPTX module of this backend may contain, with the operation it performs: what the
// backend emits itself (mbarrier waits and TMA copies) and what it links from libdevice. The wgmma strings depend
// on parameters and are generated in WgmmaAsm.h (findWgmmaAsm: single instructions, and a dot's whole issue as
// one group), which is part of this table. The
// backend emits inline asm only from this table; the emulator (jit/sim) accepts an inline asm only when its
// string and constraints match an entry exactly and implements the entry's operation, so it never parses asm.
#pragma once

#include <array>
#include <string_view>

namespace tessera::backends::nvptx {

struct InlineAsmEntry {
  std::string_view operation;    // what it does, the name the emulator implements it under ("wgmma.fence", ...)
  std::string_view asmString;    // exactly as given to llvm::InlineAsm::get
  std::string_view constraints;  // likewise
};

inline constexpr std::array<InlineAsmEntry, 39> kInlineAsmTable{{
    // libdevice (__nv_tanhf, __nv_fmodf, ...): the approximate reciprocal, subnormals flushed to zero.
    {"rcp.approx.ftz.f32", "rcp.approx.ftz.f32 $0,$1;", "=f,f"},
    // libdevice (the argument reduction of __nv_sinf, __nv_cosf): {low, high} words of a * b + c, all u32.
    {"mad.wide.u32", "{\n\tmad.lo.cc.u32   $0, $2, $3, $4;\n\tmadc.hi.u32     $1, $2, $3,  0;\n\t}", "=r,=r,r,r,r"},
    // libdevice (the argument reduction of __nv_sin, __nv_cos, ...): {low, high} u64 words of a * b + c, all u64.
    {"mad.wide.u64",
     "{\n"
     "\t.reg .u32 r0, r1, r2, r3, alo, ahi, blo, bhi, clo, chi;\n"
     "\tmov.b64         {alo,ahi}, $2;    \n"
     "\tmov.b64         {blo,bhi}, $3;    \n"
     "\tmov.b64         {clo,chi}, $4;    \n"
     "\tmad.lo.cc.u32   r0, alo, blo, clo;\n"
     "\tmadc.hi.cc.u32  r1, alo, blo, chi;\n"
     "\tmadc.hi.u32     r2, alo, bhi,   0;\n"
     "\tmad.lo.cc.u32   r1, alo, bhi,  r1;\n"
     "\tmadc.hi.cc.u32  r2, ahi, blo,  r2;\n"
     "\tmadc.hi.u32     r3, ahi, bhi,   0;\n"
     "\tmad.lo.cc.u32   r1, ahi, blo,  r1;\n"
     "\tmadc.lo.cc.u32  r2, ahi, bhi,  r2;\n"
     "\taddc.u32        r3,  r3,   0;     \n"
     "\tmov.b64         $0, {r0,r1};      \n"
     "\tmov.b64         $1, {r2,r3};      \n"
     "\t}",
     "=l,=l,l,l,l"},
    // libdevice (likewise): {low, high} u64 words of a * b.
    {"mul.wide.u64",
     "{\n"
     "\t.reg .u32 r0, r1, r2, r3, alo, ahi, blo, bhi;\n"
     "\tmov.b64         {alo,ahi}, $2;   \n"
     "\tmov.b64         {blo,bhi}, $3;   \n"
     "\tmul.lo.u32      r0, alo, blo;    \n"
     "\tmul.hi.u32      r1, alo, blo;    \n"
     "\tmad.lo.cc.u32   r1, alo, bhi, r1;\n"
     "\tmadc.hi.u32     r2, alo, bhi,  0;\n"
     "\tmad.lo.cc.u32   r1, ahi, blo, r1;\n"
     "\tmadc.hi.cc.u32  r2, ahi, blo, r2;\n"
     "\tmadc.hi.u32     r3, ahi, bhi,  0;\n"
     "\tmad.lo.cc.u32   r2, ahi, bhi, r2;\n"
     "\taddc.u32        r3, r3,  0;      \n"
     "\tmov.b64         $0, {r0,r1};     \n"
     "\tmov.b64         $1, {r2,r3};     \n"
     "\t}",
     "=l,=l,l,l"},
    // libdevice (likewise): {low, high} of the u128 sum of {$2, $3} and {$4, $5} (low words first).
    {"add.u128",
     "{\n"
     "\t.reg .u32 r0, r1, r2, r3, a0, a1, a2, a3, b0, b1, b2, b3;\n"
     "\tmov.b64         {a0,a1}, $2;\n"
     "\tmov.b64         {a2,a3}, $3;\n"
     "\tmov.b64         {b0,b1}, $4;\n"
     "\tmov.b64         {b2,b3}, $5;\n"
     "\tadd.cc.u32      r0, a0, b0; \n"
     "\taddc.cc.u32     r1, a1, b1; \n"
     "\taddc.cc.u32     r2, a2, b2; \n"
     "\taddc.u32        r3, a3, b3; \n"
     "\tmov.b64         $0, {r0,r1};\n"
     "\tmov.b64         $1, {r2,r3};\n"
     "\t}",
     "=l,=l,l,l,l,l"},
    // libdevice (likewise): {low, high} of the u128 difference {$2, $3} - {$4, $5}.
    {"sub.u128",
     "{\n"
     "\t.reg .u32 r0, r1, r2, r3, a0, a1, a2, a3, b0, b1, b2, b3;\n"
     "\tmov.b64         {a0,a1}, $2;\n"
     "\tmov.b64         {a2,a3}, $3;\n"
     "\tmov.b64         {b0,b1}, $4;\n"
     "\tmov.b64         {b2,b3}, $5;\n"
     "\tsub.cc.u32      r0, a0, b0; \n"
     "\tsubc.cc.u32     r1, a1, b1; \n"
     "\tsubc.cc.u32     r2, a2, b2; \n"
     "\tsubc.u32        r3, a3, b3; \n"
     "\tmov.b64         $0, {r0,r1};\n"
     "\tmov.b64         $1, {r2,r3};\n"
     "\t}",
     "=l,=l,l,l,l,l"},
    // Predicated global stores (masked tile stores whose mask is computed in their block,
    // NVPTXHooks::predicatedGlobalStore): the value's words to the global address $1, naturally aligned, only where
    // the predicate $0 (an i1, "b") is true. One instruction instead of a branch around a store: a masked epilogue
    // stays one basic block, for LLVM's code generation and for ptxas.
    {"st.global.pred.b16", "@$0 st.global.b16 [$1], $2;", "b,l,h"},
    {"st.global.pred.b32", "@$0 st.global.b32 [$1], $2;", "b,l,r"},
    {"st.global.pred.v2.b32", "@$0 st.global.v2.b32 [$1], {$2, $3};", "b,l,r,r"},
    {"st.global.pred.v4.b32", "@$0 st.global.v4.b32 [$1], {$2, $3, $4, $5};", "b,l,r,r,r,r"},
    // Predicated global loads (masked tile loads and the copies cp.async cannot make, NVPTXHooks::
    // predicatedGlobalLoad): the words at the global address $n+1, naturally aligned, where the predicate $n (an i1)
    // is true, else the fallback words after the address. One straight-line block instead of a branch around each
    // load, so that ptxas may issue a tile's loads together. The outputs are early-clobber: each is written (the
    // fallback) before the load reads the address.
    {"ld.global.pred.b16", "{\n\tmov.b16 $0, $3;\n\t@$1 ld.global.b16 $0, [$2];\n\t}", "=&h,b,l,h"},
    {"ld.global.pred.b32", "{\n\tmov.b32 $0, $3;\n\t@$1 ld.global.b32 $0, [$2];\n\t}", "=&r,b,l,r"},
    {"ld.global.pred.v2.b32",
     "{\n\tmov.b32 $0, $4;\n\tmov.b32 $1, $5;\n\t@$2 ld.global.v2.b32 {$0, $1}, [$3];\n\t}", "=&r,=&r,b,l,r,r"},
    {"ld.global.pred.v4.b32",
     "{\n\tmov.b32 $0, $6;\n\tmov.b32 $1, $7;\n\tmov.b32 $2, $8;\n\tmov.b32 $3, $9;\n\t"
     "@$4 ld.global.v4.b32 {$0, $1, $2, $3}, [$5];\n\t}",
     "=&r,=&r,=&r,=&r,b,l,r,r,r,r"},
    // stmatrix (sm_90; LLVM 19 has no intrinsic), the inverse of ldmatrix: 1, 2 or 4 matrices of 8 x 8 16-bit
    // elements from registers to shared memory. Register m ($1 + m) of lane l holds row l / 4, columns 2 (l % 4) and
    // 2 (l % 4) + 1 of matrix m (the lower column in the low half); lane l gives in $0 the 32-bit shared address of
    // row l % 8 of matrix l / 8 (16 contiguous bytes, 16-byte aligned; the other lanes' addresses are ignored).
    {"stmatrix.x1", "stmatrix.sync.aligned.m8n8.x1.shared.b16 [$0], {$1};", "r,r,~{memory}"},
    {"stmatrix.x2", "stmatrix.sync.aligned.m8n8.x2.shared.b16 [$0], {$1, $2};", "r,r,r,~{memory}"},
    {"stmatrix.x4", "stmatrix.sync.aligned.m8n8.x4.shared.b16 [$0], {$1, $2, $3, $4};", "r,r,r,r,r,~{memory}"},
    // mbarriers (sm_90): shared addresses are 32-bit ($0 / $1 below), as the shared window is.
    // Adds $1 transaction bytes to the current phase of the mbarrier at $0, then arrives once.
    {"mbarrier.arrive.expect_tx", "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r"},
    // 1 once the phase of parity $2 of the mbarrier at $1 has completed, else 0 (the caller loops).
    {"mbarrier.try_wait.parity",
     "{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [$1], $2;\n\tselp.u32 $0, 1, 0, p;\n\t}",
     "=r,r,r"},
    // Named barriers: the calling warps arrive at barrier $0 (of $1 threads, whole warps) without waiting for it
    // (LLVM 19 has an intrinsic for bar.sync with a count, not for bar.arrive). The memory clobber keeps LLVM from
    // moving memory accesses across it, as across bar.sync.
    {"bar.arrive", "bar.arrive $0, $1;", "r,r,~{memory}"},
    // Orders this thread's generic-proxy accesses of shared memory (mbarrier.init, a TMA store's staging writes)
    // before later async-proxy ones (TMA copies completing on those barriers, the stores reading the staging). The
    // memory clobber keeps LLVM from moving the writes after it.
    {"fence.proxy.async.shared::cta", "fence.proxy.async.shared::cta;", "~{memory}"},
    // TMA (sm_90): the box at coordinates {$2, ...} (dimension 0 first) of the tensor map at generic address $1
    // into shared memory at $0, completing its bytes on the mbarrier at the last operand.
    {"cp.async.bulk.tensor.1d",
     "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [$0], [$1, {$2}], [$3];",
     "r,l,r,r"},
    {"cp.async.bulk.tensor.2d",
     "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3}], [$4];",
     "r,l,r,r,r"},
    {"cp.async.bulk.tensor.3d",
     "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3, $4}], "
     "[$5];",
     "r,l,r,r,r,r"},
    {"cp.async.bulk.tensor.4d",
     "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3, $4, "
     "$5}], [$6];",
     "r,l,r,r,r,r,r"},
    {"cp.async.bulk.tensor.5d",
     "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3, $4, $5, "
     "$6}], [$7];",
     "r,l,r,r,r,r,r,r"},
    // Thread-block clusters (sm_90). The mbarrier at the same shared offset as $0 (this program's) in the cluster's
    // program of rank $1: one arrival, releasing this thread's accesses to the cluster (a consumer handing a
    // multicast buffer back to every program that writes into it).
    {"mbarrier.arrive.cluster",
     "{\n\t.reg .b32 remote;\n\tmapa.shared::cluster.u32 remote, $0, $1;\n\t"
     "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n\t}",
     "r,r,~{memory}"},
    // TMA multicast (sm_90): as cp.async.bulk.tensor.<n>d above, the box landing at the same shared offset $0 in
    // every program of the cluster whose rank is set in the 16-bit mask (the last operand), completing its bytes on
    // each one's mbarrier at the same offset as the one named.
    {"cp.async.bulk.tensor.multicast.1d",
     "cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [$0], "
     "[$1, {$2}], [$3], $4;",
     "r,l,r,r,h,~{memory}"},
    {"cp.async.bulk.tensor.multicast.2d",
     "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [$0], "
     "[$1, {$2, $3}], [$4], $5;",
     "r,l,r,r,r,h,~{memory}"},
    {"cp.async.bulk.tensor.multicast.3d",
     "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [$0], "
     "[$1, {$2, $3, $4}], [$5], $6;",
     "r,l,r,r,r,r,h,~{memory}"},
    {"cp.async.bulk.tensor.multicast.4d",
     "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [$0], "
     "[$1, {$2, $3, $4, $5}], [$6], $7;",
     "r,l,r,r,r,r,r,h,~{memory}"},
    {"cp.async.bulk.tensor.multicast.5d",
     "cp.async.bulk.tensor.5d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [$0], "
     "[$1, {$2, $3, $4, $5, $6}], [$7], $8;",
     "r,l,r,r,r,r,r,r,h,~{memory}"},
    // TMA stores (sm_90): the box at coordinates {$1, ...} (dimension 0 first) of the tensor map at generic address
    // $0 from shared memory at the last operand to global memory (elements outside the tensor are not written), in
    // the thread's current bulk group; then the group's commit, and the wait until its stores have read shared
    // memory (`.read`: the staging may be reused; the global writes need not have landed).
    {"cp.async.bulk.tensor.store.1d", "cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [$0, {$1}], [$2];",
     "l,r,r,~{memory}"},
    {"cp.async.bulk.tensor.store.2d", "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$0, {$1, $2}], [$3];",
     "l,r,r,r,~{memory}"},
    {"cp.async.bulk.tensor.store.3d",
     "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [$0, {$1, $2, $3}], [$4];", "l,r,r,r,r,~{memory}"},
    {"cp.async.bulk.tensor.store.4d",
     "cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [$0, {$1, $2, $3, $4}], [$5];",
     "l,r,r,r,r,r,~{memory}"},
    {"cp.async.bulk.tensor.store.5d",
     "cp.async.bulk.tensor.5d.global.shared::cta.bulk_group [$0, {$1, $2, $3, $4, $5}], [$6];",
     "l,r,r,r,r,r,r,~{memory}"},
    {"cp.async.bulk.commit_group", "cp.async.bulk.commit_group;", "~{memory}"},
    {"cp.async.bulk.wait_group.read.0", "cp.async.bulk.wait_group.read 0;", "~{memory}"},
}};

// The entry with exactly this asm string and these constraints; null when there is none.
inline const InlineAsmEntry* findInlineAsm(std::string_view asmString, std::string_view constraints) {
  for (const InlineAsmEntry& entry : kInlineAsmTable)
    if (entry.asmString == asmString && entry.constraints == constraints) return &entry;
  return nullptr;
}

}  // namespace tessera::backends::nvptx
