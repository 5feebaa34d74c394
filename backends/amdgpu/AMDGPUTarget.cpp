#include "backends/amdgpu/AMDGPUTarget.h"

#include <cstdlib>
#include <filesystem>
#include <mutex>

#include <llvm/CodeGen/Passes.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/IPO/Internalize.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

#include "backends/amdgpu/AMDGPUHooks.h"
#include "backends/amdgpu/CodeObjectMetadata.h"
#include "backends/amdgpu/MfmaLayoutPolicy.h"
#include "backends/amdgpu/SelectionWorkarounds.h"
#include "backends/common/CodeGen.h"
#include "backends/common/ExternalTool.h"
#include "backends/common/LowerToLLVM.h"
#include "backends/common/OptimizeModule.h"
#include "backends/common/TargetMachineCache.h"
#include "ir/Error.h"

namespace tessera::backends::amdgpu {

namespace {

void initializeLLVM() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
  });
}

std::string checkedArch(const TargetOptions& opts) {
  std::string arch = opts.arch.empty() ? "gfx90a" : opts.arch;
  if (arch != "gfx90a" && arch != "gfx942")
    throw Error("amdgpu: unsupported arch '" + arch + "' (expected gfx90a or gfx942)");
  return arch;
}

std::unique_ptr<llvm::TargetMachine> makeTargetMachine(const std::string& arch) {
  initializeLLVM();
  std::string err;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kTriple, err);
  if (!target) throw Error("amdgpu: LLVM has no AMDGPU target: " + err);
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      kTriple, arch, "+wavefrontsize64", options, llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!tm) throw Error("amdgpu: cannot create a target machine for " + arch);
  return tm;
}

llvm::TargetMachine& targetMachine(const std::string& arch) {
  return cachedTargetMachine(std::string(kTriple) + " " + arch, [&] { return makeTargetMachine(arch); });
}

// The hooks declare the LDS array unsized; give it the function's smem_bytes so the code object's
// group_segment_fixed_size is the allocator's figure (launches then pass no dynamic LDS).
void sizeSharedMemory(llvm::Module& m, const ir::Function& f) {
  llvm::GlobalVariable* placeholder = m.getNamedGlobal(kSharedMemorySymbol);
  if (!placeholder) return;
  int64_t bytes = f.attrs().count("smem_bytes") && f.attrs().at("smem_bytes").isInt() ? f.attrs().at("smem_bytes").getInt() : 0;
  if (bytes <= 0)
    throw Error("amdgpu: kernel '" + f.name() + "' uses shared memory but has no positive 'smem_bytes' "
                "(run allocate-shared-memory)");
  if (bytes > kMaxLdsBytes)
    throw Error("amdgpu: kernel '" + f.name() + "' needs " + std::to_string(bytes) +
                " bytes of shared memory (LDS), more than the " + std::to_string(kMaxLdsBytes) +
                " a workgroup can have on gfx90a/gfx942; use smaller tiles");
  auto* ty = llvm::ArrayType::get(llvm::Type::getInt8Ty(m.getContext()), static_cast<uint64_t>(bytes));
  auto* g = new llvm::GlobalVariable(m, ty, false, llvm::GlobalValue::InternalLinkage, llvm::PoisonValue::get(ty), "",
                                     nullptr, llvm::GlobalValue::NotThreadLocal, kLdsAddrSpace);
  g->setAlignment(llvm::Align(16));
  placeholder->replaceAllUsesWith(g);
  placeholder->eraseFromParent();
  g->setName(kSharedMemorySymbol);
  // Keep the whole allocation: global optimizations would otherwise shrink the array to the bytes touched.
  llvm::appendToCompilerUsed(m, {g});
}

// Runs ld.lld -shared on the object; its output (stdout and stderr) goes into the error on failure.
std::string linkCodeObject(const std::string& object, const std::string& kernelName) {
  std::string lld = lldPath();
  if (lld.empty())
    throw Error("amdgpu: linking the code object needs ld.lld (looked for $TESSERA_LD_LLD, /usr/bin/ld.lld-19 and "
                "/usr/lib/llvm-19/bin/ld.lld; install lld-19)");
  TempDir dir("tessera_hsaco");
  const std::filesystem::path in = dir.path() / "kernel.o", out = dir.path() / "kernel.hsaco";
  writeFile(in, object);
  ToolResult r = runTool({lld, "-shared", "--no-undefined", "-o", out.string(), in.string()}, dir.path() / "lld.log");
  if (!r.exitedWithZero)
    throw Error("amdgpu: " + lld + " -shared failed to link the code object of kernel '" + kernelName + "':\n" +
                r.output);
  std::string hsaco = readFile(out);
  if (hsaco.size() < 4 || hsaco.compare(0, 4, "\x7f" "ELF") != 0)
    throw Error("amdgpu: " + lld + " produced no ELF code object for kernel '" + kernelName + "'");
  return hsaco;
}

// Machine CSE is left out: it merges the lane-derived LDS offsets the two key loops of attention each compute into
// one value live through the first loop, and at 128x128 blocks with 8 waves (256 VGPRs per wave) that spilled
// (benchmarks/amdgpu_resources: VGPR spills d 64 19 -> 0, causal 17 -> 0, d 128 156 -> 149, 165 -> 160; every
// other attention row 14-24 VGPRs fewer, the matmuls unchanged; the loops' instructions within 1%). On NVPTX it
// stays: without it ptxas gives the matmuls more registers and sm_80's 128x128 attention more spill bytes.
const std::vector<const void*>& codegenPassesLeftOut() {
  static const std::vector<const void*> passes{&llvm::MachineCSEID};
  return passes;
}

}  // namespace

std::string lldPath() {
  if (const char* env = std::getenv("TESSERA_LD_LLD"); env && *env) return std::filesystem::exists(env) ? env : "";
  for (const char* p : {"/usr/bin/ld.lld-19", "/usr/lib/llvm-19/bin/ld.lld"})
    if (std::filesystem::exists(p)) return p;
  return "";
}

std::unique_ptr<llvm::Module> AMDGPUTarget::lowerToLLVM(const ir::Function& f, llvm::LLVMContext& ctx,
                                                        const TargetOptions& opts) const {
  const std::string arch = checkedArch(opts);
  llvm::TargetMachine& tm = targetMachine(arch);
  AMDGPUHooks hooks(arch);
  LoweringOptions lo;
  lo.numWarps = opts.numWarps;
  lo.fastMath = opts.fastMath;
  if (opts.numWarps * 64 > 1024)
    throw Error("amdgpu: num_warps = " + std::to_string(opts.numWarps) +
                " gives more than 1024 work-items per workgroup (wave64); use at most 16");
  std::unique_ptr<llvm::Module> m = lowerFunction(f, ctx, hooks, lo);
  sizeSharedMemory(*m, f);
  m->setTargetTriple(kTriple);
  m->setDataLayout(tm.createDataLayout());
  // Code object v4: the version the Debian HIP 5.2 runtime loads.
  m->addModuleFlag(llvm::Module::Error, "amdhsa_code_object_version", uint32_t(400));
  return m;
}

std::string AMDGPUTarget::toolchainIdentity() const {
  return llvmIdentity() + "; ld.lld " + fileIdentity(lldPath());
}

void AMDGPUTarget::optimize(llvm::Module& m, const TargetOptions& opts) const {
  llvm::TargetMachine& tm = targetMachine(checkedArch(opts));
  m.setTargetTriple(kTriple);
  m.setDataLayout(tm.createDataLayout());
  if (!m.getModuleFlag("amdhsa_code_object_version"))
    m.addModuleFlag(llvm::Module::Error, "amdhsa_code_object_version", uint32_t(400));
  llvm::internalizeModule(m, [](const llvm::GlobalValue& g) {
    if (const auto* f = llvm::dyn_cast<llvm::Function>(&g))
      return f->getCallingConv() == llvm::CallingConv::AMDGPU_KERNEL || f->isDeclaration();
    return g.isDeclaration();
  });
  // Still O3: the AMDGPU target adds its own passes at several of O3's extension points, and the kernel pipeline
  // was chosen by its effect on PTX (docs/CompileTime.md). Compared with benchmarks/amdgpu_resources on gfx942, the
  // kernel pipeline's ISA is worse: AGPRs in every 8-wave kernel and more VGPR spills (attention 128x64 d 128 0 ->
  // 7, 128x128 d 64 19 -> 62, 128x128 d 128 156 -> 331).
  optimizeModule(m, tm, llvm::OptimizationLevel::O3, MemoryAccessVectorization::AsGpuCodegen);
  rewriteUnselectableIR(m);
}

std::string AMDGPUTarget::emit(llvm::Module& m, const TargetOptions& opts) const {
  llvm::TargetMachine& tm = targetMachine(checkedArch(opts));
  std::string kernelName;
  for (const llvm::Function& f : m)
    if (f.getCallingConv() == llvm::CallingConv::AMDGPU_KERNEL) kernelName = f.getName().str();
  return linkCodeObject(generateCode(m, tm, llvm::CodeGenFileType::ObjectFile, codegenPassesLeftOut()), kernelName);
}

std::string AMDGPUTarget::emitAssembly(const llvm::Module& m, const TargetOptions& opts) const {
  llvm::TargetMachine& tm = targetMachine(checkedArch(opts));
  std::unique_ptr<llvm::Module> copy = llvm::CloneModule(m);
  return generateCode(*copy, tm, llvm::CodeGenFileType::AssemblyFile, codegenPassesLeftOut());
}

std::string AMDGPUTarget::spillReport(const std::string& artifact, const std::string& kernelName) const {
  const KernelResourceUsage usage = codeObjectResources(artifact, kernelName);
  if (usage.vgprSpills.value_or(0) == 0) return "";
  return "spills registers (code object metadata: " + std::to_string(*usage.vgprSpills) + " VGPRs spilled, " +
         std::to_string(usage.scratchBytes.value_or(0)) + " B of scratch per work-item)";
}

std::vector<std::pair<std::string, int64_t>> AMDGPUTarget::artifactResources(const std::string& artifact,
                                                                             const std::string& kernelName) const {
  const KernelResourceUsage usage = codeObjectResources(artifact, kernelName);
  std::vector<std::pair<std::string, int64_t>> figures;
  for (const auto& [name, value] : {std::pair{"vgprs", usage.vgprs}, {"agprs", usage.agprs}, {"sgprs", usage.sgprs},
                                    {"vgpr_spills", usage.vgprSpills}, {"sgpr_spills", usage.sgprSpills},
                                    {"lds_bytes", usage.ldsBytes}, {"scratch_bytes", usage.scratchBytes}})
    if (value) figures.emplace_back(name, *value);
  return figures;
}

std::shared_ptr<const transforms::LayoutPolicy> AMDGPUTarget::layoutPolicy(const transforms::PassOptions& options) const {
  return std::make_shared<AMDGPULayoutPolicy>(options);
}

}  // namespace tessera::backends::amdgpu
