#include "jit/aot/Export.h"

#include <algorithm>
#include <regex>

#include "backends/Target.h"
#include "backends/common/ExternalTool.h"
#include "ir/Error.h"
#include "ir/IR.h"
#include "jit/Compiler.h"
#include "jit/Specialization.h"
#include "jit/aot/CSource.h"
#include "jit/aot/Ptxas.h"

namespace tessera::jit::aot {

namespace {

bool isCIdentifier(const std::string& s) {
  static const std::regex identifier("[A-Za-z_][A-Za-z0-9_]*");
  static const std::set<std::string> keywords = {
      "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
      "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
      "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "bool",
      "true", "false", "_Bool", "_Thread_local", "_Atomic", "_Alignas", "_Alignof", "_Generic", "_Noreturn",
      "_Static_assert", "_Complex", "_Imaginary"};
  return std::regex_match(s, identifier) && !keywords.count(s);
}

// The launch function's own parameter and local names, which a kernel parameter must not shadow.
bool collidesWithGeneratedNames(const std::string& s) {
  return s == "stream" || s == "grid_x" || s == "grid_y" || s == "grid_z" || s.rfind("aot_", 0) == 0;
}

std::string constantText(const ConstValue& v) {
  return std::holds_alternative<int64_t>(v) ? std::to_string(std::get<int64_t>(v)) : std::to_string(std::get<double>(v));
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "none" : out;
}

// The specialization facts of each runtime parameter, from the option's parameter names.
std::vector<ArgFacts> factsFromNames(const KernelDef& kernel, const std::vector<ParamInfo>& params,
                                     const ExportOptions& o) {
  std::vector<std::string> known;
  for (const ParamInfo& p : params) known.push_back(p.name);
  auto check = [&](const std::set<std::string>& names, const char* option) {
    for (const std::string& n : names)
      if (std::find(known.begin(), known.end(), n) == known.end())
        throw Error("aot: " + std::string(option) + " names '" + n + "', which is not a runtime parameter of kernel '" +
                    kernel.name() + "' (its runtime parameters: " + joined(known) + ")");
  };
  check(o.divisibleBy16, "divisible-by-16");
  check(o.divisibleBy8, "divisible-by-8");
  check(o.equalTo1, "equal-to-1");
  std::vector<ArgFacts> facts;
  for (const ParamInfo& p : params) {
    ArgFacts f;
    f.divisibleBy16 = o.divisibleBy16.count(p.name) > 0;
    f.divisibleBy8 = o.divisibleBy8.count(p.name) > 0;
    f.equalTo1 = o.equalTo1.count(p.name) > 0;
    if (int(f.divisibleBy16) + int(f.divisibleBy8) + int(f.equalTo1) > 1)
      throw Error("aot: kernel '" + kernel.name() + "': parameter '" + p.name + "' is given more than one of "
                  "divisible-by-16, divisible-by-8 and equal-to-1");
    // offsets32 stays off: an exported kernel is launched on buffers of sizes unknown here, so its pointer
    // arithmetic stays 64-bit.
    if ((f.divisibleBy16 || f.divisibleBy8 || f.equalTo1) && p.type.isFloat())
      throw Error("aot: kernel '" + kernel.name() + "': parameter '" + p.name + "' is a float; only pointers and "
                  "integers take specialization facts");
    if (f.equalTo1 && p.type.isPtr())
      throw Error("aot: kernel '" + kernel.name() + "': pointer parameter '" + p.name + "' cannot be equal to 1");
    if (f.divisibleBy8 && p.type.isPtr())
      throw Error("aot: kernel '" + kernel.name() + "': pointer parameter '" + p.name + "' takes divisible-by-16 "
                  "(16-byte aligned), not divisible-by-8, which is for integers");
    facts.push_back(f);
  }
  return facts;
}

// nvptx images best first: the newest arch first and, for one arch, the cubin (no driver JIT) before the PTX.
int nvptxArchNumber(const std::string& arch) { return std::atoi(arch.c_str() + 3); }

void orderImages(std::vector<CImage>& images) {
  std::stable_sort(images.begin(), images.end(), [](const CImage& a, const CImage& b) {
    if (a.target != b.target) return a.target == "nvptx";
    if (a.target != "nvptx") return false;
    if (a.arch != b.arch) return nvptxArchNumber(a.arch) > nvptxArchNumber(b.arch);
    return a.format == "cubin" && b.format != "cubin";
  });
}

std::vector<std::string> describe(const KernelDef& kernel, const ExportOptions& o, const std::vector<CImage>& images) {
  std::vector<std::string> constants, binaries;
  for (const auto& [name, value] : o.constants) constants.push_back(name + "=" + constantText(value));
  for (const CImage& im : images) binaries.push_back(im.target + " " + im.arch + " " + im.format);
  return {
      "Kernel '" + kernel.name() + "' at " + joined(constants) + ", num_warps=" + std::to_string(o.numWarps) +
          (o.fastMath ? ", fast math" : ""),
      "Specialized for: 16-byte aligned / multiple of 16: " +
          joined({o.divisibleBy16.begin(), o.divisibleBy16.end()}) +
          "; multiple of 8: " + joined({o.divisibleBy8.begin(), o.divisibleBy8.end()}) + "; equal to 1: " + joined({o.equalTo1.begin(), o.equalTo1.end()}) + " (checked at launch)",
      "Binaries, in the order the loader tries them: " + joined(binaries),
  };
}

}  // namespace

ArchTarget parseArchTarget(const std::string& spec) {
  static const std::regex nvptx("nvptx:(sm_[0-9]+a?)"), amdgpu("amdgpu:(gfx[0-9a-f]+)");
  std::smatch m;
  if (std::regex_match(spec, m, nvptx)) return {"nvptx", m[1]};
  if (std::regex_match(spec, m, amdgpu)) return {"amdgpu", m[1]};
  throw Error("aot: target '" + spec + "' is not <target>:<arch>, e.g. nvptx:sm_80, nvptx:sm_90a, amdgpu:gfx90a, "
              "amdgpu:gfx942");
}

ExportedKernel exportKernel(const KernelDef& kernel, const ExportOptions& o) {
  const std::string name = o.name.empty() ? kernel.name() : o.name;
  if (!isCIdentifier(name)) throw Error("aot: export name '" + name + "' is not a C identifier");
  if (o.targets.empty()) throw Error("aot: kernel '" + kernel.name() + "': no target given (e.g. nvptx:sm_90a)");
  const std::vector<ParamInfo> params = kernel.runtimeParams();
  for (const ParamInfo& p : params)
    if (!isCIdentifier(p.name) || collidesWithGeneratedNames(p.name))
      throw Error("aot: kernel '" + kernel.name() + "': parameter name '" + p.name +
                  "' cannot be a C parameter name of the launch function (rename it, or avoid stream, grid_x/y/z "
                  "and the aot_ prefix)");
  const std::vector<ArgFacts> facts = factsFromNames(kernel, params, o);

  std::unique_ptr<ir::Module> module = kernel.trace(o.constants);
  ir::Function& f = *module->functions()[0];
  applySpecialization(f, facts);

  const std::optional<std::string> ptxas = o.cubin ? findPtxas(o.ptxas) : std::nullopt;
  CExport e;
  e.name = name;
  e.kernelSymbol = kernel.name();
  for (size_t i = 0; i < params.size(); ++i) e.params.push_back({params[i].name, params[i].type, facts[i]});
  for (const ArchTarget& t : o.targets) {
    std::unique_ptr<backends::Target> target = backends::createTarget(t.target);
    backends::TargetOptions options;
    options.arch = t.arch;
    options.numWarps = o.numWarps;
    options.fastMath = o.fastMath;
    const CompiledKernel c = compile(f, *target, options);
    const CImage image{c.target, c.arch, c.format, c.binary, c.threadsPerProgram(), c.sharedBytes};
    e.images.push_back(image);
    if (c.format == "ptx" && ptxas) {
      CImage cubin = image;
      cubin.format = "cubin";
      cubin.bytes = assembleCubin(*ptxas, c.binary, c.arch, kernel.name());
      e.images.push_back(cubin);
    }
  }
  orderImages(e.images);
  e.description = describe(kernel, o, e.images);

  ExportedKernel out;
  out.name = name;
  out.header = generateHeader(e);
  out.source = generateSource(e);
  for (const CImage& im : e.images) out.binaries.push_back(im.target + " " + im.arch + " " + im.format);
  return out;
}

std::vector<std::filesystem::path> writeExport(const ExportedKernel& e, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  const std::filesystem::path header = dir / (e.name + ".h"), source = dir / (e.name + ".c");
  backends::writeFile(header, e.header);
  backends::writeFile(source, e.source);
  return {header, source};
}

}  // namespace tessera::jit::aot
