#include "benchmarks/support/BenchOptions.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "benchmarks/support/Ptxas.h"
#include "ir/Error.h"

namespace tessera::bench {

namespace {

[[noreturn]] void usage(const char* program, const std::string& what, const std::string& problem) {
  std::fprintf(stderr,
               "%s: %s\n%s\nusage: %s [--csv FILE] [--only SUBSTRING] [--ptx-dir DIR] [--ptxas PATH] [--runs N]\n",
               program, problem.c_str(), what.c_str(), program);
  std::exit(2);
}

}  // namespace

BenchOptions parseBenchOptions(int argc, char** argv, const std::string& what) {
  BenchOptions o;
  o.ptxas = kDefaultPtxas;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::printf("%s\nusage: %s [--csv FILE] [--only SUBSTRING] [--ptx-dir DIR] [--ptxas PATH] [--runs N]\n",
                  what.c_str(), argv[0]);
      std::exit(0);
    }
    if (i + 1 >= argc) usage(argv[0], what, "'" + flag + "' needs a value or is unknown");
    const std::string value = argv[++i];
    if (flag == "--csv") o.csvPath = value;
    else if (flag == "--only") o.only = value;
    else if (flag == "--ptx-dir") o.ptxDir = value;
    else if (flag == "--ptxas") o.ptxas = value;
    else if (flag == "--runs") {
      char* end = nullptr;
      long runs = std::strtol(value.c_str(), &end, 10);
      if (*end != '\0' || runs < 1 || runs > 100) usage(argv[0], what, "--runs takes 1 to 100, got '" + value + "'");
      o.runs = static_cast<int>(runs);
    } else {
      usage(argv[0], what, "unknown argument '" + flag + "'");
    }
  }
  return o;
}

void savePtx(const BenchOptions& options, const std::string& caseName, const std::string& ptx) {
  if (options.ptxDir.empty()) return;
  std::filesystem::create_directories(options.ptxDir);
  const std::filesystem::path path = std::filesystem::path(options.ptxDir) / (caseName + ".ptx");
  std::ofstream out(path, std::ios::trunc);
  out << ptx;
  if (!out) throw Error("--ptx-dir: cannot write '" + path.string() + "'");
}

}  // namespace tessera::bench
