#include "backends/amdgpu/CodeObjectMetadata.h"

#include <llvm/BinaryFormat/ELF.h>
#include <llvm/BinaryFormat/MsgPackDocument.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Support/MemoryBuffer.h>

#include "ir/Error.h"

namespace tessera::backends::amdgpu {
namespace {

// The msgpack document of the code object's NT_AMDGPU_METADATA note.
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
      if (!doc.readFromBlob(llvm::StringRef(reinterpret_cast<const char*>(desc.data()), desc.size()), false)) {
        llvm::consumeError(std::move(err));
        throw Error(kernel + ": the AMDGPU metadata note is not msgpack");
      }
      llvm::consumeError(std::move(err));
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

// Field `key` of a kernel's metadata as a number; absent when the kernel has no such numeric field.
std::optional<int64_t> field(llvm::msgpack::MapDocNode& kernel, const char* key) {
  if (kernel.find(key) == kernel.end()) return std::nullopt;
  const llvm::msgpack::DocNode& value = kernel[key];
  if (value.getKind() == llvm::msgpack::Type::UInt) return static_cast<int64_t>(value.getUInt());
  if (value.getKind() == llvm::msgpack::Type::Int) return value.getInt();
  return std::nullopt;
}

}  // namespace

KernelResourceUsage codeObjectResources(const std::string& codeObject, const std::string& kernelName) {
  llvm::msgpack::Document doc = metadataOf(codeObject, kernelName);
  llvm::msgpack::MapDocNode kernel = kernelMetadata(doc, kernelName);
  return {field(kernel, ".vgpr_count"),      field(kernel, ".agpr_count"),
          field(kernel, ".vgpr_spill_count"), field(kernel, ".sgpr_count"),
          field(kernel, ".sgpr_spill_count"), field(kernel, ".group_segment_fixed_size"),
          field(kernel, ".private_segment_fixed_size")};
}

}  // namespace tessera::backends::amdgpu
