// What the AMDGPU backend says each standard kernel uses on gfx942, the counterpart of kernel_resources' ptxas
// table: VGPRs, AGPRs, VGPR spills, SGPRs, SGPR spills, LDS and scratch bytes per work-item, read from the code
// object's metadata note (the "amdhsa.kernels" map LLVM writes into every HSA code object), for the standard
// matmul configurations (f16, bf16) and the attention forward configurations (f16, causal and not). No GPU and no
// ROCm tool are needed: the JIT emits the code object in process.
//
//   amdgpu_resources [--csv FILE] [--only SUBSTRING] [--runs N]
#include <cstdio>
#include <string>

#include <llvm/BinaryFormat/ELF.h>
#include <llvm/BinaryFormat/MsgPackDocument.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>

#include "backends/Target.h"
#include "benchmarks/support/BenchOptions.h"
#include "benchmarks/support/CaseRunner.h"
#include "benchmarks/support/KernelCases.h"
#include "benchmarks/support/ResultTable.h"
#include "ir/Error.h"
#include "jit/Compiler.h"

namespace {

using namespace tessera;
using namespace tessera::bench;

constexpr const char* kArch = "gfx942";

std::vector<KernelCase> resourceCases() {
  std::vector<KernelCase> cases;
  for (const char* dtype : {"f16", "bf16"})
    for (const MatmulConfig& config : standardMatmulConfigs()) cases.push_back(matmulCase(dtype, config, kArch));
  for (const AttentionConfig& config : standardAttentionConfigs()) cases.push_back(attentionCase("f16", config, kArch));
  return cases;
}

// The code object's metadata: the msgpack document of its NT_AMDGPU_METADATA note.
llvm::msgpack::Document metadataOf(const std::string& codeObject, const std::string& kernel) {
  auto object = llvm::object::ELF64LEObjectFile::create(
      llvm::MemoryBufferRef(llvm::StringRef(codeObject.data(), codeObject.size()), kernel));
  if (!object) throw Error(kernel + ": the code object is not a 64-bit ELF: " + llvm::toString(object.takeError()));
  const auto& elf = object->getELFFile();
  auto sections = elf.sections();
  if (!sections) throw Error(kernel + ": " + llvm::toString(sections.takeError()));
  for (const auto& section : *sections) {
    if (section.sh_type != llvm::ELF::SHT_NOTE) continue;
    llvm::Error err = llvm::Error::success();
    for (const auto& note : elf.notes(section, err)) {
      if (note.getName() != "AMDGPU" || note.getType() != llvm::ELF::NT_AMDGPU_METADATA) continue;
      llvm::ArrayRef<uint8_t> desc = note.getDesc(section.sh_addralign);
      llvm::msgpack::Document doc;
      if (!doc.readFromBlob(llvm::StringRef(reinterpret_cast<const char*>(desc.data()), desc.size()), false))
        throw Error(kernel + ": the AMDGPU metadata note is not msgpack");
      return doc;
    }
    if (err) throw Error(kernel + ": " + llvm::toString(std::move(err)));
  }
  throw Error(kernel + ": the code object has no AMDGPU metadata note");
}

// The first kernel's map of the metadata ("amdhsa.kernels"[0]).
llvm::msgpack::MapDocNode kernelMetadata(llvm::msgpack::Document& doc, const std::string& kernel) {
  if (doc.getRoot().getKind() == llvm::msgpack::Type::Map) {
    llvm::msgpack::MapDocNode root = doc.getRoot().getMap();
    auto kernels = root.find("amdhsa.kernels");
    if (kernels != root.end() && kernels->second.getKind() == llvm::msgpack::Type::Array &&
        !kernels->second.getArray().empty() &&
        kernels->second.getArray()[0].getKind() == llvm::msgpack::Type::Map)
      return kernels->second.getArray()[0].getMap();
  }
  throw Error(kernel + ": the AMDGPU metadata has no \"amdhsa.kernels\" entry");
}

// Field `key` of a kernel's metadata (".vgpr_count"...), as a number; "-" when the kernel has no such field.
std::string field(llvm::msgpack::MapDocNode& kernel, const char* key) {
  if (kernel.find(key) == kernel.end()) return "-";
  const llvm::msgpack::DocNode& value = kernel[key];
  if (value.getKind() == llvm::msgpack::Type::UInt) return std::to_string(value.getUInt());
  if (value.getKind() == llvm::msgpack::Type::Int) return std::to_string(value.getInt());
  return "-";
}

}  // namespace

int main(int argc, char** argv) {
  const BenchOptions opts = parseBenchOptions(
      argc, argv, "VGPRs, AGPRs, spills, LDS and scratch of the standard kernels on gfx942, from the code object.");
  std::printf("kernel resources on %s from the code object's amdhsa.kernels metadata (LLVM %s)\n", kArch,
              LLVM_VERSION_STRING);
  ResultTable table({"case", "vgprs", "agprs", "vgpr_spills", "sgprs", "sgpr_spills", "lds_B", "scratch_B"});
  std::unique_ptr<backends::Target> target = backends::createTarget("amdgpu");
  return measureCases(resourceCases(), opts, table, [&](const KernelCase& c) {
    const std::unique_ptr<ir::Module> traced = traceSpecialized(c);
    const jit::CompiledKernel k = jit::compile(*traced->functions().at(0), *target, c.targetOptions());
    llvm::msgpack::Document doc = metadataOf(k.binary, c.name());
    llvm::msgpack::MapDocNode kernel = kernelMetadata(doc, c.name());
    std::vector<std::string> row{c.name()};
    for (const char* key : {".vgpr_count", ".agpr_count", ".vgpr_spill_count", ".sgpr_count", ".sgpr_spill_count",
                            ".group_segment_fixed_size", ".private_segment_fixed_size"})
      row.push_back(field(kernel, key));
    return row;
  });
}
