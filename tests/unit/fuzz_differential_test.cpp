// Differential fuzzing's parts (tests/fuzz/difffuzz): the generator is deterministic, valid by construction and
// covers the ops; the comparison catches a wrong result; the reducer shrinks a failing program and keeps it
// failing; regression files round-trip and reject malformed headers.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "ir/Error.h"
#include "ir/IR.h"
#include "ir/Printer.h"
#include "tests/fuzz/difffuzz/Differential.h"
#include "tests/fuzz/difffuzz/Generator.h"
#include "tests/fuzz/difffuzz/Isolation.h"
#include "tests/fuzz/difffuzz/ProgramKernel.h"
#include "tests/fuzz/difffuzz/Reducer.h"
#include "tests/fuzz/difffuzz/Regression.h"

namespace tessera::fuzz {
namespace {

std::string traced(const Program& p) { return ir::print(*makeCase(p).kernel.trace({})); }

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
  // Everything but what only passes insert (convert_layout, barrier) and debug_print (no buffer to compare).
  for (const char* op : {"constant", "program_id", "num_programs", "arange", "splat", "broadcast", "expand_dims",
                         "reshape", "trans", "cat", "join", "split", "add", "sub", "mul", "div", "rem", "min", "max",
                         "and", "or", "xor", "shl", "shr", "umulhi", "neg", "not", "abs", "exp", "exp2", "log",
                         "log2", "sqrt", "rsqrt", "sin", "cos", "tanh", "erf", "floor", "ceil", "fma", "cmp",
                         "select", "cast", "bitcast", "addptr", "load", "store", "atomic_rmw", "atomic_cas",
                         "reduce", "scan", "dot", "for", "if", "while", "device_assert", "hint"})
    EXPECT_TRUE(seen.count(op)) << op << " never generated";
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
