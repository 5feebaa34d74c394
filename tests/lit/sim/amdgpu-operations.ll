; AMDGPU operations the rewriting turns into runtime calls (jit/sim/SimABI.h): workitem and workgroup ids, the
; dispatch packet and implicit arguments (whose constant data is read natively), mbcnt (the lane id),
; ds_bpermute, s_barrier without the fences around it, MFMA kinds; and the kernel becomes a plain host function.
; RUN: %tessera-translate --emit=sim-host %s | FileCheck %s

; CHECK: ; site 0: bpermute: %x = call i32 @llvm.amdgcn.ds.bpermute(i32 %addr, i32 %v)
; CHECK: ; site 1: barrier: call void @llvm.amdgcn.s.barrier()
; CHECK: ; site 2: mfma: %d = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x16f16(
; CHECK: ; site 3: mfma: %e = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x8bf16.1k(
; CHECK: ; site 4: store global 4 bytes align 4:
; CHECK-NOT: ; site

target datalayout = "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128-p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7:8:9"
target triple = "amdgcn-amd-amdhsa"

; CHECK-LABEL: define void @operations(ptr addrspace(1) %out, i32 %v, <4 x half> %a, <4 x i16> %b) #0 {
define amdgpu_kernel void @operations(ptr addrspace(1) %out, i32 %v, <4 x half> %a, <4 x i16> %b) #0 {
; CHECK: call i32 @__tsim_thread_id(i32 0)
; CHECK: call i32 @__tsim_program_id(i32 1)
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %pid = call i32 @llvm.amdgcn.workgroup.id.y()

; The packet's fields are loaded as they are: no runtime call for them.
; CHECK: [[PACKET:%.*]] = call ptr @__tsim_dispatch_ptr()
; CHECK: [[P4:%.*]] = addrspacecast ptr [[PACKET]] to ptr addrspace(4)
; CHECK: getelementptr inbounds i8, ptr addrspace(4) [[P4]], i64 12
; CHECK: load i32, ptr addrspace(4)
; CHECK: call ptr @__tsim_implicitarg_ptr()
  %packet = call ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()
  %gridp = getelementptr inbounds i8, ptr addrspace(4) %packet, i64 12
  %grid = load i32, ptr addrspace(4) %gridp, align 4, !invariant.load !0
  %implicit = call ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()

; mbcnt: the population count of the mask's bits of lower lanes.
; CHECK: [[LANE:%.*]] = call i32 @__tsim_lane_id()
; CHECK: shl i64 1,
; CHECK: call i32 @llvm.ctpop.i32(
; CHECK: call i32 @__tsim_lane_id()
; CHECK: lshr i64 {{.*}}, 32
; CHECK: call i32 @llvm.ctpop.i32(
  %lo = call i32 @llvm.amdgcn.mbcnt.lo(i32 -1, i32 0)
  %lane = call i32 @llvm.amdgcn.mbcnt.hi(i32 -1, i32 %lo)

; CHECK: call i32 @__tsim_bpermute(i32 %{{.*}}, i32 %v, i32 0)
  %addr = shl i32 %lane, 2
  %x = call i32 @llvm.amdgcn.ds.bpermute(i32 %addr, i32 %v)

; CHECK-NOT: fence
; CHECK: call void @__tsim_barrier(i32 1)
; CHECK-NOT: fence
  fence syncscope("workgroup") release
  call void @llvm.amdgcn.s.barrier()
  fence syncscope("workgroup") acquire

; MmaKind: v_mfma_f32_16x16x16f16 = 12, v_mfma_f32_32x32x8bf16_1k = 15; A and B are two registers, C 4 or 16.
; CHECK: call void @__tsim_mma(i32 12, ptr {{.*}}, ptr {{.*}}, ptr {{.*}}, ptr {{.*}}, i32 2)
; CHECK: call void @__tsim_mma(i32 15, ptr {{.*}}, ptr {{.*}}, ptr {{.*}}, ptr {{.*}}, i32 3)
  %d = call <4 x float> @llvm.amdgcn.mfma.f32.16x16x16f16(<4 x half> %a, <4 x half> %a, <4 x float> zeroinitializer, i32 0, i32 0, i32 0)
  %e = call <16 x float> @llvm.amdgcn.mfma.f32.32x32x8bf16.1k(<4 x i16> %b, <4 x i16> %b, <16 x float> zeroinitializer, i32 0, i32 0, i32 0)

  %sum0 = add i32 %tid, %pid
  %sum1 = add i32 %sum0, %grid
  %sum2 = add i32 %sum1, %x
  store i32 %sum2, ptr addrspace(1) %out, align 4
  ret void
}

; CHECK-NOT: @llvm.amdgcn
; CHECK: attributes #0 = { nounwind }
attributes #0 = { nounwind "amdgpu-flat-work-group-size"="1,256" "target-cpu"="gfx942" "uniform-work-group-size"="true" }

!0 = !{}

declare i32 @llvm.amdgcn.workitem.id.x()
declare i32 @llvm.amdgcn.workgroup.id.y()
declare ptr addrspace(4) @llvm.amdgcn.dispatch.ptr()
declare ptr addrspace(4) @llvm.amdgcn.implicitarg.ptr()
declare i32 @llvm.amdgcn.mbcnt.lo(i32, i32)
declare i32 @llvm.amdgcn.mbcnt.hi(i32, i32)
declare i32 @llvm.amdgcn.ds.bpermute(i32, i32)
declare void @llvm.amdgcn.s.barrier()
declare <4 x float> @llvm.amdgcn.mfma.f32.16x16x16f16(<4 x half>, <4 x half>, <4 x float>, i32 immarg, i32 immarg, i32 immarg)
declare <16 x float> @llvm.amdgcn.mfma.f32.32x32x8bf16.1k(<4 x i16>, <4 x i16>, <16 x float>, i32 immarg, i32 immarg, i32 immarg)
