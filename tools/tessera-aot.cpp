// tessera-aot: ahead-of-time export of a kernel of the kernel library (frontend/tessera/kernels) as a C header and
// source that embed its binaries (docs/AOT.md). One kernel per run:
//
//   tessera-aot --kernel vector_add --const BLOCK=1024 --divisible-by-16 x,y,out,n
//               --target nvptx:sm_90a --target amdgpu:gfx942 -o exports/
//
// Problems are reported as "tessera-aot: error: message" on stderr with exit status 1 (with the kernel source
// location when the error has one).
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

#include "ir/Error.h"
#include "jit/aot/Export.h"
#include "tessera/kernels/attention.h"
#include "tessera/kernels/layernorm.h"
#include "tessera/kernels/matmul.h"
#include "tessera/kernels/softmax.h"
#include "tessera/kernels/vector_add.h"
#include "tools/VersionFlag.h"

namespace {

using tessera::Error;
namespace aot = tessera::jit::aot;

const std::map<std::string, std::function<tessera::KernelDef()>>& libraryKernels() {
  namespace k = tessera::kernels;
  static const std::map<std::string, std::function<tessera::KernelDef()>> kernels = {
      {"vector_add", k::vector_add_kernel},
      {"softmax", k::softmax_kernel},
      {"layernorm_fwd", k::layernorm_fwd_kernel},
      {"layernorm_bwd_dx", k::layernorm_bwd_dx_kernel},
      {"layernorm_bwd_dwdb", k::layernorm_bwd_dwdb_kernel},
      {"layernorm_bwd_atomic", k::layernorm_bwd_atomic_kernel},
      {"matmul", k::matmul_kernel},
      {"matmul_epilogue", k::matmul_epilogue_kernel},
      {"matmul_epilogue_f16", k::matmul_epilogue_f16_kernel},
      {"attention_fwd", k::attention_fwd_kernel},
      {"attention_fwd_bf16", k::attention_fwd_bf16_kernel},
  };
  return kernels;
}

void printHelp(std::ostream& os) {
  os << "usage: tessera-aot --kernel NAME --target TARGET:ARCH [options] -o DIR\n"
        "Compiles one kernel of the kernel library ahead of time and writes DIR/<name>.h and DIR/<name>.c: the\n"
        "binaries embedded, and a typed <name>_launch() that needs neither Tessera nor LLVM at run time.\n"
        "\n"
        "options:\n"
        "  --kernel NAME            the kernel (--list shows them)\n"
        "  --target TARGET:ARCH     nvptx:sm_80, nvptx:sm_90a, amdgpu:gfx90a, amdgpu:gfx942 (repeatable)\n"
        "  --const NAME=VALUE       a Const parameter's value (repeatable; every Const needs one)\n"
        "  --divisible-by-16 A,B    runtime parameters the binaries may assume 16-byte aligned (pointers) or\n"
        "                           multiples of 16 (integers); checked at launch\n"
        "  --divisible-by-8 A,B     integer parameters the binaries may assume multiples of 8 (ragged sizes such as\n"
        "                           1000 keep 16-byte copies of 16-bit rows); checked at launch\n"
        "  --equal-to-1 A,B         integer parameters the binaries may assume equal 1; checked at launch\n"
        "  --num-warps N            warps per program (default 4)\n"
        "  --name NAME              C name prefix of the exported functions (default: the kernel's name)\n"
        "  --no-fast-math           exact exp/log/division\n"
        "  --no-cubin               embed PTX only, even when ptxas is installed\n"
        "  --ptxas PATH             the ptxas to assemble cubins with (default: $TESSERA_PTXAS,\n"
        "                           /usr/local/cuda/bin/ptxas, then $PATH)\n"
        "  -o DIR                   output directory\n"
        "  --list                   list the kernels and their parameters\n"
        "  -h, --help               show this help\n"
        "  --version                print the Tessera version\n";
}

void listKernels(std::ostream& os) {
  for (const auto& [name, make] : libraryKernels()) {
    os << name << "(";
    const tessera::KernelDef def = make();
    for (size_t i = 0; i < def.params().size(); ++i) {
      const tessera::ParamInfo& p = def.params()[i];
      os << (i ? ", " : "") << p.name << ": " << (p.kind == tessera::ParamKind::Constant ? "const " : "") << p.type.str();
    }
    os << ")\n";
  }
}

std::vector<std::string> splitList(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

tessera::ConstValue parseConstValue(const std::string& name, const std::string& text) {
  char* end = nullptr;
  const long long i = std::strtoll(text.c_str(), &end, 0);
  if (!text.empty() && *end == '\0') return static_cast<int64_t>(i);
  const double d = std::strtod(text.c_str(), &end);
  if (!text.empty() && *end == '\0') return d;
  throw Error("--const " + name + "=" + text + ": the value is not a number");
}

int run(int argc, char** argv) {
  std::string kernelName, outDir;
  aot::ExportOptions options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw Error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "-h" || arg == "--help") {
      printHelp(std::cout);
      return 0;
    } else if (arg == "--list") {
      listKernels(std::cout);
      return 0;
    } else if (arg == "--kernel") {
      kernelName = value();
    } else if (arg == "--target") {
      options.targets.push_back(aot::parseArchTarget(value()));
    } else if (arg == "--const") {
      const std::string v = value();
      const size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0) throw Error("--const takes NAME=VALUE, got '" + v + "'");
      options.constants[v.substr(0, eq)] = parseConstValue(v.substr(0, eq), v.substr(eq + 1));
    } else if (arg == "--divisible-by-16") {
      for (const std::string& n : splitList(value())) options.divisibleBy16.insert(n);
    } else if (arg == "--divisible-by-8") {
      for (const std::string& n : splitList(value())) options.divisibleBy8.insert(n);
    } else if (arg == "--equal-to-1") {
      for (const std::string& n : splitList(value())) options.equalTo1.insert(n);
    } else if (arg == "--num-warps") {
      const std::string v = value();
      options.numWarps = std::atoi(v.c_str());
      if (options.numWarps <= 0 || (options.numWarps & (options.numWarps - 1)) != 0)
        throw Error("--num-warps must be a power of two, got '" + v + "'");
    } else if (arg == "--name") {
      options.name = value();
    } else if (arg == "--no-fast-math") {
      options.fastMath = false;
    } else if (arg == "--no-cubin") {
      options.cubin = false;
    } else if (arg == "--ptxas") {
      options.ptxas = value();
    } else if (arg == "-o") {
      outDir = value();
    } else {
      throw Error("unknown argument '" + arg + "' (see --help)");
    }
  }
  if (kernelName.empty()) throw Error("no --kernel given (see --list)");
  if (outDir.empty()) throw Error("no output directory given (-o DIR)");
  auto it = libraryKernels().find(kernelName);
  if (it == libraryKernels().end()) throw Error("unknown kernel '" + kernelName + "' (see --list)");
  const aot::ExportedKernel exported = aot::exportKernel(it->second(), options);
  for (const auto& path : aot::writeExport(exported, outDir)) std::cout << path.string() << "\n";
  for (const std::string& binary : exported.binaries) std::cout << "  embedded: " << binary << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (tessera::tools::printVersionIfAsked(argc, argv, "tessera-aot")) return 0;
  try {
    return run(argc, argv);
  } catch (const Error& e) {
    std::cerr << "tessera-aot: " << e.what() << "\n";  // what() is "[file:line:col: ]error: message"
    return 1;
  }
}
