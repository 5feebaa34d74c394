#include "tests/fuzz/difffuzz/Regression.h"

#include <algorithm>
#include <sstream>

#include "ir/Error.h"
#include "tests/fuzz/difffuzz/ProgramKernel.h"
#include "tests/fuzz/difffuzz/ProgramText.h"

namespace tessera::fuzz {

namespace {

const char* roleName(BufferRole r) {
  switch (r) {
    case BufferRole::Input: return "input";
    case BufferRole::Output: return "output";
    case BufferRole::Atomic: return "atomic";
  }
  return "?";
}

std::string firstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

// Every buffer a statement names must be in the header, or the replayed kernel would index past its parameters.
void checkBuffers(const std::vector<Stmt>& body, size_t buffers, const std::string& fileName) {
  for (const Stmt& s : body) {
    if (s.buffer >= static_cast<int>(buffers))
      throw Error(fileName + ": a statement uses buffer " + std::to_string(s.buffer) + ", and the header lists " +
                  std::to_string(buffers));
    checkBuffers(s.body, buffers, fileName);
    checkBuffers(s.orelse, buffers, fileName);
  }
}

// The program of a regression's statements: its launch and buffers are the header's.
Program programOf(const Regression& r, uint64_t seed, std::vector<Stmt> body, const std::string& fileName) {
  checkBuffers(body, r.buffers.size(), fileName);
  Program p;
  p.seed = seed;
  p.gridX = static_cast<int>(r.grid[0]);
  p.gridY = static_cast<int>(r.grid[1]);
  p.numWarps = r.numWarps;
  p.limitPercent = r.limitPercent;
  for (const RegressionBuffer& b : r.buffers) p.buffers.push_back(b.spec);
  p.numSlots = slotsUsed(body);
  p.body = std::move(body);
  return p;
}

}  // namespace

Regression makeRegression(const Program& p, const Finding& finding, const std::string& ir,
                          const std::vector<std::string>& archs) {
  Regression r;
  r.title = finding.signature();
  r.detail = firstLine(finding.detail);
  r.grid = {p.gridX, p.gridY, 1};
  r.numWarps = p.numWarps;
  r.limitPercent = p.limitPercent;
  r.archs = archs;
  const int64_t programs = int64_t(p.gridX) * p.gridY;
  for (size_t i = 0; i < p.buffers.size(); ++i)
    r.buffers.push_back({p.buffers[i], programs * bufferStride(p, static_cast<int>(i))});
  r.program = p;
  r.ir = ir;
  return r;
}

std::string formatRegression(const Regression& r) {
  std::ostringstream os;
  os << "// tessera-fuzz regression: " << r.title << "\n";
  os << "// detail: " << r.detail << "\n";
  os << "// expect: " << (r.expectFailure ? "fail " + r.reason : std::string("pass")) << "\n";
  os << "// grid: " << r.grid[0] << " " << r.grid[1] << "\n";
  os << "// warps: " << r.numWarps << "\n";
  os << "// limit: " << r.limitPercent << "\n";
  os << "// archs:";
  for (const std::string& a : r.archs) os << " " << a;
  os << "\n";
  for (const RegressionBuffer& b : r.buffers)
    os << "// buffer: " << roleName(b.spec.role) << " " << ir::scalarKindName(b.spec.dtype) << " " << b.elements << " "
       << b.spec.dataSeed << (b.spec.approximate ? " approx" : "") << "\n";
  if (r.program) {
    os << "// program: " << r.program->seed << "\n";
    std::istringstream statements(formatStatements(*r.program));
    for (std::string line; std::getline(statements, line);) os << "// stmt: " << line << "\n";
  }
  os << r.ir;
  return os.str();
}

Regression parseRegression(const std::string& text, const std::string& fileName) {
  Regression r;
  std::istringstream in(text);
  std::string line;
  int lineNo = 0;
  auto bad = [&](const std::string& why) {
    return Error(fileName + ":" + std::to_string(lineNo) + ": " + why + ": '" + line + "'");
  };
  bool sawHeader = false;
  std::optional<uint64_t> programSeed;
  std::vector<NumberedLine> statements;
  while (std::getline(in, line)) {
    ++lineNo;
    if (!line.starts_with("// ")) continue;
    const size_t colon = line.find(": ");
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(3, colon - 3);
    std::istringstream value(line.substr(colon + 2));
    if (key == "tessera-fuzz regression") {
      r.title = value.str();
      sawHeader = true;
    } else if (key == "detail") {
      r.detail = value.str();
    } else if (key == "expect") {
      std::string word;
      value >> word;
      if (word != "pass" && word != "fail") throw bad("expect is 'pass' or 'fail <reason>'");
      r.expectFailure = word == "fail";
      std::getline(value >> std::ws, r.reason);
    } else if (key == "grid") {
      if (!(value >> r.grid[0] >> r.grid[1])) throw bad("grid needs two sizes");
    } else if (key == "warps") {
      if (!(value >> r.numWarps)) throw bad("warps needs a count");
    } else if (key == "limit") {
      if (!(value >> r.limitPercent)) throw bad("limit needs a percentage");
    } else if (key == "archs") {
      for (std::string a; value >> a;) r.archs.push_back(a);
    } else if (key == "buffer") {
      std::string role, dtype, approx;
      RegressionBuffer b;
      if (!(value >> role >> dtype >> b.elements >> b.spec.dataSeed)) throw bad("buffer needs role, dtype, elements, seed");
      value >> approx;
      b.spec.role = role == "input" ? BufferRole::Input : role == "output" ? BufferRole::Output : BufferRole::Atomic;
      if (role != "input" && role != "output" && role != "atomic") throw bad("unknown buffer role");
      std::optional<ScalarKind> kind = ir::scalarKindFromName(dtype);
      if (!kind) throw bad("unknown dtype");
      b.spec.dtype = *kind;
      b.spec.approximate = approx == "approx";
      r.buffers.push_back(b);
    } else if (key == "program") {
      uint64_t seed = 0;
      if (!(value >> seed)) throw bad("program needs its seed");
      programSeed = seed;
    } else if (key == "stmt") {
      statements.push_back({lineNo, line.substr(colon + 2)});
    }
  }
  if (!sawHeader) throw Error(fileName + ": not a tessera-fuzz regression (no '// tessera-fuzz regression:' line)");
  if (r.archs.empty()) throw Error(fileName + ": no '// archs:' line");
  if (!statements.empty() && !programSeed) throw Error(fileName + ": '// stmt:' lines without a '// program:' line");
  if (programSeed) r.program = programOf(r, *programSeed, parseStatements(statements, fileName), fileName);
  if (!r.program && std::find(r.archs.begin(), r.archs.end(), "eager") != r.archs.end())
    throw Error(fileName + ": eager mode replays the program, and the file has no '// program:' line");
  r.ir = text;  // the parser skips the comment lines
  return r;
}

Outcome replay(const Regression& r) {
  std::vector<gpucheck::CheckArg> args;
  for (const RegressionBuffer& b : r.buffers) args.push_back(initialBuffer(b.spec, b.elements));
  args.push_back(r.limitPercent);
  Targets targets;
  targets.archs.clear();
  targets.eager = false;
  for (const std::string& a : r.archs) {
    if (a == "eager") targets.eager = true;
    else targets.archs.push_back(a);
  }
  return checkIR(r.ir, r.grid, r.numWarps, args, targets, r.program ? &*r.program : nullptr);
}

}  // namespace tessera::fuzz
