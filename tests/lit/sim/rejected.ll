; What the emulator does not model is an error naming the kernel and the callee (or asm), never a guess:
; unknown intrinsics, external functions, and inline asm that is not in backends/nvptx/InlineAsmTable.h.
; RUN: sed 's/CALL/call i32 @llvm.nvvm.barrier0.popc(i32 1)/' %s > %t.intrinsic.ll
; RUN: not %tessera-translate --emit=sim-host %t.intrinsic.ll 2>&1 | FileCheck %s --check-prefix=INTRINSIC
; INTRINSIC: error: sim: cannot emulate kernel 'k' (nvptx): it calls the intrinsic 'llvm.nvvm.barrier0.popc', which the emulator does not model
; RUN: sed 's/CALL/call i32 @host_helper(i32 1)/' %s > %t.external.ll
; RUN: not %tessera-translate --emit=sim-host %t.external.ll 2>&1 | FileCheck %s --check-prefix=EXTERNAL
; EXTERNAL: error: sim: cannot emulate kernel 'k' (nvptx): it calls the external function 'host_helper', which the emulator does not model
; RUN: sed 's/CALL/call i32 asm sideeffect "mov.u32 $0, %%clock;", "=r"()/' %s > %t.asm.ll
; RUN: not %tessera-translate --emit=sim-host %t.asm.ll 2>&1 | FileCheck %s --check-prefix=ASM
; ASM: error: sim: cannot emulate kernel 'k' (nvptx): inline asm "mov.u32 $0, %clock;" is not in backends/nvptx/InlineAsmTable.h, and the emulator never parses asm
; RUN: sed 's/CALL/call i32 @llvm.nvvm.barrier0.popc(i32 1)/; s/nvptx64-nvidia-cuda/x86_64-pc-linux-gnu/' %s > %t.host.ll
; RUN: not %tessera-translate --emit=sim-host %t.host.ll 2>&1 | FileCheck %s --check-prefix=HOST
; HOST: error: sim: module '{{.*}}' is not an NVPTX or AMDGPU module (triple 'x86_64-pc-linux-gnu')

target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @k(ptr addrspace(1) %out) {
  %v = CALL
  store i32 %v, ptr addrspace(1) %out, align 4
  ret void
}

declare i32 @llvm.nvvm.barrier0.popc(i32)
declare i32 @host_helper(i32)
