// tessera-translate: reads laid-out tile IR (the output of the layout and shared-memory passes) and prints the
// LLVM IR, the assembly or the artifact a GPU target produces for every function in it.
//
//   tessera-translate [input.tir|input.ll|-] [--emit=llvm|llvm-opt|asm|ptx|hsaco|sim-host] [--target=nvptx|amdgpu]
//                     [--arch=ARCH] [--num-warps=N] [--no-fast-math] [-o FILE]
//
// --emit=llvm prints the lowered module (Target::lowerToLLVM); llvm-opt the optimized one (Target::optimize:
// vendor libraries linked, O3); asm the target's assembly of that (Target::emitAssembly: PTX on nvptx, GCN
// assembly on amdgpu, like llc -filetype=asm); ptx and hsaco what Target::emit makes of it, the artifact the JIT
// loads, each valid for its own target only (ptx is nvptx's assembly; an hsaco code object holds one kernel, so
// it needs a single-function input and is best written with -o); sim-host the optimized module rewritten for the
// emulator's host (jit/sim/HostModule.h), after its site table as comments. An input ending in .ll is a GPU
// module in LLVM IR (sim-host only), rewritten as it is. num_warps defaults to the function's
// `num_warps` attribute, else 4.
// Problems are reported as "file:line:col: error: message" on stderr with exit status 1.
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include "backends/Target.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"
#include "jit/sim/HostModule.h"
#include "tools/VersionFlag.h"

namespace {

struct Options {
  std::string input = "-";
  std::string output = "-";
  std::string emit = "asm";
  std::string target = "nvptx";
  std::string arch;
  int numWarps = 0;  // 0: from the function
  bool fastMath = true;
};

const char* kUsage =
    "usage: tessera-translate [input.tir|input.ll|-] [--emit=llvm|llvm-opt|asm|ptx|hsaco|sim-host]\n"
    "                         [--target=nvptx|amdgpu]\n"
    "                         [--arch=ARCH] [--num-warps=N] [--no-fast-math] [-o FILE] [--version]\n";

bool startsWith(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

bool endsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The rewritten module, after its site table as LLVM IR comments.
std::string printHostModule(const tessera::sim::HostModule& host) {
  std::string out;
  std::istringstream sites(tessera::sim::formatSiteTable(host.sites));
  for (std::string line; std::getline(sites, line);) out += "; " + line + "\n";
  llvm::raw_string_ostream os(out);
  host.module->print(os, nullptr);
  return out;
}

bool parseArgs(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      std::exit(0);
    } else if (startsWith(a, "--emit=")) {
      o.emit = a.substr(7);
      if (o.emit != "llvm" && o.emit != "llvm-opt" && o.emit != "asm" && o.emit != "ptx" && o.emit != "hsaco" &&
          o.emit != "sim-host") {
        std::cerr << "tessera-translate: error: unknown --emit value '" << o.emit
                  << "' (llvm, llvm-opt, asm, ptx, hsaco or sim-host)\n";
        return false;
      }
    } else if (startsWith(a, "--target=")) {
      o.target = a.substr(9);
    } else if (startsWith(a, "--arch=")) {
      o.arch = a.substr(7);
    } else if (startsWith(a, "--num-warps=")) {
      try {
        o.numWarps = std::stoi(a.substr(12));
      } catch (...) {
        o.numWarps = -1;
      }
      if (o.numWarps <= 0) {
        std::cerr << "tessera-translate: error: --num-warps needs a positive integer\n";
        return false;
      }
    } else if (a == "--no-fast-math") {
      o.fastMath = false;
    } else if (a == "-o") {
      if (i + 1 >= argc) {
        std::cerr << "tessera-translate: error: -o needs a value\n";
        return false;
      }
      o.output = argv[++i];
    } else if (!a.empty() && a[0] == '-' && a != "-") {
      std::cerr << "tessera-translate: error: unknown option '" << a << "'\n" << kUsage;
      return false;
    } else {
      o.input = a;
    }
  }
  return true;
}

// Lowers every function of the tile IR in `text` and emits what `opts.emit` asks for.
std::string translateTileIR(const std::string& text, const Options& opts) {
  std::unique_ptr<tessera::ir::Module> module = tessera::ir::parseModule(text, opts.input == "-" ? "<stdin>" : opts.input);
  tessera::ir::verify(*module);
  std::unique_ptr<tessera::backends::Target> target = tessera::backends::createTarget(opts.target);
  const bool artifact = opts.emit == "ptx" || opts.emit == "hsaco";
  if (artifact && opts.emit != target->binaryFormat())
    throw tessera::Error("--emit=" + opts.emit + " is not what target '" + target->name() + "' emits (--emit=asm or --emit=" +
                         target->binaryFormat() + ")");
  if (opts.emit == "hsaco" && module->functions().size() != 1)
    throw tessera::Error("--emit=hsaco needs an input with one function (a code object holds one kernel); it has " +
                         std::to_string(module->functions().size()));
  std::string out;
  for (const auto& f : module->functions()) {
    tessera::backends::TargetOptions to;
    to.arch = opts.arch;
    to.fastMath = opts.fastMath;
    to.numWarps = opts.numWarps;
    if (to.numWarps == 0) {
      auto it = f->attrs().find("num_warps");
      to.numWarps = it != f->attrs().end() && it->second.isInt() ? static_cast<int>(it->second.getInt()) : 4;
    }
    llvm::LLVMContext ctx;
    std::unique_ptr<llvm::Module> m = target->lowerToLLVM(*f, ctx, to);
    if (opts.emit != "llvm") target->optimize(*m, to);
    if (artifact) {
      out += target->emit(*m, to);
    } else if (opts.emit == "asm") {
      out += target->emitAssembly(*m, to);
    } else if (opts.emit == "sim-host") {
      out += printHostModule(tessera::sim::rewriteForHost(*m));  // the emulator runs the optimized module
    } else {
      llvm::raw_string_ostream os(out);
      m->print(os, nullptr);
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (tessera::tools::printVersionIfAsked(argc, argv, "tessera-translate")) return 0;
  Options opts;
  if (!parseArgs(argc, argv, opts)) return 1;
  std::string text;
  if (opts.input == "-") {
    std::stringstream ss;
    ss << std::cin.rdbuf();
    text = ss.str();
  } else {
    std::ifstream in(opts.input);
    if (!in) {
      std::cerr << "tessera-translate: error: cannot open '" << opts.input << "'\n";
      return 1;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  try {
    std::string out;
    if (endsWith(opts.input, ".ll")) {
      if (opts.emit != "sim-host") {
        std::cerr << "tessera-translate: error: LLVM IR input (" << opts.input << ") needs --emit=sim-host\n";
        return 1;
      }
      out = printHostModule(tessera::sim::rewriteForHost(text, opts.input));
    } else {
      out = translateTileIR(text, opts);
    }
    if (opts.output == "-") {
      std::cout << out;
    } else {
      std::ofstream os(opts.output, std::ios::binary);
      if (!os) {
        std::cerr << "tessera-translate: error: cannot write '" << opts.output << "'\n";
        return 1;
      }
      os << out;
    }
  } catch (const tessera::Error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
  return 0;
}
