// tessera-opt: reads textual tile IR, verifies it, runs a pass pipeline and prints the result (like mlir-opt).
//
//   tessera-opt [input.tir|-] [--pass=NAME ...] [-p NAME,NAME,...|-p default] [--target=nvptx|amdgpu]
//               [--arch=ARCH] [--dump-ir] [--verify-only] [--print-locations] [--no-verify] [--num-warps=N]
//               [--warp-size=N] [-o FILE]
//
// --target gives the passes what the JIT gives them for that target (its warp size and layout policy), so that
// `tessera-opt --target=amdgpu -p default` is exactly what the JIT runs for AMD GPUs.
//
// Problems are reported as "file:line:col: error: message" on stderr with exit status 1.
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "backends/Target.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "tools/VersionFlag.h"
#include "transforms/PassManager.h"
#include "transforms/Pipeline.h"

namespace {

using tessera::Error;

struct Options {
  std::string input = "-";
  std::string output = "-";
  std::string passes;  // comma-separated pass and pipeline names, in order
  bool dumpIR = false;
  bool verifyOnly = false;
  bool printLocations = false;
  bool verify = true;
  tessera::transforms::PassOptions passOptions;  // --num-warps, --warp-size (for the layout passes)
  bool warpSizeGiven = false;
  std::string target;  // --target: the JIT's warp size and layout policy for it
};

void printHelp(std::ostream& os) {
  os << "usage: tessera-opt [input.tir|-] [options]\n"
        "Reads Tessera tile IR (stdin when the input is '-' or absent), verifies it, runs passes, prints it.\n"
        "\n"
        "options:\n"
        "  --pass=NAME            run pass NAME (repeatable; passes run in the order given)\n"
        "  -p NAME,NAME,...       run a comma-separated pipeline of passes; 'default' is the JIT's pipeline\n"
        "  --target=nvptx|amdgpu  the JIT's pass options for that target: its warp size (32 or 64) and its\n"
        "                         layout policy (tensor-core accumulators); none = warp size 32, default layouts\n"
        "  --arch=ARCH            the arch the target's layout policy plans for (sm_90a, sm_80, gfx942; default:\n"
        "                         the target's default, sm_90a on nvptx: wgmma dots)\n"
        "  --num-warps=N          warps per program for the layout passes (default 4)\n"
        "  --warp-size=N          threads per warp for the layout passes (default 32, or the target's)\n"
        "  --num-stages=N         shared-memory stages of pipelined loops (pipeline-loops; default 3, 1 = none)\n"
        "  --persistent           the default pipeline makes the kernel persistent first (make-persistent)\n"
        "  --warp-specialize      pipeline-loops hands the TMA copies of the kernel's loop to a producer warpgroup\n"
        "  --ping-pong            two consumer groups, each on its own tiles (ping-pong-consumers; implies\n"
        "                         --persistent and --warp-specialize)\n"
        "  --no-consumer-turns    the warp-specialized consumer warpgroups do not take turns (order-consumer-groups)\n"
        "  --matrix-instr-nonkdim=16|32\n"
        "                         the M and N of AMD's matrix instructions (MFMA 16x16x16 or 32x32x8; default: the\n"
        "                         target's choice, 16)\n"
        "  --dump-ir              print the IR to stderr before the first pass and after every pass\n"
        "                         (as TESSERA_DUMP_IR=1 does)\n"
        "  --verify-only          parse and verify, print nothing on success\n"
        "  --print-locations      print loc(...) source locations\n"
        "  --no-verify            do not verify the input or the IR after each pass\n"
        "  -o FILE                write the output to FILE instead of stdout\n"
        "  -h, --help             show this help\n"
        "  --version              print the Tessera version\n"
        "\n"
        "passes:";
  for (const std::string& name : tessera::transforms::registeredPassNames()) os << " " << name;
  os << "\npipelines:";
  for (const std::string& name : tessera::transforms::pipelineNames()) os << " " << name;
  os << "\n";
}

void addPipeline(Options& opts, const std::string& list) { opts.passes += (opts.passes.empty() ? "" : ",") + list; }

bool parsePowerOfTwo(const std::string& text, int& out) {
  if (text.empty() || text.size() > 6 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  int v = std::stoi(text);
  if (v < 1 || (v & (v - 1)) != 0) return false;
  out = v;
  return true;
}

// Returns false (after printing why) on a bad command line; exits on --help.
bool parseArgs(int argc, char** argv, Options& opts) {
  bool haveInput = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto needValue = [&](const std::string& flag) -> const char* {
      if (i + 1 >= argc) {
        std::cerr << "tessera-opt: error: " << flag << " needs a value\n";
        return nullptr;
      }
      return argv[++i];
    };
    if (arg == "-h" || arg == "--help") {
      printHelp(std::cout);
      std::exit(0);
    } else if (arg.rfind("--pass=", 0) == 0) {
      addPipeline(opts, arg.substr(7));
    } else if (arg == "--pass" || arg == "-p") {
      const char* v = needValue(arg);
      if (!v) return false;
      addPipeline(opts, v);
    } else if (arg.rfind("-p=", 0) == 0) {
      addPipeline(opts, arg.substr(3));
    } else if (arg.rfind("--num-warps=", 0) == 0 || arg.rfind("--warp-size=", 0) == 0) {
      bool warps = arg[2] == 'n';
      if (!parsePowerOfTwo(arg.substr(arg.find('=') + 1), warps ? opts.passOptions.numWarps : opts.passOptions.warpSize)) {
        std::cerr << "tessera-opt: error: " << arg << ": expected a positive power of two\n";
        return false;
      }
      opts.warpSizeGiven |= !warps;
    } else if (arg.rfind("--num-stages=", 0) == 0) {
      const std::string value = arg.substr(13);
      int stages = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), stages);
      if (ec != std::errc() || end != value.data() + value.size() || stages < 1) {
        std::cerr << "tessera-opt: error: " << arg << ": expected a positive number of stages\n";
        return false;
      }
      opts.passOptions.numStages = stages;
    } else if (arg.rfind("--target=", 0) == 0) {
      opts.target = arg.substr(9);
    } else if (arg.rfind("--arch=", 0) == 0) {
      opts.passOptions.arch = arg.substr(7);
    } else if (arg == "--persistent") {
      opts.passOptions.persistent = true;
    } else if (arg == "--warp-specialize") {
      opts.passOptions.warpSpecialize = true;
    } else if (arg == "--ping-pong") {
      opts.passOptions.pingPong = opts.passOptions.persistent = opts.passOptions.warpSpecialize = true;
    } else if (arg == "--no-consumer-turns") {
      opts.passOptions.consumerTurns = false;
    } else if (arg.rfind("--matrix-instr-nonkdim=", 0) == 0) {
      const std::string value = arg.substr(arg.find('=') + 1);
      if (value != "16" && value != "32") {
        std::cerr << "tessera-opt: error: " << arg << ": expected 16 or 32\n";
        return false;
      }
      opts.passOptions.matrixInstrSize = std::stoi(value);
    } else if (arg == "--dump-ir") {
      opts.dumpIR = true;
    } else if (arg == "--verify-only") {
      opts.verifyOnly = true;
    } else if (arg == "--print-locations") {
      opts.printLocations = true;
    } else if (arg == "--no-verify") {
      opts.verify = false;
    } else if (arg == "-o") {
      const char* v = needValue(arg);
      if (!v) return false;
      opts.output = v;
    } else if (arg != "-" && arg.size() > 1 && arg[0] == '-') {
      std::cerr << "tessera-opt: error: unknown option '" << arg << "' (see --help)\n";
      return false;
    } else if (haveInput) {
      std::cerr << "tessera-opt: error: more than one input file ('" << opts.input << "' and '" << arg << "')\n";
      return false;
    } else {
      opts.input = arg;
      haveInput = true;
    }
  }
  return true;
}

int runTool(const Options& opts) {
  std::string text, fileName;
  if (opts.input == "-") {
    std::stringstream ss;
    ss << std::cin.rdbuf();
    text = ss.str();
    fileName = "<stdin>";
  } else {
    std::ifstream in(opts.input, std::ios::binary);
    if (!in || std::filesystem::is_directory(opts.input)) {
      std::cerr << "tessera-opt: error: cannot open '" << opts.input << "'\n";
      return 1;
    }
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
    fileName = opts.input;
  }

  tessera::transforms::PassOptions passOptions = opts.passOptions;
  if (!opts.target.empty()) {
    std::unique_ptr<tessera::backends::Target> target = tessera::backends::createTarget(opts.target);
    if (opts.warpSizeGiven && passOptions.warpSize != target->warpSize())
      throw Error("--warp-size=" + std::to_string(passOptions.warpSize) + " contradicts --target=" + opts.target +
                  ", whose warps have " + std::to_string(target->warpSize()) + " threads");
    passOptions = target->passOptions(passOptions);
  }
  tessera::transforms::PassManager pm;
  tessera::transforms::addPasses(pm, opts.passes, passOptions);  // an unknown name throws before any work
  pm.setVerifyEach(opts.verify);
  if (opts.dumpIR) pm.setDumpIR(true);

  std::unique_ptr<tessera::ir::Module> module = tessera::ir::parseModule(text, fileName);
  if (opts.verify) tessera::ir::verify(*module);
  if (opts.verifyOnly) return 0;
  pm.run(*module);

  tessera::ir::PrintOptions printOpts;
  printOpts.locations = opts.printLocations;
  std::string result = tessera::ir::print(*module, printOpts);
  if (opts.output == "-") {
    std::cout << result;
    std::cout.flush();
    return std::cout ? 0 : 1;
  }
  std::ofstream out(opts.output, std::ios::binary);
  out << result;
  if (!out) {
    std::cerr << "tessera-opt: error: cannot write '" << opts.output << "'\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (tessera::tools::printVersionIfAsked(argc, argv, "tessera-opt")) return 0;
  Options opts;
  if (!parseArgs(argc, argv, opts)) return 1;
  try {
    return runTool(opts);
  } catch (const Error& e) {
    // what() is "file:line:col: error: message" when the error has a location.
    std::cerr << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "tessera-opt: error: " << e.what() << "\n";
    return 1;
  }
}
