#include "benchmarks/support/Ptxas.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <vector>

#include <unistd.h>

#include "benchmarks/support/CpuTime.h"
#include "ir/Error.h"

namespace tessera::bench {

namespace {

struct Output {
  std::string text;
  int status = -1;
};

// Runs a shell command, stderr folded into stdout, and waits for it (so its CPU time counts as a child's).
Output runCommand(const std::string& command) {
  Output out;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return out;
  char buf[4096];
  while (fgets(buf, sizeof buf, p)) out.text += buf;
  out.status = pclose(p);
  return out;
}

}  // namespace

bool ptxasInstalled(const std::string& ptxas) { return ::access(ptxas.c_str(), X_OK) == 0; }

std::string ptxasVersion(const std::string& ptxas) {
  if (!ptxasInstalled(ptxas)) return "absent";
  Output out = runCommand("'" + ptxas + "' --version");
  std::smatch m;
  if (std::regex_search(out.text, m, std::regex(R"(release ([0-9.]+, V[0-9.]+))"))) return m[1];
  return "unknown";
}

PtxasReport runPtxas(const std::string& ptxas, const std::string& ptx, const std::string& arch, int runs) {
  char path[] = "/tmp/tessera_bench_XXXXXX.ptx";
  int fd = mkstemps(path, 4);
  if (fd < 0) throw Error("ptxas: cannot create a temporary file for the PTX");
  ::close(fd);
  std::ofstream(path) << ptx;
  const std::string command = "'" + ptxas + "' -v -arch=" + arch + " " + path + " -o /dev/null";
  const std::regex compileTime(R"(Compile time = ([0-9.]+) ms)");
  std::vector<double> cpu, reported;
  Output out;
  for (int run = 0; run < runs; ++run) {
    double start = childrenCpuSeconds();
    out = runCommand(command);
    cpu.push_back(childrenCpuSeconds() - start);
    if (out.status != 0) break;
    std::smatch m;
    if (std::regex_search(out.text, m, compileTime)) reported.push_back(std::stod(m[1]));
  }
  std::filesystem::remove(path);
  const std::string& log = out.text;
  if (out.status != 0) throw Error("ptxas failed on the PTX for " + arch + ":\n" + log);
  PtxasReport r;
  static_cast<jit::PtxasUsage&>(r) = jit::parsePtxasVerbose(log);
  if (!reported.empty()) r.reportedMs = median(reported);
  r.cpuSeconds = median(cpu);
  return r;
}

}  // namespace tessera::bench
