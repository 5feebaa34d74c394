// Every entry of backends/nvptx/InlineAsmTable.h is PTX that ptxas accepts for sm_90a: each is called in a kernel
// of its own, with operands of the types its constraints name, and the module goes through the NVPTX target's
// code generation. Entries no kernel of the backend emits yet (the cluster's multicast copies and remote mbarrier
// arrivals) are checked here before any kernel depends on them. Skips the assembly where ptxas is absent.
#include <gtest/gtest.h>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "NVPTXTestUtil.h"
#include "backends/nvptx/InlineAsmTable.h"

namespace tessera::testing {
namespace {

llvm::Type* constraintType(llvm::LLVMContext& ctx, std::string_view code) {
  switch (code.back()) {
    case 'r': return llvm::Type::getInt32Ty(ctx);
    case 'l': return llvm::Type::getInt64Ty(ctx);
    case 'h': return llvm::Type::getInt16Ty(ctx);
    case 'b': return llvm::Type::getInt1Ty(ctx);
    case 'f': return llvm::Type::getFloatTy(ctx);
    case 'd': return llvm::Type::getDoubleTy(ctx);
  }
  ADD_FAILURE() << "constraint '" << code << "'";
  return llvm::Type::getInt32Ty(ctx);
}

// A kernel calling `entry` with its inputs from the kernel's parameters (i1 ones from a comparison of an i32) and
// its outputs stored to the first parameter.
void addKernel(llvm::Module& m, const backends::nvptx::InlineAsmEntry& entry, unsigned index) {
  llvm::LLVMContext& ctx = m.getContext();
  std::vector<llvm::Type*> outputs, inputs;
  std::string constraints(entry.constraints);
  for (size_t start = 0; start <= constraints.size();) {
    size_t end = constraints.find(',', start);
    if (end == std::string::npos) end = constraints.size();
    std::string_view code(constraints.data() + start, end - start);
    start = end + 1;
    if (code.empty() || code.starts_with("~")) continue;
    if (code.starts_with("=")) outputs.push_back(constraintType(ctx, code));
    else inputs.push_back(constraintType(ctx, code));
  }
  std::vector<llvm::Type*> params{llvm::PointerType::get(ctx, 1)};
  for (llvm::Type* t : inputs) params.push_back(t->isIntegerTy(1) ? llvm::Type::getInt32Ty(ctx) : t);
  auto* kernel = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), params, false),
                                        llvm::Function::ExternalLinkage, "entry" + std::to_string(index), m);
  kernel->setCallingConv(llvm::CallingConv::PTX_Kernel);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", kernel));
  std::vector<llvm::Value*> args;
  for (unsigned i = 0; i < inputs.size(); ++i) {
    llvm::Value* p = kernel->getArg(i + 1);
    args.push_back(inputs[i]->isIntegerTy(1) ? b.CreateICmpNE(p, b.getInt32(0)) : p);
  }
  llvm::Type* result = outputs.empty()      ? llvm::Type::getVoidTy(ctx)
                       : outputs.size() == 1 ? outputs[0]
                                             : llvm::StructType::get(ctx, outputs);
  auto* asmType = llvm::FunctionType::get(result, inputs, false);
  llvm::Value* value = b.CreateCall(asmType, llvm::InlineAsm::get(asmType, entry.asmString, entry.constraints, true),
                                    args);
  for (unsigned i = 0; i < outputs.size(); ++i) {
    llvm::Value* out = outputs.size() == 1 ? value : b.CreateExtractValue(value, {i});
    b.CreateStore(out, b.CreateConstGEP1_32(b.getInt8Ty(), kernel->getArg(0), 8 * i));
  }
  b.CreateRetVoid();
}

TEST(NvptxInlineAsmTable, EveryEntryAssemblesForSm90a) {
  llvm::LLVMContext ctx;
  auto m = std::make_unique<llvm::Module>("asm_table", ctx);
  unsigned index = 0;
  for (const backends::nvptx::InlineAsmEntry& entry : backends::nvptx::kInlineAsmTable) addKernel(*m, entry, index++);
  std::unique_ptr<backends::Target> target = backends::createTarget("nvptx");
  backends::TargetOptions opts;
  opts.arch = "sm_90a";
  const std::string ptx = target->emit(*m, opts);
  // Each entry's instructions are in the PTX as the table spells them (their first line, operands substituted).
  for (const char* instruction : {"mapa.shared::cluster.u32", "mbarrier.arrive.release.cluster.shared::cluster.b64",
                                  "mbarrier::complete_tx::bytes.multicast::cluster"})
    EXPECT_NE(ptx.find(instruction), std::string::npos) << instruction;
  if (!havePtxas()) GTEST_SKIP() << "no ptxas at " << kPtxas;
  PtxasReport r = runPtxas(ptx, "sm_90a");
  EXPECT_EQ(r.status, 0) << r.log << "\n" << ptx;
}

}  // namespace
}  // namespace tessera::testing
