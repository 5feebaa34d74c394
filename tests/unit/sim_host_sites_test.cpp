// The rewriting's site table (jit/sim/HostModule.h): each rewritten instruction's kind, address space, width,
// tile-IR op and the kernel author's file:line, recovered from the optimized module's debug locations
// (backends/common/DebugLocations.h); and the errors for what the emulator does not model.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>

#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/SourceMgr.h>

#include "SimHostTestUtil.h"

namespace tessera::testing {
namespace {

using sim::AddressSpace;
using sim::Site;
using sim::SiteKind;

std::vector<Site> sitesOf(const sim::HostModule& host, SiteKind kind) {
  std::vector<Site> out;
  for (const Site& s : host.sites)
    if (s.kind == kind) out.push_back(s);
  return out;
}

// The 1-based line of `source` (a file under the source tree) holding `text`, and its column.
std::pair<unsigned, unsigned> findInSource(const std::string& source, const std::string& text) {
  std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/" + source);
  std::string line;
  for (unsigned n = 1; std::getline(in, line); ++n)
    if (size_t col = line.find(text); col != std::string::npos) return {n, static_cast<unsigned>(col + 1)};
  return {0, 0};
}

class VectorAddSites : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

// out = x + y (tessera/kernels/vector_add.h): both loads of one line and its store are 16-byte global
// accesses named after their ops, at the author's line and distinct columns.
TEST_P(VectorAddSites, NameTheirOpsAndTheAuthorsLine) {
  const auto& [target, arch] = GetParam();
  SimKernelCase c{"vector_add", kernels::vector_add_kernel(), {{"BLOCK", 1024}},
                  {alignedPointer(), alignedPointer(), alignedPointer(), int64_t(4096)}, 4};
  sim::HostModule host = sim::rewriteForHost(compileCase(c, target, arch)->optimizedLLVMIR);
  const auto [line, loadXColumn] = findInSource("frontend/tessera/kernels/vector_add.h", "load(x + offsets");
  ASSERT_NE(line, 0u);
  std::vector<Site> loads = sitesOf(host, SiteKind::Load), stores = sitesOf(host, SiteKind::Store);
  ASSERT_GE(loads.size(), 2u) << sim::formatSiteTable(host.sites);
  ASSERT_GE(stores.size(), 1u) << sim::formatSiteTable(host.sites);
  std::set<unsigned> loadColumns;
  for (const Site& s : loads) {
    EXPECT_EQ(s.space, AddressSpace::Global);
    EXPECT_EQ(s.bytes, 16u);
    EXPECT_EQ(s.align, 16u);
    EXPECT_EQ(s.op, "load");
    EXPECT_TRUE(s.file.ends_with("tessera/kernels/vector_add.h")) << s.file;
    EXPECT_EQ(s.line, line);
    // NVPTX's masked loads are predicated loads of 32-bit words (InlineAsmTable.h), which the emulator expands to a
    // load of the words; AMDGPU's load the floats.
    const std::string loaded = target == "nvptx" ? "load <4 x i32>, ptr addrspace(1)" : "load <4 x float>, ptr addrspace(1)";
    EXPECT_NE(s.instruction.find(loaded), std::string::npos) << s.instruction;
    loadColumns.insert(s.column);
  }
  EXPECT_EQ(loadColumns.size(), 2u) << "the loads of x and y are two ops\n" << sim::formatSiteTable(host.sites);
  for (const Site& s : stores) {
    EXPECT_EQ(s.space, AddressSpace::Global);
    EXPECT_EQ(s.bytes, 16u);
    EXPECT_EQ(s.op, "store");
    EXPECT_EQ(s.line, line);
    EXPECT_LT(s.column, loadXColumn);  // store( comes first on the line
  }
  EXPECT_EQ(host.sites.size(), loads.size() + stores.size()) << sim::formatSiteTable(host.sites);
}

INSTANTIATE_TEST_SUITE_P(Targets, VectorAddSites,
                         ::testing::Values(std::make_pair("nvptx", "sm_80"), std::make_pair("amdgpu", "gfx942")),
                         [](const auto& info) { return info.param.first; });

// A transposing copy (tests/lit/smem/transpose.tir's kernel, laid out by the JIT pipeline): the layout
// conversion writes and reads shared memory around one barrier, all attributed to the convert_layout op.
void transposeCopy(Ptr<f32> in, Ptr<f32> out) {
  Tensor i = arange(0, 64);
  Tensor x = load(in + expand_dims(i, 1) * 64 + expand_dims(i, 0));
  store(out + expand_dims(i, 1) + expand_dims(i, 0) * 64, x);
}

TEST(SimHostSites, SharedMemoryOfALayoutConversion) {
  for (const auto& [target, arch] : {std::make_pair("nvptx", "sm_90a"), std::make_pair("amdgpu", "gfx942")}) {
    SCOPED_TRACE(target);
    SimKernelCase c{"transpose", kernel("transpose", transposeCopy, {"in", "out"}), {},
                    {alignedPointer(), alignedPointer()}, 4};
    sim::HostModule host = sim::rewriteForHost(compileCase(c, target, arch)->optimizedLLVMIR);
    int sharedLoads = 0, sharedStores = 0;
    for (const Site& s : host.sites) {
      if (s.space != AddressSpace::Shared) continue;
      EXPECT_EQ(s.op, "convert_layout") << sim::formatSiteTable(host.sites);
      EXPECT_TRUE(s.file.ends_with("sim_host_sites_test.cpp")) << s.file;
      sharedLoads += s.kind == SiteKind::Load;
      sharedStores += s.kind == SiteKind::Store;
    }
    EXPECT_GT(sharedLoads, 0) << sim::formatSiteTable(host.sites);
    EXPECT_GT(sharedStores, 0) << sim::formatSiteTable(host.sites);
    std::vector<Site> barriers = sitesOf(host, SiteKind::Barrier);
    ASSERT_EQ(barriers.size(), 1u) << sim::formatSiteTable(host.sites);
    EXPECT_EQ(barriers[0].op, "convert_layout");
    // The shared-memory symbol is gone; the buffer comes from the runtime.
    EXPECT_EQ(host.module->getNamedGlobal(target == std::string("nvptx") ? "global_smem" : "tessera_lds"), nullptr);
    EXPECT_NE(host.module->getFunction("__tsim_shared_base"), nullptr);
  }
}

// ---- what the emulator does not model is a clear error, located at the op it came from

// The optimized NVPTX module of the tutorial vector add, in `ctx`.
std::unique_ptr<llvm::Module> optimizedVectorAdd(llvm::LLVMContext& ctx) {
  SimKernelCase c{"vector_add", kernels::vector_add_kernel(), {{"BLOCK", 1024}},
                  {alignedPointer(), alignedPointer(), alignedPointer(), int64_t(4096)}, 4};
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> m =
      llvm::parseAssemblyString(compileCase(c, "nvptx", "sm_80")->optimizedLLVMIR, diagnostic, ctx);
  EXPECT_TRUE(m) << diagnostic.getMessage().str();
  return m;
}

// Inserts `call` built by `make` before the kernel's first load (a plain one, or NVPTX's predicated load, an inline
// asm call), with that load's source location.
template <class Make>
void insertBeforeFirstLoad(llvm::Module& m, Make make) {
  for (llvm::Function& f : m)
    for (llvm::Instruction& i : llvm::instructions(f))
      if (auto* call = llvm::dyn_cast<llvm::CallInst>(&i); llvm::isa<llvm::LoadInst>(i) || (call && call->isInlineAsm())) {
        llvm::IRBuilder<> b(&i);
        make(b, m);
        return;
      }
  FAIL() << "no load";
}

TEST(SimHostErrors, UnknownIntrinsicNamesItTheKernelAndTheOp) {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = optimizedVectorAdd(ctx);
  insertBeforeFirstLoad(*m, [](llvm::IRBuilder<>& b, llvm::Module&) {
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0_popc, {}, {b.getInt32(1)});
  });
  const auto [line, column] = findInSource("frontend/tessera/kernels/vector_add.h", "load(x + offsets");
  try {
    sim::rewriteForHost(*m);
    FAIL() << "rewriting accepted llvm.nvvm.barrier0.popc";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("kernel 'vector_add'"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("the intrinsic 'llvm.nvvm.barrier0.popc'"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("op 'load'"), std::string::npos) << e.what();
    EXPECT_TRUE(e.location().file.ends_with("vector_add.h")) << e.what();
    EXPECT_EQ(e.location().line, line) << e.what();
  }
}

TEST(SimHostErrors, ExternalFunctionAndInlineAsmAreRejected) {
  {
    llvm::LLVMContext ctx;
    std::unique_ptr<llvm::Module> m = optimizedVectorAdd(ctx);
    insertBeforeFirstLoad(*m, [](llvm::IRBuilder<>& b, llvm::Module& mod) {
      b.CreateCall(mod.getOrInsertFunction("host_only_helper", b.getVoidTy()));
    });
    try {
      sim::rewriteForHost(*m);
      FAIL() << "rewriting accepted an external function";
    } catch (const Error& e) {
      EXPECT_NE(e.message().find("the external function 'host_only_helper'"), std::string::npos) << e.what();
    }
  }
  {
    llvm::LLVMContext ctx;
    std::unique_ptr<llvm::Module> m = optimizedVectorAdd(ctx);
    insertBeforeFirstLoad(*m, [](llvm::IRBuilder<>& b, llvm::Module&) {
      auto* type = llvm::FunctionType::get(b.getVoidTy(), false);
      b.CreateCall(type, llvm::InlineAsm::get(type, "membar.gl;", "", true));
    });
    try {
      sim::rewriteForHost(*m);
      FAIL() << "rewriting accepted inline asm";
    } catch (const Error& e) {
      EXPECT_NE(e.message().find("inline asm \"membar.gl;\" is not in backends/nvptx/InlineAsmTable.h"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(SimHostErrors, ModulesThatAreNotOneGpuKernel) {
  EXPECT_THROW(sim::rewriteForHost("target triple = \"x86_64-pc-linux-gnu\"\ndefine void @f() { ret void }\n"),
               Error);
  EXPECT_THROW(sim::rewriteForHost("target triple = \"nvptx64-nvidia-cuda\"\ndefine void @f() { ret void }\n"),
               Error);  // no kernel
  try {
    sim::rewriteForHost("this is not LLVM IR", "bad.ll");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.location().file, "bad.ll");
    EXPECT_EQ(e.location().line, 1u);
  }
}

// runtimeSymbols() names every function SimABI.h declares, so no runtime call the rewriting emits goes unresolved.
TEST(SimHostRuntimeSymbols, NameEveryFunctionOfSimABI) {
  std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/jit/sim/SimABI.h");
  std::set<std::string> declared;
  const std::regex declaration(R"(^[a-z][\w ]*[\w*]\s*\*?(__tsim_\w+)\()");
  std::smatch m;
  for (std::string line; std::getline(in, line);)
    if (std::regex_search(line, m, declaration)) declared.insert(m[1]);
  EXPECT_GE(declared.size(), 28u);
  std::set<std::string> named;
  for (const auto& [name, address] : sim::runtimeSymbols()) {
    named.insert(name);
    EXPECT_NE(address, nullptr) << name;
  }
  EXPECT_EQ(named, declared);
}

// The module in memory and its printed text rewrite to the same sites.
TEST(SimHostSites, TextAndModuleAgree) {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = optimizedVectorAdd(ctx);
  std::string text;
  llvm::raw_string_ostream os(text);
  m->print(os, nullptr);
  EXPECT_EQ(sim::formatSiteTable(sim::rewriteForHost(*m).sites), sim::formatSiteTable(sim::rewriteForHost(text).sites));
}

}  // namespace
}  // namespace tessera::testing
