; NVPTX operations the rewriting turns into runtime calls (jit/sim/SimABI.h), one family per block: special
; registers, barrier 0 and warp sync, shuffles (with the .p predicate), votes, ldmatrix, mma.sync kinds,
; cp.async with its groups, printf, assert and trap; each with a site of the right kind.
; RUN: %tessera-translate --emit=sim-host %s | FileCheck %s

; CHECK: ; site 0: barrier:
; CHECK: ; site 1: warp_sync:
; CHECK: ; site 2: shuffle:
; CHECK: ; site 5: vote:
; CHECK: ; site 7: ldmatrix shared 16 bytes align 16:
; CHECK: ; site 9: mma:
; CHECK: ; site 12: cp_async global 4 bytes align 4:
; CHECK: ; site 13: cp_async global 16 bytes align 16:
; CHECK: ; site 14: cp_async_commit:
; CHECK: ; site 15: cp_async_wait:
; CHECK: ; site 16: cp_async_commit: call void @llvm.nvvm.cp.async.wait.all()
; CHECK: ; site 17: cp_async_wait: call void @llvm.nvvm.cp.async.wait.all()
; CHECK: ; site 18: print:
; CHECK: ; site 19: assert:
; CHECK: ; site 20: trap:

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

; CHECK-LABEL: define void @operations(
define ptx_kernel void @operations(ptr addrspace(1) %out, ptr addrspace(3) %row, ptr addrspace(1) %src, i32 %v, float %f) {
; CHECK: call i32 @__tsim_thread_id(i32 1)
; CHECK: call i32 @__tsim_threads_per_program(i32 0)
; CHECK: call i32 @__tsim_num_programs(i32 2)
; CHECK: call i32 @__tsim_lane_id()
; CHECK: call i32 @__tsim_warp_id()
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %nctaid = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.z()
  %lane = call i32 @llvm.nvvm.read.ptx.sreg.laneid()
  %warp = call i32 @llvm.nvvm.read.ptx.sreg.warpid()
  %size = call i32 @llvm.nvvm.read.ptx.sreg.warpsize()

; CHECK: call void @__tsim_barrier(i32 0)
; CHECK: call void @__tsim_warp_sync(i32 65535, i32 1)
  call void @llvm.nvvm.barrier.sync(i32 0)
  call void @llvm.nvvm.bar.warp.sync(i32 65535)

; CHECK: call i32 @__tsim_shuffle(i32 1, i32 -1, i32 %v, i32 1, i32 0, ptr null, i32 2)
; CHECK: [[DOWN:%.*]] = call i32 @__tsim_shuffle(i32 2, i32 -1, i32 %v, i32 8, i32 31, ptr [[VALID:%tsim.slot[0-9]*]], i32 3)
; CHECK: [[INRANGE:%.*]] = load i32, ptr [[VALID]]
; CHECK: icmp ne i32 [[INRANGE]], 0
; CHECK: [[BITS:%.*]] = bitcast float %f to i32
; CHECK: call i32 @__tsim_shuffle(i32 0, i32 -1, i32 [[BITS]], i32 %lane, i32 31, ptr null, i32 4)
  %up = call i32 @llvm.nvvm.shfl.sync.up.i32(i32 -1, i32 %v, i32 1, i32 0)
  %down = call { i32, i1 } @llvm.nvvm.shfl.sync.down.i32p(i32 -1, i32 %v, i32 8, i32 31)
  %idx = call float @llvm.nvvm.shfl.sync.idx.f32(i32 -1, float %f, i32 %lane, i32 31)

; CHECK: [[ALL:%.*]] = call i32 @__tsim_vote(i32 0, i32 -1, i32 {{.*}}, i32 5)
; CHECK: icmp ne i32 [[ALL]], 0
; CHECK: call i32 @__tsim_vote(i32 3, i32 -1, i32 {{.*}}, i32 6)
  %p = icmp sgt i32 %v, 0
  %all = call i1 @llvm.nvvm.vote.all.sync(i32 -1, i1 %p)
  %ballot = call i32 @llvm.nvvm.vote.ballot.sync(i32 -1, i1 %p)

; CHECK: call void @__tsim_ldmatrix(i32 1, i32 0, i64 %{{.*}}, ptr %tsim.slot{{[0-9]*}}, i32 7)
; CHECK: call void @__tsim_ldmatrix(i32 2, i32 1, i64 %{{.*}}, ptr %tsim.slot{{[0-9]*}}, i32 8)
  %m1 = call i32 @llvm.nvvm.ldmatrix.sync.aligned.m8n8.x1.b16.p3(ptr addrspace(3) %row)
  %m2 = call { i32, i32 } @llvm.nvvm.ldmatrix.sync.aligned.m8n8.x2.trans.b16.p3(ptr addrspace(3) %row)

; MmaKind: m16n8k8 tf32 = 5, m16n8k32 s8 = 7, m16n8k16 f16.f16 = 2.
; CHECK: call void @__tsim_mma(i32 5, ptr {{.*}}, ptr {{.*}}, ptr {{.*}}, ptr {{.*}}, i32 9)
; CHECK: call void @__tsim_mma(i32 7, ptr {{.*}}, ptr {{.*}}, ptr {{.*}}, ptr {{.*}}, i32 10)
; CHECK: call void @__tsim_mma(i32 2, ptr {{.*}}, ptr {{.*}}, ptr {{.*}}, ptr {{.*}}, i32 11)
  %tf32 = call { float, float, float, float } @llvm.nvvm.mma.m16n8k8.row.col.tf32(i32 %v, i32 %v, i32 %v, i32 %v, i32 %v, i32 %v, float %f, float %f, float %f, float %f)
  %s8 = call { i32, i32, i32, i32 } @llvm.nvvm.mma.m16n8k32.row.col.s8(i32 %v, i32 %v, i32 %v, i32 %v, i32 %v, i32 %v, i32 %v, i32 %v, i32 %v, i32 %v)
  %h = insertelement <2 x half> zeroinitializer, half 1.0, i64 0
  %f16 = call { <2 x half>, <2 x half> } @llvm.nvvm.mma.m16n8k16.row.col.f16.f16(<2 x half> %h, <2 x half> %h, <2 x half> %h, <2 x half> %h, <2 x half> %h, <2 x half> %h, <2 x half> %h, <2 x half> %h)

; CHECK: call void @__tsim_cp_async(i64 %{{.*}}, i64 %{{.*}}, i32 4, i32 4, i32 12)
; CHECK: call void @__tsim_cp_async(i64 %{{.*}}, i64 %{{.*}}, i32 16, i32 %v, i32 13)
; CHECK: call void @__tsim_cp_async_commit(i32 14)
; CHECK: call void @__tsim_cp_async_wait(i32 1, i32 15)
; CHECK: call void @__tsim_cp_async_commit(i32 16)
; CHECK: call void @__tsim_cp_async_wait(i32 0, i32 17)
  call void @llvm.nvvm.cp.async.ca.shared.global.4(ptr addrspace(3) %row, ptr addrspace(1) %src)
  call void @llvm.nvvm.cp.async.cg.shared.global.16.s(ptr addrspace(3) %row, ptr addrspace(1) %src, i32 %v)
  call void @llvm.nvvm.cp.async.commit.group()
  call void @llvm.nvvm.cp.async.wait.group(i32 1)
  call void @llvm.nvvm.cp.async.wait.all()

; CHECK: call i32 @__tsim_vprintf(ptr @fmt, ptr %args, i32 18)
; CHECK: call void @__tsim_assert_fail(ptr @fmt, ptr @fmt, i32 7, ptr @fmt, i32 19)
; CHECK: call void @__tsim_trap(i32 20)
; CHECK-NOT: @llvm.nvvm
; CHECK-NOT: @vprintf
; CHECK-NOT: @__assertfail
  %args = alloca i32, align 4
  store i32 %v, ptr %args, align 4
  %printed = call i32 @vprintf(ptr @fmt, ptr %args)
  call void @__assertfail(ptr @fmt, ptr @fmt, i32 7, ptr @fmt, i64 1)
  call void @llvm.trap()
  unreachable
}

@fmt = private unnamed_addr constant [4 x i8] c"%d\0A\00", align 1

declare i32 @llvm.nvvm.read.ptx.sreg.tid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.z()
declare i32 @llvm.nvvm.read.ptx.sreg.laneid()
declare i32 @llvm.nvvm.read.ptx.sreg.warpid()
declare i32 @llvm.nvvm.read.ptx.sreg.warpsize()
declare void @llvm.nvvm.barrier.sync(i32)
declare void @llvm.nvvm.bar.warp.sync(i32)
declare i32 @llvm.nvvm.shfl.sync.up.i32(i32, i32, i32, i32)
declare { i32, i1 } @llvm.nvvm.shfl.sync.down.i32p(i32, i32, i32, i32)
declare float @llvm.nvvm.shfl.sync.idx.f32(i32, float, i32, i32)
declare i1 @llvm.nvvm.vote.all.sync(i32, i1)
declare i32 @llvm.nvvm.vote.ballot.sync(i32, i1)
declare i32 @llvm.nvvm.ldmatrix.sync.aligned.m8n8.x1.b16.p3(ptr addrspace(3))
declare { i32, i32 } @llvm.nvvm.ldmatrix.sync.aligned.m8n8.x2.trans.b16.p3(ptr addrspace(3))
declare { float, float, float, float } @llvm.nvvm.mma.m16n8k8.row.col.tf32(i32, i32, i32, i32, i32, i32, float, float, float, float)
declare { i32, i32, i32, i32 } @llvm.nvvm.mma.m16n8k32.row.col.s8(i32, i32, i32, i32, i32, i32, i32, i32, i32, i32)
declare { <2 x half>, <2 x half> } @llvm.nvvm.mma.m16n8k16.row.col.f16.f16(<2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>)
declare void @llvm.nvvm.cp.async.ca.shared.global.4(ptr addrspace(3), ptr addrspace(1))
declare void @llvm.nvvm.cp.async.cg.shared.global.16.s(ptr addrspace(3), ptr addrspace(1), i32)
declare void @llvm.nvvm.cp.async.commit.group()
declare void @llvm.nvvm.cp.async.wait.group(i32 immarg)
declare void @llvm.nvvm.cp.async.wait.all()
declare i32 @vprintf(ptr, ptr)
declare void @__assertfail(ptr, ptr, i32, ptr, i64)
declare void @llvm.trap()
