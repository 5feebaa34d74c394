#include "jit/sim/runtime/Launch.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <thread>
#include <tuple>

#include "ir/Error.h"
#include "jit/sim/runtime/AmdKernelBlocks.h"
#include "jit/sim/runtime/AmdPrintfBuffer.h"
#include "jit/sim/runtime/Cluster.h"
#include "jit/sim/runtime/LaunchContext.h"
#include "jit/sim/runtime/Worker.h"

namespace tessera::sim {

namespace {

constexpr uint32_t kMaxThreadsPerProgram = 1024;
constexpr uint32_t kMaxSharedBytes = 64u << 20;  // far above any GPU's; the shadow costs 32 bytes per byte
constexpr size_t kMinStackBytes = 16 * 1024;
constexpr uint64_t kMaxClusterSize = 16;  // sm_90's limit with non-portable cluster sizes allowed (8 without)
constexpr uint64_t kMaxClusterThreads = 4096;  // the emulator's: 64 MB of racecheck clocks

void validate(const Program& p, const std::array<uint32_t, 3>& grid, const LaunchConfig& config) {
  const std::string what = "sim: kernel '" + p.kernel + "': ";
  if (!p.entry) throw Error(what + "the program has no entry function");
  if (p.target != "nvptx" && p.target != "amdgpu")
    throw Error(what + "unknown target '" + p.target + "' (expected nvptx or amdgpu)");
  if (p.warpSize != 32 && p.warpSize != 64) throw Error(what + "warp size " + std::to_string(p.warpSize) + " (expected 32 or 64)");
  if (p.target == "nvptx" && p.warpSize != 32) throw Error(what + "nvptx warps have 32 threads, not " + std::to_string(p.warpSize));
  if (p.numWarps == 0 || uint64_t{p.numWarps} * p.warpSize > kMaxThreadsPerProgram)
    throw Error(what + std::to_string(p.numWarps) + " warps of " + std::to_string(p.warpSize) +
                " threads (a program has 1 to " + std::to_string(kMaxThreadsPerProgram) + " threads)");
  if (p.sharedBytes > kMaxSharedBytes)
    throw Error(what + std::to_string(p.sharedBytes) + " bytes of shared memory (at most " +
                std::to_string(kMaxSharedBytes) + ")");
  auto triple = [](const std::array<uint32_t, 3>& v) {
    return "(" + std::to_string(v[0]) + ", " + std::to_string(v[1]) + ", " + std::to_string(v[2]) + ")";
  };
  for (int d = 0; d < 3; ++d)
    if (grid[d] == 0) throw Error(what + "grid " + triple(grid) + " is empty");
  const std::array<uint32_t, 3>& cluster = p.clusterDims;
  const uint64_t clusterSize = uint64_t{cluster[0]} * cluster[1] * cluster[2];
  if (clusterSize != 1) {
    if (p.target != "nvptx") throw Error(what + "clusters of programs are an nvptx (sm_90) feature");
    if (clusterSize == 0 || clusterSize > kMaxClusterSize)
      throw Error(what + "clusters of " + triple(cluster) + " programs (a cluster has 1 to " +
                  std::to_string(kMaxClusterSize) + ")");
    for (int d = 0; d < 3; ++d)
      if (grid[d] % cluster[d] != 0)
        throw Error(what + "grid " + triple(grid) + " is not a whole number of clusters of " + triple(cluster));
    // Racecheck keeps a vector clock per thread of the cluster, over all of them.
    if (clusterSize * p.numWarps * p.warpSize > kMaxClusterThreads)
      throw Error(what + "clusters of " + std::to_string(clusterSize * p.numWarps * p.warpSize) +
                  " threads; the emulator checks clusters of at most " + std::to_string(kMaxClusterThreads));
  }
  if (config.stackBytes < kMinStackBytes)
    throw Error(what + "fiber stacks of " + std::to_string(config.stackBytes) + " bytes (at least " +
                std::to_string(kMinStackBytes) + ")");
}

unsigned hostThreads(const LaunchConfig& config, uint64_t clusters) {
  unsigned n = config.threads ? config.threads : std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::min<uint64_t>(n, clusters));
}

// Findings in program order, the first maxFindingsPerKind of each kind kept. Each worker ran its programs in
// increasing order (the programs of one rank, cluster after cluster) and kept its own first ones, so the result
// does not depend on the number of host threads.
void mergeFindings(Report& r, const std::vector<const Worker*>& workers, uint32_t cap) {
  std::vector<Finding> all;
  for (const auto& w : workers) {
    all.insert(all.end(), w->findings.findings().begin(), w->findings.findings().end());
    for (size_t k = 0; k < kFindingKindCount; ++k) r.findingCounts[k] += w->findings.counts()[k];
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const Finding& a, const Finding& b) { return a.programIndex < b.programIndex; });
  std::array<uint32_t, kFindingKindCount> kept{};
  for (Finding& f : all)
    if (kept[static_cast<size_t>(f.kind)]++ < cap) r.findings.push_back(std::move(f));
}

void mergeCounters(Report& r, const Program& p, const std::vector<const Worker*>& workers) {
  std::vector<Counters> perSite(p.sites.size());
  for (const auto& w : workers)
    for (size_t s = 0; s < perSite.size(); ++s) perSite[s] += w->counters.perSite()[s];
  std::map<std::tuple<std::string, std::string, uint32_t, uint32_t>, size_t> rowOf;
  for (size_t s = 0; s < perSite.size(); ++s) {
    r.total += perSite[s];
    if (perSite[s].empty()) continue;
    const Site& site = p.sites[s];
    auto key = std::make_tuple(site.op, site.file, site.line, site.column);
    auto [it, added] = rowOf.emplace(key, r.ops.size());
    if (added) r.ops.push_back(OpCounters{site.op, site.file, site.line, site.column, {}});
    r.ops[it->second].counters += perSite[s];
  }
}

void mergeOutput(Report& r, const std::vector<const Worker*>& workers) {
  std::vector<std::pair<uint64_t, std::string>> all;
  for (const auto& w : workers) all.insert(all.end(), w->output().begin(), w->output().end());
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [program, text] : all) r.output += text;
}

void decodeAmdPrintf(Report& r, const Program& p, const AmdKernelBlocks& amd,
                     const std::vector<AmdPrintfFormat>& formats, uint32_t cap) {
  AmdPrintfOutput decoded = decodeAmdPrintfBuffer(amd.printfBuffer(), formats);
  r.output += decoded.text;
  if (decoded.error.empty()) return;
  auto kind = FindingKind::BadPrintfRecord;
  if (r.findingCounts[static_cast<size_t>(kind)]++ >= cap) return;
  Finding f;
  f.kind = kind;
  f.kernel = p.kernel;
  f.message = decoded.error;
  r.findings.push_back(std::move(f));
}

}  // namespace

Report launch(const Program& program, const std::array<uint32_t, 3>& grid, void** params, const LaunchConfig& config) {
  validate(program, grid, config);
  std::vector<AmdPrintfFormat> printfFormats;
  for (const std::string& record : program.printfFormats) printfFormats.push_back(parseAmdPrintfFormat(record));

  const bool amdgpu = program.target == "amdgpu";
  AmdKernelBlocks amd(grid, program.warpSize * program.numWarps, program.sharedBytes,
                      amdgpu ? config.printfBufferBytes : 0);
  GlobalMemoryChecker global(config.allocations, amd.ranges());
  LaunchContext context{program, config, grid, params, amd, global};

  const uint64_t clusters = context.clusters();
  const unsigned threads = hostThreads(config, clusters);
  std::vector<std::unique_ptr<Cluster>> runners(threads);
  std::vector<std::exception_ptr> errors(threads);
  std::atomic<uint64_t> next{0};
  auto work = [&](unsigned i) {
    try {
      runners[i] = std::make_unique<Cluster>(context);
      for (uint64_t c; (c = next.fetch_add(1)) < clusters;) runners[i]->run(c);
    } catch (...) {
      errors[i] = std::current_exception();
      next.store(clusters);  // the launch fails: the others stop too
    }
  };
  if (threads == 1) {
    work(0);
  } else {
    std::vector<std::thread> pool;
    for (unsigned i = 0; i < threads; ++i) pool.emplace_back(work, i);
    for (std::thread& t : pool) t.join();
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  std::vector<const Worker*> workers;
  for (const auto& runner : runners)
    for (const auto& w : runner->programs()) workers.push_back(w.get());

  Report report;
  report.kernel = program.kernel;
  report.grid = grid;
  report.clusterDims = program.clusterDims;
  mergeFindings(report, workers, config.maxFindingsPerKind);
  mergeCounters(report, program, workers);
  mergeOutput(report, workers);
  if (amdgpu) decodeAmdPrintf(report, program, amd, printfFormats, config.maxFindingsPerKind);
  if (config.echoOutput && !report.output.empty()) {
    std::fwrite(report.output.data(), 1, report.output.size(), stdout);
    std::fflush(stdout);
  }
  return report;
}

}  // namespace tessera::sim
