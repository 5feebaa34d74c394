// The driver of the rewriting: find the kernel, switch the module to the host, run the steps of
// RewriteContext.h, reject whatever no step models, make the functions host functions and add the entry.
#include "jit/sim/HostModule.h"

#include <llvm/AsmParser/Parser.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/AttributeMask.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/TargetParser/Host.h>

#include "backends/amdgpu/AMDGPUHooks.h"
#include "backends/nvptx/InlineAsmTable.h"
#include "backends/nvptx/NVPTXHooks.h"
#include "ir/Error.h"
#include "jit/sim/HostTarget.h"
#include "jit/sim/RewriteContext.h"

namespace tessera::sim {

HostModule::HostModule() = default;
HostModule::HostModule(HostModule&&) noexcept = default;
HostModule& HostModule::operator=(HostModule&&) noexcept = default;
HostModule::~HostModule() = default;

namespace {

GpuTarget targetOf(const llvm::Module& m) {
  const std::string triple = m.getTargetTriple();
  if (triple.rfind("nvptx", 0) == 0) return GpuTarget::Nvptx;
  if (triple.rfind("amdgcn", 0) == 0) return GpuTarget::Amdgpu;
  throw Error("sim: module '" + m.getModuleIdentifier() + "' is not an NVPTX or AMDGPU module (triple '" + triple + "')");
}

bool isKernel(const llvm::Function& f) {
  return f.getCallingConv() == llvm::CallingConv::PTX_Kernel || f.getCallingConv() == llvm::CallingConv::AMDGPU_KERNEL;
}

llvm::Function& findKernel(llvm::Module& m) {
  llvm::Function* kernel = nullptr;
  for (llvm::Function& f : m) {
    if (f.getName().starts_with("__tsim_"))
      throw Error("sim: module '" + m.getModuleIdentifier() + "' has a function named '" + f.getName().str() +
                  "': the __tsim_ prefix belongs to the emulator's runtime");
    if (!isKernel(f) || f.isDeclaration()) continue;
    if (kernel)
      throw Error("sim: module '" + m.getModuleIdentifier() + "' has two kernels ('" + kernel->getName().str() +
                  "' and '" + f.getName().str() + "'); the emulator runs modules of one kernel");
    kernel = &f;
  }
  if (!kernel) throw Error("sim: module '" + m.getModuleIdentifier() + "' has no kernel");
  return *kernel;
}

// An inline asm of the backend's table (backends/nvptx/InlineAsmTable.h and its wgmma part, WgmmaAsm.h), by its
// exact string and constraints.
llvm::Value* inlineAsm(RewriteContext& rc, llvm::IRBuilder<>& b, llvm::CallInst& call) {
  const auto* asmValue = llvm::cast<llvm::InlineAsm>(call.getCalledOperand());
  const std::string text = asmValue->getAsmString();
  if (rc.target == GpuTarget::Amdgpu)
    rc.fail(call, "inline asm \"" + text + "\": the AMDGPU backend has no inline-asm table, and the emulator "
                  "never parses asm");
  if (std::optional<backends::nvptx::WgmmaAsm> wgmma = wgmmaAsmOf(call)) return nvptxWgmma(rc, b, call, *wgmma);
  const backends::nvptx::InlineAsmEntry* entry =
      backends::nvptx::findInlineAsm(text, asmValue->getConstraintString());
  if (!entry)
    rc.fail(call, "inline asm \"" + text + "\" is not in backends/nvptx/InlineAsmTable.h, and the emulator never "
                  "parses asm");
  if (llvm::Value* v = nvptxMbarrierInlineAsm(rc, b, call, entry->operation)) return v;
  if (llvm::Value* v = nvptxInlineAsm(rc, b, call, entry->operation)) return v;
  rc.fail(call, "inline asm '" + std::string(entry->operation) + "' (backends/nvptx/InlineAsmTable.h) has no "
                "emulation in jit/sim");
}

// Target-independent intrinsics the host compiles as they are: no memory access the runtime must see.
bool isHostPortable(const llvm::CallInst& call, const llvm::Function& callee) {
  if (!callee.isIntrinsic() || callee.isTargetIntrinsic()) return false;
  if (!call.mayReadOrWriteMemory()) return true;
  switch (callee.getIntrinsicID()) {
    case llvm::Intrinsic::lifetime_start: case llvm::Intrinsic::lifetime_end: case llvm::Intrinsic::assume:
    case llvm::Intrinsic::experimental_noalias_scope_decl: case llvm::Intrinsic::invariant_start:
    case llvm::Intrinsic::invariant_end: case llvm::Intrinsic::sideeffect: case llvm::Intrinsic::donothing:
      return true;
    default: return false;
  }
}

// The replacement keeps the call's name, so the host module reads like the GPU module.
void replaceCall(llvm::CallInst& call, llvm::Value* replacement) {
  if (!call.getType()->isVoidTy()) {
    if (auto* inst = llvm::dyn_cast<llvm::Instruction>(replacement); inst && !inst->hasName()) inst->takeName(&call);
    call.replaceAllUsesWith(replacement);
  }
  call.eraseFromParent();
}

void rewriteCall(RewriteContext& rc, llvm::CallInst& call) {
  llvm::IRBuilder<> b(&call);
  if (call.isInlineAsm()) return replaceCall(call, inlineAsm(rc, b, call));
  llvm::Function* callee = call.getCalledFunction();
  if (!callee) rc.fail(call, "an indirect call is not modelled");
  // Calls of defined functions stay; so do the runtime calls an earlier step inserted (findKernel made sure the
  // GPU module itself has no __tsim_ names).
  if (!callee->isDeclaration() || callee->getName().starts_with("__tsim_") || rewriteMemoryIntrinsic(rc, call)) return;
  llvm::Value* replacement = nullptr;
  if (callee->getIntrinsicID() == llvm::Intrinsic::trap)
    replacement = rc.call(b, TSIM_FUNCTION(__tsim_trap), {rc.site(call, SiteKind::Trap)});
  else
    replacement = rc.target == GpuTarget::Nvptx ? nvptxOperation(rc, b, call) : amdgpuOperation(rc, b, call);
  if (!replacement) replacement = hostMath(b, call);
  if (!replacement) {
    if (isHostPortable(call, *callee)) return;
    const std::string what = callee->isIntrinsic() ? "the intrinsic" : "the external function";
    rc.fail(call, "it calls " + what + " '" + callee->getName().str() + "', which the emulator does not model");
  }
  replaceCall(call, replacement);
}

void rewriteInstructions(RewriteContext& rc) {
  std::vector<llvm::Instruction*> work;
  for (llvm::Function& f : rc.module)
    for (llvm::Instruction& i : llvm::instructions(f))
      if (llvm::isa<llvm::LoadInst, llvm::StoreInst, llvm::AtomicRMWInst, llvm::AtomicCmpXchgInst, llvm::CallBase>(i))
        work.push_back(&i);
  for (llvm::Instruction* i : work) {
    if (auto* call = llvm::dyn_cast<llvm::CallInst>(i)) rewriteCall(rc, *call);
    else if (llvm::isa<llvm::CallBase>(i)) rc.fail(*i, "invoke and callbr are not modelled");
    else rewriteMemoryAccess(rc, *i);
  }
}

// What the GPU optimizer inferred about the memory a function or call touches (memory(argmem: ...), nocapture,
// nosync, ...) is false once its accesses and synchronizations are runtime calls taking addresses.
void dropMemoryInferences(llvm::Function& f) {
  llvm::AttributeMask inferred;
  for (llvm::Attribute::AttrKind k : {llvm::Attribute::Memory, llvm::Attribute::NoSync, llvm::Attribute::NoFree,
                                      llvm::Attribute::WillReturn, llvm::Attribute::NoCapture,
                                      llvm::Attribute::ReadOnly, llvm::Attribute::WriteOnly, llvm::Attribute::ReadNone})
    inferred.addAttribute(k);
  f.removeFnAttrs(inferred);
  for (unsigned i = 0; i < f.arg_size(); ++i) f.removeParamAttrs(i, inferred);
  for (llvm::User* user : f.users())
    if (auto* call = llvm::dyn_cast<llvm::CallBase>(user)) {
      call->removeFnAttrs(inferred);
      for (unsigned i = 0; i < call->arg_size(); ++i) call->removeParamAttrs(i, inferred);
    }
}

// Kernels become plain C functions, and nothing asks the host for a GPU's processor or features.
void makeHostFunctions(llvm::Module& m) {
  for (llvm::Function& f : llvm::make_early_inc_range(m)) {
    if (f.isDeclaration()) {
      if (f.use_empty()) f.eraseFromParent();
      continue;
    }
    dropMemoryInferences(f);
    if (isKernel(f)) f.setCallingConv(llvm::CallingConv::C);
    std::vector<std::string> gpuAttributes;
    for (const llvm::Attribute& a : f.getAttributes().getFnAttrs())
      if (a.isStringAttribute() && (a.getKindAsString() == "target-cpu" || a.getKindAsString() == "target-features" ||
                                    a.getKindAsString() == "uniform-work-group-size" ||
                                    a.getKindAsString().starts_with("amdgpu-")))
        gpuAttributes.push_back(a.getKindAsString().str());
    for (const std::string& a : gpuAttributes) f.removeFnAttr(a);
  }
  if (llvm::NamedMDNode* annotations = m.getNamedMetadata("nvvm.annotations")) m.eraseNamedMetadata(annotations);
}

void addEntry(llvm::Module& m, llvm::Function& kernel, const std::string& name) {
  llvm::LLVMContext& ctx = m.getContext();
  llvm::Type* ptr = llvm::PointerType::get(ctx, 0);
  auto* entry = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr}, false),
                                       llvm::GlobalValue::ExternalLinkage, name, m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
  std::vector<llvm::Value*> args;
  for (llvm::Argument& a : kernel.args()) {
    llvm::Value* value = b.CreateLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, entry->getArg(0), a.getArgNo()));
    // An aggregate passed by value (byval, AMDGPU byref: tensor descriptors) is its bytes, which the launch
    // keeps alive and the kernel only reads: the kernel gets their address, as a plain pointer on the host.
    if (a.hasByValAttr() || a.hasByRefAttr()) {
      a.removeAttr(llvm::Attribute::ByVal);
      a.removeAttr(llvm::Attribute::ByRef);
      // AMDGPU's byref parameters point into the constant address space (4): one flat space on the host.
      args.push_back(value->getType() == a.getType() ? value : b.CreateAddrSpaceCast(value, a.getType()));
    } else {
      args.push_back(b.CreateAlignedLoad(a.getType(), value, llvm::Align(1)));
    }
  }
  b.CreateCall(&kernel, args);
  b.CreateRetVoid();
}

// `host` holds the GPU module (and its context) on entry, the host module and its sites on return.
HostModule rewrite(HostModule host) {
  llvm::Module& m = *host.module;
  const GpuTarget target = targetOf(m);
  llvm::Function& kernel = findKernel(m);
  const llvm::DataLayout gpuLayout = m.getDataLayout();
  m.setTargetTriple(llvm::sys::getProcessTriple());
  m.setDataLayout(hostDataLayout());

  for (const llvm::Argument& a : kernel.args()) {
    if (a.getType()->isPointerTy()) host.pointerParameters.push_back(a.getArgNo());
    if (llvm::Type* bytes = a.hasByValAttr() ? a.getParamByValType() : a.hasByRefAttr() ? a.getParamByRefType() : nullptr)
      host.byValueParameters.emplace_back(a.getArgNo(), gpuLayout.getTypeAllocSize(bytes).getFixedValue());
  }
  if (const llvm::NamedMDNode* formats = m.getNamedMetadata("llvm.printf.fmts"))
    for (const llvm::MDNode* record : formats->operands())
      if (record->getNumOperands() == 1)
        if (auto* text = llvm::dyn_cast<llvm::MDString>(record->getOperand(0)))
          host.printfFormats.push_back(text->getString().str());

  RewriteContext rc(m, target, kernel, gpuLayout);
  if (target == GpuTarget::Nvptx) expandPredicatedAccesses(rc);
  rewriteAddressSpaces(rc, target == GpuTarget::Nvptx ? backends::nvptx::kSharedMemorySymbol
                                                      : backends::amdgpu::kSharedMemorySymbol);
  if (target == GpuTarget::Nvptx) {
    expandWgmmaGroups(rc);
    guardWgmmaRegisterReads(rc);
  }
  rewriteInstructions(rc);
  expandBFloat16Arithmetic(m);
  expandBFloat16Truncations(m);
  makeHostFunctions(m);

  host.target = rc.targetName();
  host.kernel = kernel.getName().str();
  host.entry = host.kernel + ".tsim_entry";
  addEntry(m, kernel, host.entry);
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(m, &os))
    throw Error("sim: internal error: rewriting kernel '" + host.kernel + "' produced invalid host IR: " + os.str());
  host.sites = std::move(rc.sites);
  return host;
}

// A switch, not a table: a SiteKind added without a name is a compiler warning, not a read past the end.
const char* siteKindName(SiteKind k) {
  switch (k) {
    case SiteKind::Load: return "load";
    case SiteKind::Store: return "store";
    case SiteKind::AtomicRMW: return "atomic_rmw";
    case SiteKind::AtomicCAS: return "atomic_cas";
    case SiteKind::MemSet: return "memset";
    case SiteKind::MemCopy: return "memcpy";
    case SiteKind::Barrier: return "barrier";
    case SiteKind::WarpSync: return "warp_sync";
    case SiteKind::Shuffle: return "shuffle";
    case SiteKind::Vote: return "vote";
    case SiteKind::Bpermute: return "bpermute";
    case SiteKind::LdMatrix: return "ldmatrix";
    case SiteKind::StMatrix: return "stmatrix";
    case SiteKind::Mma: return "mma";
    case SiteKind::Mfma: return "mfma";
    case SiteKind::CpAsync: return "cp_async";
    case SiteKind::CpAsyncCommit: return "cp_async_commit";
    case SiteKind::CpAsyncWait: return "cp_async_wait";
    case SiteKind::Wgmma: return "wgmma";
    case SiteKind::WgmmaFence: return "wgmma_fence";
    case SiteKind::WgmmaCommit: return "wgmma_commit";
    case SiteKind::WgmmaWait: return "wgmma_wait";
    case SiteKind::WgmmaRegisterRead: return "wgmma_register_read";
    case SiteKind::Mbarrier: return "mbarrier";
    case SiteKind::BulkTensorCopy: return "bulk_tensor_copy";
    case SiteKind::BulkTensorStore: return "bulk_tensor_store";
    case SiteKind::Print: return "print";
    case SiteKind::Assert: return "assert";
    case SiteKind::Trap: return "trap";
  }
  return "?";
}

const char* spaceName(AddressSpace s) {
  switch (s) {
    case AddressSpace::Generic: return "generic";
    case AddressSpace::Global: return "global";
    case AddressSpace::Shared: return "shared";
    case AddressSpace::Constant: return "constant";
  }
  return "?";
}

}  // namespace

HostModule rewriteForHost(const std::string& gpuModuleText, const std::string& name) {
  HostModule host;
  host.context = std::make_unique<llvm::LLVMContext>();
  llvm::SMDiagnostic diagnostic;
  host.module = llvm::parseAssemblyString(gpuModuleText, diagnostic, *host.context);
  if (!host.module)
    throw Error("sim: cannot parse the GPU module's LLVM IR: " + diagnostic.getMessage().str(),
                Location{name, static_cast<unsigned>(diagnostic.getLineNo()),
                         static_cast<unsigned>(diagnostic.getColumnNo() + 1)});
  return rewrite(std::move(host));
}

HostModule rewriteForHost(const llvm::Module& gpuModule) {
  llvm::SmallVector<char, 0> bitcode;
  llvm::raw_svector_ostream os(bitcode);
  llvm::WriteBitcodeToFile(gpuModule, os);
  HostModule host;
  host.context = std::make_unique<llvm::LLVMContext>();
  llvm::Expected<std::unique_ptr<llvm::Module>> m = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(llvm::StringRef(bitcode.data(), bitcode.size()), gpuModule.getModuleIdentifier()),
      *host.context);
  if (!m) throw Error("sim: cannot copy module '" + gpuModule.getModuleIdentifier() + "': " + toString(m.takeError()));
  host.module = std::move(*m);
  return rewrite(std::move(host));
}

std::string formatSiteTable(const SiteTable& sites) {
  std::string text;
  for (size_t i = 0; i < sites.size(); ++i) {
    const Site& s = sites[i];
    text += "site " + std::to_string(i) + ": " + siteKindName(s.kind);
    if (s.bytes) text += " " + std::string(spaceName(s.space)) + " " + std::to_string(s.bytes) + " bytes";
    if (s.align) text += " align " + std::to_string(s.align);
    if (!s.op.empty()) text += ", op '" + s.op + "'";
    if (s.line) text += " at " + Location{s.file, s.line, s.column}.str();
    text += ": " + s.instruction + "\n";
  }
  return text;
}

}  // namespace tessera::sim
