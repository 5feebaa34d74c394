// A hand-written NVPTX kernel that copies a box with TMA, for the emulator's tests (sim_host_tma_test,
// sim_descriptor_launch_test), and the inline asm of backends/nvptx/InlineAsmTable.h as LLVM IR spells it in a
// call (`call void asm sideeffect <this>(...)`), so that the emulator recognizes it.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <utility>

#include "backends/nvptx/InlineAsmTable.h"

namespace tessera::testing {

// The table's asm string and constraints of `operation`, as two LLVM IR string literals.
inline std::string asmOf(std::string_view operation) {
  for (const backends::nvptx::InlineAsmEntry& e : backends::nvptx::kInlineAsmTable) {
    if (e.operation != operation) continue;
    std::string text = "\"";
    for (char c : e.asmString) {
      if (c == '\n') text += "\\0A";
      else if (c == '\t') text += "\\09";
      else text += c;
    }
    return text + "\", \"" + std::string(e.constraints) + "\"";
  }
  ADD_FAILURE() << "no inline asm '" << operation << "'";
  return "";
}

// 128 threads: thread 0 initializes the barrier (shared offset 0), expects `expectBytes` and copies the 16 x 64
// f16 box at (x0, y0) to shared offset 1024; every thread waits, then copies 16 bytes of the box to `out`.
// The tensor map is at the generic address `desc`; with `descriptorParameter`, `desc` is instead a tensor
// descriptor parameter (256 bytes by value: backends/common/DescriptorParameter.h) with the map at byte 128, and thread 0 also
// stores its fields shape[0] and strides[0] to a third parameter, `fields`.
inline std::string tmaModule(int expectBytes, int x0, int y0, bool descriptorParameter = false) {
  const std::string params = descriptorParameter
                                 ? "ptr byval([256 x i8]) align 64 %desc, ptr addrspace(1) %out, ptr addrspace(1) %fields"
                                 : "ptr %desc, ptr addrspace(1) %out";
  const std::string storeFields = !descriptorParameter ? ""
                                                       : "  %shapeAt = getelementptr i8, ptr %desc, i64 8\n"
                                                         "  %shape0 = load i64, ptr %shapeAt\n"
                                                         "  store i64 %shape0, ptr addrspace(1) %fields\n"
                                                         "  %strideAt = getelementptr i8, ptr %desc, i64 24\n"
                                                         "  %stride0 = load i64, ptr %strideAt\n"
                                                         "  %field1 = getelementptr i64, ptr addrspace(1) %fields, i64 1\n"
                                                         "  store i64 %stride0, ptr addrspace(1) %field1\n";
  const std::string mapAt = descriptorParameter ? "  %mapAt = getelementptr i8, ptr %desc, i64 128\n"
                                                  "  %map = ptrtoint ptr %mapAt to i64\n"
                                                : "  %map = ptrtoint ptr %desc to i64\n";
  return "target datalayout = \"e-i64:64-i128:128-v16:16-v32:32-n16:32:64\"\n"
         "target triple = \"nvptx64-nvidia-cuda\"\n"
         "@global_smem = external addrspace(3) global [0 x i8], align 16\n"
         "declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n"
         "declare void @llvm.nvvm.barrier0()\n"
         "declare void @llvm.nvvm.mbarrier.init.shared(ptr addrspace(3), i32)\n"
         "define ptx_kernel void @tma_load(" + params + ") {\n"
         "entry:\n"
         "  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()\n"
         "  %box = getelementptr i8, ptr addrspace(3) @global_smem, i32 1024\n"
         "  %bar = ptrtoint ptr addrspace(3) @global_smem to i32\n"
         "  %boxAt = ptrtoint ptr addrspace(3) %box to i32\n"
         "  %first = icmp eq i32 %tid, 0\n"
         "  br i1 %first, label %init, label %synced\n"
         "init:\n" + storeFields +
         "  call void @llvm.nvvm.mbarrier.init.shared(ptr addrspace(3) @global_smem, i32 1)\n"
         "  br label %synced\n"
         "synced:\n"
         "  call void @llvm.nvvm.barrier0()\n"
         "  br i1 %first, label %issue, label %wait\n"
         "issue:\n"
         "  call void asm sideeffect " + asmOf("mbarrier.arrive.expect_tx") + "(i32 %bar, i32 " +
         std::to_string(expectBytes) + ")\n" + mapAt +
         "  call void asm sideeffect " + asmOf("cp.async.bulk.tensor.2d") + "(i32 %boxAt, i64 %map, i32 " +
         std::to_string(x0) + ", i32 " + std::to_string(y0) + ", i32 %bar)\n"
         "  br label %wait\n"
         "wait:\n"
         "  %done = call i32 asm sideeffect " + asmOf("mbarrier.try_wait.parity") + "(i32 %bar, i32 0)\n"
         "  %ready = icmp ne i32 %done, 0\n"
         "  br i1 %ready, label %read, label %wait\n"
         "read:\n"
         "  %offset = mul i32 %tid, 16\n"
         "  %src = getelementptr i8, ptr addrspace(3) %box, i32 %offset\n"
         "  %v = load <4 x i32>, ptr addrspace(3) %src, align 16\n"
         "  %dst = getelementptr i8, ptr addrspace(1) %out, i32 %offset\n"
         "  store <4 x i32> %v, ptr addrspace(1) %dst, align 16\n"
         "  ret void\n"
         "}\n";
}

}  // namespace tessera::testing
