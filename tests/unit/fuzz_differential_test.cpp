// Differential fuzzing's parts (tests/fuzz/difffuzz): the generator is deterministic, valid by construction and
// covers the ops, debug_print included, which changes no result, and walking loads, whose pointers a loop carries; the comparison catches a wrong result or
// printed text; the reducer shrinks a failing program, one dimension alone where the failure needs the others
// large, and keeps it failing; programs and regression files round-trip, reject malformed input, and replay
// eager mode from the file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>

#include "ir/Error.h"
#include "ir/IR.h"
#include "ir/Printer.h"
#include "jit/sim/SimRuntime.h"
#include "tests/fuzz/difffuzz/Differential.h"
#include "tests/fuzz/difffuzz/Generator.h"
#include "tests/fuzz/difffuzz/Isolation.h"
#include "tests/fuzz/difffuzz/ProgramKernel.h"
#include "tests/fuzz/difffuzz/ProgramText.h"
#include "tests/fuzz/difffuzz/Reducer.h"
#include "tests/fuzz/difffuzz/Regression.h"

namespace tessera::fuzz {
namespace {

std::string traced(const Program& p) { return ir::print(*makeCase(p).kernel.trace({})); }

// A statement of `kind` defining `result` (or none, -1) of `type`, reading `args` (of the same type).
Stmt statement(StmtKind kind, int result, const ValueType& type, std::vector<int> args = {}, int buffer = -1) {
  Stmt s;
  s.kind = kind;
  s.result = result;
  s.type = type;
  s.args = std::move(args);
  s.argTypes.assign(s.args.size(), type);
  s.buffer = buffer;
  return s;
}

// v1 = load b0 [4 x f32]; debug_print v1; v2 = -v1; store v2 to b1.
Program loadPrintNegateStore() {
  const ValueType f32x4{ir::ScalarKind::F32, {2}};
  Program p;
  p.seed = 7;
  p.gridX = 2;
  p.buffers = {BufferSpec{BufferRole::Input, ir::ScalarKind::F32, false, 70},
               BufferSpec{BufferRole::Output, ir::ScalarKind::F32, false, 71}};
  p.body = {statement(StmtKind::Load, 1, f32x4, {}, 0), statement(StmtKind::DebugPrint, -1, f32x4, {1}),
            statement(StmtKind::Unary, 2, f32x4, {1}), statement(StmtKind::Store, -1, f32x4, {2}, 1)};
  p.body[2].op = static_cast<int>(UnaryOp::Neg);
  p.numSlots = 3;
  return p;
}

// The program with its statements as a regression file keeps them.
Program statementsRoundTrip(const Program& p) {
  std::vector<NumberedLine> lines;
  std::istringstream text(formatStatements(p));
  int number = 0;
  for (std::string line; std::getline(text, line);) lines.push_back({++number, line});
  Program back = p;
  back.shrink = 0;
  back.body = parseStatements(lines, "p.tir");
  back.numSlots = slotsUsed(back.body);
  return back;
}

void collectKinds(const std::vector<Stmt>& body, std::set<StmtKind>& kinds) {
  for (const Stmt& s : body) {
    kinds.insert(s.kind);
    collectKinds(s.body, kinds);
    collectKinds(s.orelse, kinds);
  }
}

void collectOps(const ir::Block& block, std::set<std::string>& names) {
  for (const auto& op : block.ops()) {
    names.insert(op->name());
    for (unsigned r = 0; r < op->numRegions(); ++r) collectOps(*op->region(r), names);
  }
}

TEST(FuzzGenerator, SameSeedSameProgram) {
  EXPECT_EQ(traced(generateProgram(42)), traced(generateProgram(42)));
  EXPECT_NE(traced(generateProgram(42)), traced(generateProgram(43)));
}

// Valid by construction: every program traces, and the interpreter and eager mode agree on it.
TEST(FuzzGenerator, ProgramsAreValidAndEagerAgrees) {
  Targets eagerOnly;
  eagerOnly.archs.clear();
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const Outcome o = checkProgram(generateProgram(seed), eagerOnly);
    EXPECT_FALSE(o.invalid) << "seed " << seed << ": " << o.invalidReason;
    for (const Finding& f : o.findings) ADD_FAILURE() << "seed " << seed << ": " << f.signature() << " " << f.detail;
  }
}

TEST(FuzzGenerator, CoversEveryDslOp) {
  std::set<std::string> seen;
  for (uint64_t seed = 1; seed <= 80; ++seed) {
    std::unique_ptr<ir::Module> m = makeCase(generateProgram(seed)).kernel.trace({});
    collectOps(*m->functions()[0]->body(), seen);
  }
  // Everything but what only passes insert (convert_layout, barrier).
  for (const char* op : {"constant", "program_id", "num_programs", "arange", "splat", "broadcast", "expand_dims",
                         "reshape", "trans", "cat", "join", "split", "add", "sub", "mul", "div", "rem", "min", "max",
                         "and", "or", "xor", "shl", "shr", "umulhi", "neg", "not", "abs", "exp", "exp2", "log",
                         "log2", "sqrt", "rsqrt", "sin", "cos", "tanh", "erf", "floor", "ceil", "fma", "cmp",
                         "select", "cast", "bitcast", "addptr", "load", "store", "atomic_rmw", "atomic_cas",
                         "reduce", "scan", "dot", "for", "if", "while", "device_assert", "hint", "debug_print"})
    EXPECT_TRUE(seen.count(op)) << op << " never generated";
}

// acc = 0; for i in range(3) { acc = acc + walking load of b0 [4 x f32] }; store acc to b1: the loop carries
// the load's pointer tile, one tile further each iteration, over a buffer of 3 tiles per program.
Program walkingLoadSum() {
  const ValueType f32x4{ir::ScalarKind::F32, {2}};
  Program p;
  p.seed = 9;
  p.gridX = 2;
  p.buffers = {BufferSpec{BufferRole::Input, ir::ScalarKind::F32, false, 90},
               BufferSpec{BufferRole::Output, ir::ScalarKind::F32, false, 91}};
  Stmt loop = statement(StmtKind::For, 2, ValueType{ir::ScalarKind::I32, {}});
  loop.constant = 3;
  loop.body = {statement(StmtKind::Load, 3, f32x4, {}, 0), statement(StmtKind::Binary, 4, f32x4, {1, 3}),
               statement(StmtKind::Assign, 1, f32x4, {4})};
  loop.body[0].op = 1;  // walking
  loop.body[1].op = static_cast<int>(BinaryOp::Add);
  p.body = {statement(StmtKind::Constant, 1, f32x4), std::move(loop), statement(StmtKind::Store, -1, f32x4, {1}, 1)};
  p.numSlots = 5;
  return p;
}

// Whether a `for` of the traced IR carries a pointer tile (its result types name one).
bool forCarriesPointers(const std::string& ir) {
  for (size_t at = ir.find("= for"); at != std::string::npos; at = ir.find("= for", at + 1))
    if (ir.substr(at, ir.find('\n', at) - at).find("ptr<") != std::string::npos) return true;
  return false;
}

TEST(FuzzGenerator, WalkingLoadsCarryTheirPointersThroughTheLoop) {
  const Program p = walkingLoadSum();
  EXPECT_EQ(bufferStride(p, 0), 12);  // three tiles of 4 per program
  EXPECT_EQ(bufferStride(p, 1), 4);
  const std::string ir = traced(p);
  EXPECT_TRUE(forCarriesPointers(ir)) << ir;
  // Every backend agrees on it: the interpreter, eager mode, the emulator and the pipeline's output.
  Targets targets;
  targets.archs = {"sm_80"};
  const Outcome o = checkProgram(p, targets);
  EXPECT_FALSE(o.invalid) << o.invalidReason;
  for (const Finding& f : o.findings) ADD_FAILURE() << f.signature() << " " << f.detail;
  // Moved out of its loop (as the reducer may), the load reads its one tile.
  Program flat = p;
  flat.body = {p.body[0], p.body[1].body[0], p.body[2]};
  EXPECT_EQ(bufferStride(flat, 0), 4);
  Program still = p;
  still.body[1].body[0].op = 0;  // not walking: the loop carries no pointers
  EXPECT_FALSE(forCarriesPointers(traced(still)));
  // And the generator makes them: some of the first 60 programs carry pointer tiles through a loop.
  int carrying = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) carrying += forCarriesPointers(traced(generateProgram(seed)));
  EXPECT_GT(carrying, 10);
}

// debug_print prints, and changes no result: without its statements a program leaves the same buffers on the
// interpreter and on the emulator.
TEST(FuzzGenerator, DebugPrintChangesNoResult) {
  int checked = 0;
  for (uint64_t seed = 1; seed <= 200 && checked < 2; ++seed) {
    const Program p = generateProgram(seed);
    if (std::none_of(p.body.begin(), p.body.end(), [](const Stmt& s) { return s.kind == StmtKind::DebugPrint; }))
      continue;
    Program silent = p;
    for (Stmt& s : silent.body) s.deleted |= s.kind == StmtKind::DebugPrint;
    std::ostringstream printed, none;
    const auto loud = gpucheck::runOnInterpreter(makeCase(p), &printed);
    const auto quiet = gpucheck::runOnInterpreter(makeCase(silent), &none);
    EXPECT_NE(printed.str().find(" v"), std::string::npos) << "seed " << seed << " printed: " << printed.str();
    EXPECT_EQ(none.str(), "");
    ASSERT_EQ(loud.size(), quiet.size());
    for (size_t i = 0; i < loud.size(); ++i)
      EXPECT_EQ(loud[i].bytes, quiet[i].bytes) << "seed " << seed << " buffer " << i;
    jit::KernelCache cache{std::filesystem::path()};
    const auto device = gpucheck::runOnDevice(makeCase(p), cache, sim::simRuntime("sm_80")).buffers;
    const auto deviceQuiet = gpucheck::runOnDevice(makeCase(silent), cache, sim::simRuntime("sm_80")).buffers;
    for (size_t i = 0; i < device.size(); ++i) EXPECT_EQ(device[i].bytes, deviceQuiet[i].bytes) << "seed " << seed;
    ++checked;
  }
  EXPECT_EQ(checked, 2) << "too few programs print at their top level";
}

// Bit-for-bit buffers (every fuzzed buffer but approximate math) see even the sign of a zero.
TEST(FuzzComparison, BitExactBuffersSeeTheSignOfZero) {
  gpucheck::HostBuffer ref{ir::ScalarKind::F32, std::vector<uint8_t>(4, 0), gpucheck::Tolerance{0, 0, true}};
  gpucheck::HostBuffer got = ref;
  got.bytes[3] = 0x80;  // -0.0
  gpucheck::CheckResult r;
  gpucheck::compareBuffers({ref}, {got}, gpucheck::Tolerance{}, r, "sm_80", "interpreter");
  EXPECT_EQ(r.mismatches, 1u);
  EXPECT_NE(r.firstMismatch.find("bits differ"), std::string::npos) << r.firstMismatch;
}

// A check runs in a child: its outcome comes back whole, and a crash becomes a finding with the last words.
TEST(FuzzIsolation, OutcomesComeBackAndCrashesAreFindings) {
  const Outcome ok = checkInChildProcess([] {
    Outcome o;
    o.specializedIR = "func @k() {}";
    o.findings.push_back({"sm_80", "mismatch", std::string("a\0b", 3)});
    return o;
  });
  EXPECT_FALSE(ok.invalid);
  EXPECT_EQ(ok.specializedIR, "func @k() {}");
  ASSERT_EQ(ok.findings.size(), 1u);
  EXPECT_EQ(ok.findings[0].detail, std::string("a\0b", 3));

  const Outcome crashed = checkInChildProcess([]() -> Outcome {
    std::fprintf(stderr, "LLVM ERROR: Cannot select: 0x1234: bf16 = uint_to_fp\n");
    std::abort();
  });
  ASSERT_EQ(crashed.findings.size(), 1u);
  EXPECT_EQ(crashed.findings[0].where, "process");
  EXPECT_EQ(crashed.findings[0].what, "crash");
  EXPECT_NE(crashed.findings[0].detail.find("Cannot select"), std::string::npos) << crashed.findings[0].detail;
  EXPECT_NE(crashed.findings[0].detail.find("Abort"), std::string::npos) << crashed.findings[0].detail;
  EXPECT_EQ(crashed.findings[0].signature(), "process crash: LLVM ERROR: Cannot select: bf = uint_to_fp (killed by Aborted) ")
      << "addresses and numbers are not part of the signature";
}

TEST(FuzzReducer, ShrinksWhileThePredicateHolds) {
  // "Fails" while the program still contains a dot: the reducer must keep one and drop most of the rest.
  uint64_t seed = 1;
  auto hasDot = [](const Program& p) {
    try {
      return traced(p).find(" dot ") != std::string::npos;
    } catch (const Error&) {
      return false;  // a candidate that no longer traces does not show the failure
    }
  };
  Program p = generateProgram(seed);
  while (!hasDot(p)) p = generateProgram(++seed);
  ReduceStats stats;
  const Program reduced = reduceProgram(p, hasDot, 500, stats);
  EXPECT_TRUE(hasDot(reduced));
  EXPECT_LT(stats.statementsAfter, stats.statementsBefore);
  EXPECT_LE(stats.statementsAfter, 6u) << traced(reduced);
  EXPECT_EQ(reduced.gridX * reduced.gridY, 1);
}

// A failure that needs one large dimension keeps only that one: here a dot whose N is at least 16. Shrinking
// every dimension together (what the reducer did alone before) would stop with M and K at 4 or more, as the
// generator makes them 16 to 64.
TEST(FuzzReducer, ShrinksOneDimensionAlone) {
  auto liveDot = [](const Program& p) -> const Stmt* {
    for (const Stmt& s : p.body)
      if (!s.deleted && s.kind == StmtKind::Dot) return &s;
    return nullptr;
  };
  auto wideDot = [&](const Program& p) {
    const Stmt* dot = liveDot(p);
    if (!dot) return false;
    try {
      traced(p);
    } catch (const Error&) {
      return false;
    }
    return shapeOf(p, dot->type)[1] >= 16;
  };
  uint64_t seed = 1;
  Program p = generateProgram(seed);
  while (!wideDot(p)) p = generateProgram(++seed);
  ReduceStats stats;
  const Program reduced = reduceProgram(p, wideDot, 800, stats);
  ASSERT_TRUE(wideDot(reduced));
  const Stmt& dot = *liveDot(reduced);
  const std::vector<int64_t> a = shapeOf(reduced, dot.argTypes[0]);
  EXPECT_EQ(a[0], 1) << "M\n" << traced(reduced);
  EXPECT_EQ(a[1], 1) << "K\n" << traced(reduced);
  EXPECT_EQ(shapeOf(reduced, dot.type)[1], 16) << "N";
}

// Statements written and parsed back give the same program (its shrink applied), for every kind generated.
TEST(FuzzProgramText, RoundTrips) {
  std::set<StmtKind> kinds;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    Program p = generateProgram(seed);
    collectKinds(p.body, kinds);
    p.shrink = 1;  // where the program stays valid (a reshape's two sides may no longer match)
    try {
      traced(p);
    } catch (const Error&) {
      p.shrink = 0;
    }
    const Program back = statementsRoundTrip(p);
    EXPECT_EQ(formatStatements(back), formatStatements(p)) << "seed " << seed;
    EXPECT_EQ(traced(back), traced(p)) << "seed " << seed;
  }
  EXPECT_EQ(kinds.size(), static_cast<size_t>(StmtKind::DebugPrint) + 1) << "a kind is never generated";
}

TEST(FuzzProgramText, MalformedLinesNameTheLine) {
  auto error = [](std::vector<NumberedLine> lines) {
    try {
      parseStatements(lines, "p.tir");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error({{7, "frobnicate type=f32[]"}}).find("p.tir:7: unknown statement kind"), std::string::npos);
  EXPECT_NE(error({{3, "load result=1"}}).find("p.tir:3: no type="), std::string::npos);
  EXPECT_NE(error({{4, "load type=f33[2]"}}).find("p.tir:4: unknown dtype"), std::string::npos);
  EXPECT_NE(error({{5, "load type=f32[2] mask=some"}}).find("p.tir:5: unknown mask"), std::string::npos);
  EXPECT_NE(error({{6, "store type=f32[2] arg=x:f32[2]"}}).find("p.tir:6: 'x' is not an integer"), std::string::npos);
  EXPECT_NE(error({{1, "load type=f32[2]"}, {2, "    store type=f32[2]"}}).find("p.tir:2: indented deeper"),
            std::string::npos);
}

// An eager-mode failure replays from its regression file: the file keeps the program, which eager mode runs
// against the interpreter on the file's IR. A program that differs from the IR (as a wrong eager result would) is
// a finding there, and so is one that prints other text while computing the same buffers.
TEST(FuzzRegression, EagerModeReplaysFromTheFile) {
  const Program p = loadPrintNegateStore();
  const std::string file = formatRegression(
      makeRegression(p, Finding{"eager", "mismatch", "4 elements"}, specializedIR(p, "sm_80"), {"eager"}));
  Regression r = parseRegression(file, "eager.tir");
  ASSERT_TRUE(r.program);
  EXPECT_EQ(formatStatements(*r.program), formatStatements(p));
  EXPECT_EQ(r.program->seed, 7u);
  const Outcome same = replay(r);
  EXPECT_FALSE(same.invalid) << same.invalidReason;
  EXPECT_TRUE(same.findings.empty()) << same.findings.front().signature() << " " << same.findings.front().detail;

  Regression wrong = r;
  wrong.program->body[2].op = static_cast<int>(UnaryOp::Abs);
  const Outcome differs = replay(wrong);
  ASSERT_EQ(differs.findings.size(), 1u);
  EXPECT_EQ(differs.findings[0].signature(), "eager mismatch") << differs.findings[0].detail;

  Regression printsOther = r;  // prints v3, a second load of the same buffer, instead of v1
  printsOther.program->body.insert(printsOther.program->body.begin() + 1,
                                   statement(StmtKind::Load, 3, p.body[0].type, {}, 0));
  printsOther.program->body[2].args = {3};
  printsOther.program->numSlots = 4;
  const Outcome printed = replay(printsOther);
  ASSERT_EQ(printed.findings.size(), 1u);
  EXPECT_EQ(printed.findings[0].signature(), "eager print mismatch") << printed.findings[0].detail;
  EXPECT_NE(printed.findings[0].detail.find("v3"), std::string::npos) << printed.findings[0].detail;

  EXPECT_THROW(parseRegression(file.substr(0, file.find("// program:")) + "func @k() {\n  return\n}\n", "old.tir"),
               Error)
      << "eager among the archs of a file without its program";
}

TEST(FuzzRegression, FormatsAndParsesBack) {
  Regression r;
  r.title = "sm_80 mismatch";
  r.detail = "1 elements; buffer 0 [0]: sm_80 1, interpreter 2";
  r.expectFailure = true;
  r.reason = "the emulator lacks x";
  r.grid = {2, 3, 1};
  r.numWarps = 2;
  r.limitPercent = 40;
  r.archs = {"sm_80", "gfx942"};
  r.buffers = {{BufferSpec{BufferRole::Atomic, ir::ScalarKind::U64, false, 77}, 16},
               {BufferSpec{BufferRole::Output, ir::ScalarKind::BF16, true, 78}, 8}};
  r.ir = "func @k() {\n  return\n}\n";
  const Regression back = parseRegression(formatRegression(r), "r.tir");
  EXPECT_EQ(back.title, r.title);
  EXPECT_EQ(back.detail, r.detail);
  EXPECT_TRUE(back.expectFailure);
  EXPECT_EQ(back.reason, r.reason);
  EXPECT_EQ(back.grid, r.grid);
  EXPECT_EQ(back.numWarps, 2);
  EXPECT_EQ(back.limitPercent, 40);
  EXPECT_EQ(back.archs, r.archs);
  ASSERT_EQ(back.buffers.size(), 2u);
  EXPECT_EQ(back.buffers[0].spec.role, BufferRole::Atomic);
  EXPECT_EQ(back.buffers[0].spec.dtype, ir::ScalarKind::U64);
  EXPECT_EQ(back.buffers[0].spec.dataSeed, 77u);
  EXPECT_EQ(back.buffers[1].elements, 8);
  EXPECT_TRUE(back.buffers[1].spec.approximate);
  EXPECT_NE(back.ir.find("func @k()"), std::string::npos);
}

TEST(FuzzRegression, MalformedHeadersNameTheLine) {
  try {
    parseRegression("// tessera-fuzz regression: x\n// archs: sm_80\n// buffer: input f33 4 1\n", "bad.tir");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.tir:3: unknown dtype"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parseRegression("func @k() {\n  return\n}\n", "plain.tir"), Error);
}

}  // namespace
}  // namespace tessera::fuzz
