// tessera-fuzz: differential fuzzing across backends (tests/fuzz/difffuzz). For each seed, a random tile program
// runs on the reference interpreter, in eager mode, under the emulator for each arch, and on the interpreter again
// after each arch's pass pipeline; every buffer must agree (bit for bit but for approximate math). A failing
// program is reduced and written as a regression file. Each check runs in a child process, so a crash (LLVM
// aborts on what instruction selection cannot select) is a finding too. Exit status 0 when every program passed, 1 otherwise, 2
// for a bad command line.
//
//   tessera-fuzz [--seed=N] [--count=N | --minutes=M] [--targets=eager,sm_80,sm_90a,gfx942]
//                [--regressions=DIR] [--reduce-checks=N] [--print] [--quiet]
//     --seed       the first seed (default 1); program i uses seed + i, so any program is reproducible alone
//     --count      programs to run (default 100), or --minutes: run until the time is up
//     --targets    where to run besides the interpreter: eager and emulated archs (sm_80 sm_90a gfx90a gfx942)
//     --regressions  write each reduced failure there as <where>-<what>-seed<N>.tir (else print it)
//     --print      print each program's traced tile IR
//   tessera-fuzz --replay PATH...   replays regression files (or every *.tir in a folder), eager mode included
//                                   where its archs say; 0 when each behaves as its `expect:` line says
//   tessera-fuzz --version
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "ir/Error.h"
#include "ir/Printer.h"
#include "tests/fuzz/difffuzz/Differential.h"
#include "tests/fuzz/difffuzz/Generator.h"
#include "tests/fuzz/difffuzz/Isolation.h"
#include "tests/fuzz/difffuzz/ProgramKernel.h"
#include "tests/fuzz/difffuzz/Reducer.h"
#include "tests/fuzz/difffuzz/Regression.h"
#include "tools/VersionFlag.h"

namespace {

using namespace tessera::fuzz;
namespace fs = std::filesystem;

struct Options {
  uint64_t seed = 1;
  uint64_t count = 100;
  double minutes = 0;
  Targets targets;
  std::string regressions;
  int reduceChecks = 400;
  bool print = false, quiet = false;
  std::vector<std::string> replay;
};

bool parseTargets(const std::string& list, Targets& t) {
  t.eager = false;
  t.archs.clear();
  std::istringstream in(list);
  for (std::string name; std::getline(in, name, ',');) {
    if (name == "eager") t.eager = true;
    else if (name == "sm_80" || name == "sm_90a" || name == "gfx90a" || name == "gfx942") t.archs.push_back(name);
    else return false;
  }
  return true;
}

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    try {
      if (a.starts_with("--seed=")) o.seed = std::stoull(a.substr(7));
      else if (a.starts_with("--count=")) o.count = std::stoull(a.substr(8));
      else if (a.starts_with("--minutes=")) o.minutes = std::stod(a.substr(10));
      else if (a.starts_with("--targets=")) { if (!parseTargets(a.substr(10), o.targets)) return false; }
      else if (a.starts_with("--regressions=")) o.regressions = a.substr(14);
      else if (a.starts_with("--reduce-checks=")) o.reduceChecks = std::stoi(a.substr(16));
      else if (a == "--print") o.print = true;
      else if (a == "--quiet") o.quiet = true;
      else if (a == "--replay") {
        for (++i; i < argc; ++i) o.replay.push_back(argv[i]);
        return !o.replay.empty();
      } else return false;
    } catch (const std::exception&) {
      return false;
    }
  }
  return true;
}

std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

std::string firstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

int replayFiles(const std::vector<std::string>& paths) {
  std::vector<fs::path> files;
  for (const std::string& p : paths) {
    if (fs::is_directory(p)) {
      for (const auto& e : fs::directory_iterator(p))
        if (e.path().extension() == ".tir") files.push_back(e.path());
    } else {
      files.push_back(p);
    }
  }
  std::sort(files.begin(), files.end());
  int bad = 0;
  for (const fs::path& f : files) {
    try {
      const Regression r = parseRegression(readFile(f), f.string());
      const Outcome o = checkInChildProcess([&] { return replay(r); });
      const bool failed = o.invalid || !o.findings.empty();
      const bool ok = failed == r.expectFailure && !o.invalid;
      std::printf("%-4s %s%s\n", ok ? "ok" : "BAD", f.filename().c_str(),
                  r.expectFailure ? (failed ? " (fails as expected)" : " (passes: drop 'expect: fail')") : "");
      if (o.invalid) std::printf("     invalid: %s\n", firstLine(o.invalidReason).c_str());
      for (const Finding& x : o.findings) std::printf("     %s: %s\n", x.signature().c_str(), firstLine(x.detail).c_str());
      bad += !ok;
    } catch (const std::exception& e) {
      std::printf("BAD  %s: %s\n", f.filename().c_str(), e.what());
      ++bad;
    }
  }
  std::printf("%zu regression files, %d not as expected\n", files.size(), bad);
  return bad ? 1 : 0;
}

// A file name part: letters, digits and '-' only.
std::string slug(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) out += c;
    else if (!out.empty() && out.back() != '-') out += '-';
    if (out.size() >= 48) break;
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

// Targets a reduction re-checks: only where the finding was (all of them for a crash).
Targets targetsOf(const Finding& f, const Targets& all) {
  if (f.where == "process") return all;
  Targets t;
  t.archs.clear();
  t.eager = f.where == "eager";
  if (!t.eager) t.archs.push_back(f.where.substr(0, f.where.find(' ')));
  return t;
}

void reportFailure(const Options& o, const Program& p, const Outcome& outcome) {
  const Finding& first = outcome.findings.front();
  std::printf("FAIL seed %llu:\n", static_cast<unsigned long long>(p.seed));
  for (const Finding& f : outcome.findings) std::printf("  %s: %s\n", f.signature().c_str(), firstLine(f.detail).c_str());
  const Targets where = targetsOf(first, o.targets);
  const std::string signature = first.signature();
  ReduceStats stats;
  Outcome reducedOutcome;
  const Program reduced = reduceProgram(
      p,
      [&](const Program& candidate) {
        Outcome c = checkInChildProcess([&] { return checkProgram(candidate, where); });
        for (const Finding& f : c.findings)
          if (f.signature() == signature) {
            reducedOutcome = c;
            return true;
          }
        return false;
      },
      o.reduceChecks, stats);
  if (reducedOutcome.findings.empty())
    reducedOutcome = checkInChildProcess([&] { return checkProgram(reduced, where); });
  std::printf("  reduced from %zu to %zu statements in %d checks\n", stats.statementsBefore, stats.statementsAfter,
              stats.checks);
  const Finding* finding = &first;
  for (const Finding& f : reducedOutcome.findings)
    if (f.signature() == signature) finding = &f;
  std::vector<std::string> archs = where.archs;
  if (archs.empty()) archs = o.targets.archs;  // an eager finding: the IR replays on every arch as well
  if (reducedOutcome.specializedIR.empty() && !archs.empty())  // a crash left none
    reducedOutcome.specializedIR = checkInChildProcess([&] {
                                     Outcome ir;
                                     ir.specializedIR = specializedIR(reduced, archs.front());
                                     return ir;
                                   }).specializedIR;
  if (where.eager) archs.insert(archs.begin(), "eager");  // the file's program replays in eager mode
  const std::string text = formatRegression(makeRegression(reduced, *finding, reducedOutcome.specializedIR, archs));
  if (o.regressions.empty()) {
    std::printf("%s\n", text.c_str());
    return;
  }
  fs::create_directories(o.regressions);
  const fs::path file =
      fs::path(o.regressions) / (slug(first.where + " " + first.what) + "-seed" + std::to_string(p.seed) + ".tir");
  std::ofstream(file) << text;
  std::printf("  written to %s\n", file.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (tessera::tools::printVersionIfAsked(argc, argv, "tessera-fuzz")) return 0;
  Options o;
  if (!parse(argc, argv, o)) {
    std::fprintf(stderr,
                 "usage: tessera-fuzz [--seed=N] [--count=N | --minutes=M] [--targets=eager,sm_80,sm_90a,gfx942] "
                 "[--regressions=DIR] [--reduce-checks=N] [--print] [--quiet]\n"
                 "       tessera-fuzz --replay PATH...\n");
    return 2;
  }
  if (!o.replay.empty()) return replayFiles(o.replay);

  const auto start = std::chrono::steady_clock::now();
  auto minutesSoFar = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / 60;
  };
  uint64_t run = 0, invalid = 0, failed = 0;
  std::map<std::string, int> bySignature;
  for (uint64_t i = 0; o.minutes > 0 ? minutesSoFar() < o.minutes : i < o.count; ++i) {
    const Program p = generateProgram(o.seed + i);
    if (o.print) {
      try {
        std::printf("%s\n", tessera::ir::print(*makeCase(p).kernel.trace({})).c_str());
      } catch (const std::exception& e) {
        std::printf("seed %llu does not trace: %s\n", static_cast<unsigned long long>(p.seed), e.what());
      }
    }
    const Outcome outcome = checkInChildProcess([&] { return checkProgram(p, o.targets); });
    ++run;
    if (outcome.invalid) {
      ++invalid;
      std::printf("INVALID seed %llu: %s\n", static_cast<unsigned long long>(p.seed),
                  firstLine(outcome.invalidReason).c_str());
    } else if (!outcome.findings.empty()) {
      ++failed;
      for (const Finding& f : outcome.findings) ++bySignature[f.signature()];
      reportFailure(o, p, outcome);
    } else if (!o.quiet) {
      std::printf("pass seed %llu (%zu statements)\n", static_cast<unsigned long long>(p.seed), liveStatements(p));
    }
    std::fflush(stdout);
  }
  std::printf("\n%llu programs in %.1f minutes: %llu passed, %llu failed, %llu invalid\n",
              static_cast<unsigned long long>(run), minutesSoFar(),
              static_cast<unsigned long long>(run - failed - invalid), static_cast<unsigned long long>(failed),
              static_cast<unsigned long long>(invalid));
  for (const auto& [signature, n] : bySignature) std::printf("  %4d x %s\n", n, signature.c_str());
  return failed || invalid ? 1 : 0;
}
