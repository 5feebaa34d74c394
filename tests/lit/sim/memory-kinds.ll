; Which accesses reach the runtime: global and shared memory and generic pointers do, each with its width;
; the thread's stack and constant globals do not. Atomics (with their operation), atomic loads and stores,
; compare-and-swap, memcpy and memset; and shared pointers converted to integers are offsets into the buffer.
; RUN: %tessera-translate --emit=sim-host %s | FileCheck %s

; CHECK: ; site 0: load generic 8 bytes align 8:
; CHECK: ; site 1: store shared 2 bytes align 2:
; CHECK: ; site 2: atomic_rmw global 4 bytes align 4:
; CHECK: ; site 3: atomic_rmw global 8 bytes align 8:
; CHECK: ; site 4: atomic_rmw global 4 bytes align 4: %loaded = load atomic i32
; CHECK: ; site 5: atomic_rmw global 4 bytes align 4: store atomic i32
; CHECK: ; site 6: atomic_cas global 4 bytes align 4:
; CHECK: ; site 7: memcpy global 64 bytes align 16:
; CHECK: ; site 8: memset shared 32 bytes align 4: call void @llvm.memset.p3.i32(ptr addrspace(3) align 4 @global_smem,
; CHECK-NOT: ; site

target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@global_smem = external addrspace(3) global [0 x i8], align 16
@table = internal addrspace(1) constant [4 x i32] [i32 1, i32 2, i32 3, i32 4], align 4

; The shared-memory symbol is gone: the runtime's buffer, fetched once at the function's entry, replaces it.
; CHECK-NOT: @global_smem
; CHECK-LABEL: define void @memory(
; CHECK: [[BASE:%[0-9]+]] = call ptr @__tsim_shared_base()
; CHECK: [[SMEM:%tsim.shared]] = addrspacecast ptr [[BASE]] to ptr addrspace(3)
define ptx_kernel void @memory(ptr addrspace(1) %out, ptr %generic, i32 %i, float %f) {
; The stack and the constant table: plain host accesses.
; CHECK: [[STACK:%stack]] = alloca [8 x i32]
; CHECK: store i32 %i, ptr [[STACK]]
; CHECK: getelementptr [4 x i32], ptr addrspace(1) @table
; CHECK: load i32, ptr addrspace(1)
  %stack = alloca [8 x i32], align 4
  store i32 %i, ptr %stack, align 4
  %entry = getelementptr [4 x i32], ptr addrspace(1) @table, i32 0, i32 %i
  %constant = load i32, ptr addrspace(1) %entry, align 4

; CHECK: [[GADDR:%[0-9]+]] = ptrtoint ptr %generic to i64
; CHECK: call void @__tsim_load(ptr [[GSLOT:%tsim.slot[0-9]*]], i64 [[GADDR]], i32 8, i32 0)
; CHECK: %g = load double, ptr [[GSLOT]]
  %g = load double, ptr %generic, align 8

; A shared store of a half; its address is the runtime's buffer plus 6.
; CHECK: %sp = getelementptr i8, ptr addrspace(3) [[SMEM]], i32 6
; CHECK: [[SPADDR:%[0-9]+]] = ptrtoint ptr addrspace(3) %sp to i64
; CHECK: call void @__tsim_store(i64 [[SPADDR]], ptr %tsim.slot{{[0-9]*}}, i32 2, i32 1)
  %sp = getelementptr i8, ptr addrspace(3) @global_smem, i32 6
  store half 1.0, ptr addrspace(3) %sp, align 2

; ptrtoint of a shared pointer: its offset from the buffer.
; CHECK: [[RAW:%[0-9]+]] = ptrtoint ptr addrspace(3) %sp to i64
; CHECK: [[BASEINT:%[0-9]+]] = ptrtoint ptr addrspace(3) [[SMEM]] to i64
; CHECK: [[DIFF:%[0-9]+]] = sub i64 [[RAW]], [[BASEINT]]
; CHECK: %tsim.shared.offset = trunc i64 [[DIFF]] to i32
  %offset = ptrtoint ptr addrspace(3) %sp to i32

; Atomics: fadd (kAtomicFAdd = 10) on float bits, umax (8) on i64, atomic load (or (4) with 0) and store
; (exchange (0)); results come back as raw bits.
; CHECK: [[FBITS:%[0-9]+]] = bitcast float %f to i32
; CHECK: [[WIDE:%[0-9]+]] = zext i32 [[FBITS]] to i64
; CHECK: [[FOLD:%[0-9]+]] = call i64 @__tsim_atomic_rmw(i32 10, i64 %{{[0-9]+}}, i64 [[WIDE]], i32 4, i32 2)
; CHECK: [[FOLD32:%[0-9]+]] = trunc i64 [[FOLD]] to i32
; CHECK: %old = bitcast i32 [[FOLD32]] to float
; CHECK: %oldmax = call i64 @__tsim_atomic_rmw(i32 8, i64 %{{[0-9]+}}, i64 7, i32 8, i32 3)
; CHECK: call i64 @__tsim_atomic_rmw(i32 4, i64 %{{[0-9]+}}, i64 0, i32 4, i32 4)
; CHECK: [[OFFSET64:%[0-9]+]] = zext i32 %tsim.shared.offset to i64
; CHECK: call i64 @__tsim_atomic_rmw(i32 0, i64 %{{[0-9]+}}, i64 [[OFFSET64]], i32 4, i32 5)
  %old = atomicrmw fadd ptr addrspace(1) %out, float %f syncscope("device") acq_rel, align 4
  %o8 = getelementptr i8, ptr addrspace(1) %out, i64 8
  %oldmax = atomicrmw umax ptr addrspace(1) %o8, i64 7 monotonic, align 8
  %loaded = load atomic i32, ptr addrspace(1) %out monotonic, align 4
  store atomic i32 %offset, ptr addrspace(1) %out release, align 4

; cmpxchg: the old value from the runtime; success when it equals the expected bits.
; CHECK: [[CASOLD:%[0-9]+]] = call i64 @__tsim_atomic_cas(i64 %{{[0-9]+}}, i64 [[EXPECTED:%[0-9]+]], i64 %{{[0-9]+}}, i32 4, i32 6)
; CHECK: [[SUCCESS:%[0-9]+]] = icmp eq i64 [[CASOLD]], [[EXPECTED]]
; CHECK: %pair = insertvalue { i32, i1 } %{{[0-9]+}}, i1 [[SUCCESS]], 1
  %pair = cmpxchg ptr addrspace(1) %out, i32 %loaded, i32 %constant acq_rel acquire, align 4
  %won = extractvalue { i32, i1 } %pair, 1

; memcpy and memset touching global or shared memory go through the runtime; a copy within the stack does not.
; CHECK: call void @__tsim_memcpy(i64 %{{[0-9]+}}, i64 %{{[0-9]+}}, i64 64, i32 7)
; CHECK: call void @__tsim_memset(i64 %{{[0-9]+}}, i32 0, i64 32, i32 8)
; CHECK: call void @llvm.memcpy.p0.p0.i64(ptr align 4 %half, ptr align 4 [[STACK]], i64 16, i1 false)
  call void @llvm.memcpy.p1.p0.i64(ptr addrspace(1) align 16 %out, ptr align 16 %generic, i64 64, i1 false)
  call void @llvm.memset.p3.i32(ptr addrspace(3) align 4 @global_smem, i8 0, i32 32, i1 false)
  %half = getelementptr i8, ptr %stack, i64 16
  call void @llvm.memcpy.p0.p0.i64(ptr align 4 %half, ptr align 4 %stack, i64 16, i1 false)
  %wonbyte = zext i1 %won to i32
  %sum = add i32 %wonbyte, %constant
  store i32 %sum, ptr %stack, align 4
  ret void
}

declare void @llvm.memcpy.p1.p0.i64(ptr addrspace(1), ptr, i64, i1)
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
declare void @llvm.memset.p3.i32(ptr addrspace(3), i8, i32, i1)
