#include "backends/nvptx/NVPTXTarget.h"

#include "backends/nvptx/MmaLayoutPolicy.h"

#include <cstdlib>
#include <filesystem>
#include <mutex>

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Module.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/IPO/Internalize.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include "backends/common/CodeGen.h"
#include "backends/common/LowerToLLVM.h"
#include "backends/common/OptimizeModule.h"
#include "backends/common/TargetMachineCache.h"
#include "backends/nvptx/NVPTXHooks.h"
#include "backends/nvptx/SharedMemoryLimits.h"
#include "backends/nvptx/StartPasses.h"
#include "ir/Error.h"

namespace tessera::backends::nvptx {

namespace {

constexpr const char* kTriple = "nvptx64-nvidia-cuda";

void initializeLLVM() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

std::string checkedArch(const TargetOptions& opts) {
  std::string arch = opts.arch.empty() ? "sm_90a" : opts.arch;
  if (arch != "sm_80" && arch != "sm_86" && arch != "sm_89" && arch != "sm_90" && arch != "sm_90a")
    throw Error("nvptx: unsupported arch '" + arch + "' (expected sm_80, sm_86, sm_89, sm_90 or sm_90a)");
  return arch;
}

// sm_90a -> 90: the number __nvvm_reflect("__CUDA_ARCH") answers in tenths.
unsigned smVersion(const std::string& arch) { return static_cast<unsigned>(std::stoul(arch.substr(3))); }

std::unique_ptr<llvm::TargetMachine> makeTargetMachine(const std::string& arch) {
  initializeLLVM();
  std::string err;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kTriple, err);
  if (!target) throw Error("nvptx: LLVM has no NVPTX target: " + err);
  llvm::TargetOptions options;
  // Default, not Aggressive: NVPTX's code generator then runs early-cse where Aggressive runs GVN twice. After our
  // kernel pipeline (which ends with GVN) those GVNs found nothing, but their load queries cost a third of PTX
  // emission on the matmuls (docs/CompileTime.md). The PTX of every compile_time and kernel_resources case is the
  // same but for three fp8 matmuls, whose blocks are laid out differently (4 lines shorter, 0-1 register fewer).
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      kTriple, arch, "+ptx80", options, std::nullopt, std::nullopt, llvm::CodeGenOptLevel::Default));
  if (!tm) throw Error("nvptx: cannot create a target machine for " + arch);
  return tm;
}

llvm::TargetMachine& targetMachine(const std::string& arch) {
  return cachedTargetMachine(std::string(kTriple) + " " + arch, [&] { return makeTargetMachine(arch); });
}

// Links the libdevice functions the module calls, then internalizes everything but the kernels.
void linkLibdevice(llvm::Module& m) {
  bool needed = false;
  for (const llvm::Function& f : m)
    if (f.isDeclaration() && f.getName().starts_with("__nv_")) needed = true;
  if (needed) {
    std::string path = libdevicePath();
    if (path.empty()) {
      std::string names;
      for (const llvm::Function& f : m)
        if (f.isDeclaration() && f.getName().starts_with("__nv_")) names += " " + f.getName().str();
      throw Error("nvptx: the kernel needs libdevice for" + names +
                  ", but /usr/local/cuda/nvvm/libdevice/libdevice.10.bc was not found (set TESSERA_LIBDEVICE)");
    }
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer) throw Error("nvptx: cannot read libdevice at " + path);
    // Lazily: the linker materializes only the functions the kernel calls (and theirs). Parsing all of libdevice
    // up front was a quarter of the compile of a matmul with a GELU epilogue, which calls one function of it.
    auto lib = llvm::getOwningLazyBitcodeModule(std::move(*buffer), m.getContext());
    if (!lib) throw Error("nvptx: cannot parse libdevice at " + path + ": " + llvm::toString(lib.takeError()));
    (*lib)->setTargetTriple(m.getTargetTriple());
    (*lib)->setDataLayout(m.getDataLayout());
    if (llvm::Linker::linkModules(m, std::move(*lib), llvm::Linker::Flags::LinkOnlyNeeded))
      throw Error("nvptx: linking libdevice failed");
    // libdevice asks __nvvm_reflect("__CUDA_FTZ"); answer "no flush-to-zero".
    m.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", uint32_t(0));
  }
  llvm::internalizeModule(m, [](const llvm::GlobalValue& g) {
    if (const auto* f = llvm::dyn_cast<llvm::Function>(&g)) return f->getCallingConv() == llvm::CallingConv::PTX_Kernel || f->isDeclaration();
    return g.getName() == kSharedMemorySymbol || g.isDeclaration();
  });
}

}  // namespace

std::string libdevicePath() {
  if (const char* env = std::getenv("TESSERA_LIBDEVICE")) return std::filesystem::exists(env) ? env : "";
  const char* standard = "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc";
  return std::filesystem::exists(standard) ? standard : "";
}

std::unique_ptr<llvm::Module> NVPTXTarget::lowerToLLVM(const ir::Function& f, llvm::LLVMContext& ctx,
                                                       const TargetOptions& opts) const {
  const std::string arch = checkedArch(opts);
  llvm::TargetMachine& tm = targetMachine(arch);
  const int64_t sharedBytes = f.attrs().count("smem_bytes") ? f.attrs().at("smem_bytes").getInt() : 0;
  NVPTXHooks hooks(/*tensorMaps=*/arch == "sm_90" || arch == "sm_90a", /*asyncDots=*/arch == "sm_90a",
                   sharedBytes > 0 ? programsPerMultiprocessor(arch, sharedBytes) : 0);
  LoweringOptions lo;
  lo.numWarps = opts.numWarps;
  lo.fastMath = opts.fastMath;
  std::unique_ptr<llvm::Module> m = lowerFunction(f, ctx, hooks, lo);
  m->setTargetTriple(kTriple);
  m->setDataLayout(tm.createDataLayout());
  return m;
}

std::string NVPTXTarget::toolchainIdentity() const {
  return llvmIdentity() + "; libdevice " + fileIdentity(libdevicePath());
}

void NVPTXTarget::optimize(llvm::Module& m, const TargetOptions& opts) const {
  llvm::TargetMachine& tm = targetMachine(checkedArch(opts));
  m.setTargetTriple(kTriple);
  m.setDataLayout(tm.createDataLayout());
  linkLibdevice(m);
  answerReflectQueries(m, smVersion(checkedArch(opts)));
  addIdRanges(m);
  optimizeKernelModule(m, tm, MemoryAccessVectorization::AsGpuCodegen);
}

std::string NVPTXTarget::emit(llvm::Module& m, const TargetOptions& opts) const {
  return generateCode(m, targetMachine(checkedArch(opts)), llvm::CodeGenFileType::AssemblyFile);
}

std::string NVPTXTarget::emitAssembly(const llvm::Module& m, const TargetOptions& opts) const {
  std::unique_ptr<llvm::Module> copy = llvm::CloneModule(m);
  return emit(*copy, opts);
}

int64_t NVPTXTarget::maxSharedBytes(const std::string& arch) const {
  const std::optional<SharedMemoryLimits> limits = sharedMemoryLimits(arch.empty() ? defaultArch() : arch);
  return limits ? limits->perProgram : 0;
}

int64_t NVPTXTarget::sharedBytesPerMultiprocessor(const std::string& arch) const {
  const std::optional<SharedMemoryLimits> limits = sharedMemoryLimits(arch.empty() ? defaultArch() : arch);
  return limits ? limits->perMultiprocessor : 0;
}

std::shared_ptr<const transforms::LayoutPolicy> NVPTXTarget::layoutPolicy(const transforms::PassOptions& options) const {
  return std::make_shared<NVPTXLayoutPolicy>(options);
}

}  // namespace tessera::backends::nvptx
