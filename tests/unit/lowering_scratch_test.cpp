// The shared-memory scratch contract (transforms/analysis/SharedScratch.h) seen from both sides: for every op family
// with scratch, the bytes allocate-shared-memory reserves are exactly the bytes the NVPTX lowering asks for (the
// parallel scan, which uses a prefix of the scan's area, asks for at most that). What the lowering asks for is
// read from its diagnostic when the op's smem_bytes is set to 0.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <regex>
#include <string>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "backends/Target.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"
#include "transforms/PassManager.h"
#include "transforms/analysis/SharedScratch.h"

namespace {

using namespace tessera;
using ir::Op;
using ir::OpKind;

// `%name` = the row-major offsets i * cols + j of an R x C tile (i32), through arange/expand_dims/broadcast.
std::string offsets2d(const std::string& name, int64_t rows, int64_t cols) {
  const std::string r = std::to_string(rows), c = std::to_string(cols);
  const std::string n = name;
  return "  %" + n + "_i = arange {end = " + r + ", start = 0} : tile<" + r + "xi32>\n" +
         "  %" + n + "_j = arange {end = " + c + ", start = 0} : tile<" + c + "xi32>\n" +
         "  %" + n + "_i2 = expand_dims %" + n + "_i {axis = 1} : tile<" + r + "x1xi32>\n" +
         "  %" + n + "_j2 = expand_dims %" + n + "_j {axis = 0} : tile<1x" + c + "xi32>\n" +
         "  %" + n + "_k = constant {value = " + c + "} : tile<" + r + "x1xi32>\n" +
         "  %" + n + "_ik = mul %" + n + "_i2, %" + n + "_k : tile<" + r + "x1xi32>\n" +
         "  %" + n + "_ib = broadcast %" + n + "_ik : tile<" + r + "x" + c + "xi32>\n" +
         "  %" + n + "_jb = broadcast %" + n + "_j2 : tile<" + r + "x" + c + "xi32>\n" +
         "  %" + n + " = add %" + n + "_ib, %" + n + "_jb : tile<" + r + "x" + c + "xi32>\n";
}

// `%name` = a R x C tile of `element` loaded row-major from pointer argument `%ptr`.
std::string load2d(const std::string& name, const std::string& ptr, int64_t rows, int64_t cols,
                   const std::string& element) {
  const std::string shape = std::to_string(rows) + "x" + std::to_string(cols);
  return offsets2d(name + "_off", rows, cols) + "  %" + name + "_base = splat %" + ptr + " : tile<" + shape +
         "xptr<" + element + ">>\n" + "  %" + name + "_ptr = addptr %" + name + "_base, %" + name +
         "_off : tile<" + shape + "xptr<" + element + ">>\n" + "  %" + name + " = load %" + name + "_ptr : tile<" +
         shape + "x" + element + ">\n";
}

// acc (32x32 f32) + a (32xK) . b (Kx32), inputs of element type `input`, stored back over acc.
std::string dotKernel(const std::string& input, int64_t k) {
  return "func @k(%a: ptr<" + input + "> {divisibility = 16}, %b: ptr<" + input + "> {divisibility = 16}, " +
         "%c: ptr<f32> {divisibility = 16}) {\n" + load2d("x", "a", 32, k, input) + load2d("y", "b", k, 32, input) +
         load2d("z", "c", 32, 32, "f32") +
         "  %d = dot %x, %y, %z {input_precision = \"ieee\"} : tile<32x32xf32>\n"
         "  store %z_ptr, %d\n  return\n}\n";
}

const char* kAddRegion = "^(%acc: f32, %elem: f32):\n    %sum = add %acc, %elem : f32\n    yield %sum\n  }\n";

struct Family {
  const char* name;
  std::string kernel;                           // IR text without layouts
  std::function<bool(const Op&)> owner;         // the op whose scratch is checked
  bool usesPrefix = false;                      // the lowering may ask for less than the rule (parallel scan)
};

std::vector<Family> families() {
  const std::string header = "func @k(%in: ptr<f32> {divisibility = 16}, %out: ptr<f32> {divisibility = 16}) {\n";
  auto is = [](OpKind kind) { return [kind](const Op& op) { return op.is(kind); }; };
  return {
      {"exchange (transposing store)",
       header + load2d("x", "in", 64, 64, "f32") + offsets2d("t", 64, 64) +
           "  %tk = trans %t {perm = [1, 0]} : tile<64x64xi32>\n"
           "  %tb = splat %out : tile<64x64xptr<f32>>\n"
           "  %tp = addptr %tb, %tk : tile<64x64xptr<f32>>\n"
           "  store %tp, %x\n  return\n}\n",
       [](const Op& op) { return transforms::isExchangeOp(op); }},
      {"reduce across warps",
       header + load2d("x", "in", 32, 32, "f32") +
           "  %s = reduce %x {axis = 0} : tile<32xf32> {\n  " + kAddRegion +
           "  %o = arange {end = 32, start = 0} : tile<32xi32>\n"
           "  %ob = splat %out : tile<32xptr<f32>>\n"
           "  %op = addptr %ob, %o : tile<32xptr<f32>>\n"
           "  store %op, %s\n  return\n}\n",
       is(OpKind::Reduce)},
      {"scan across warps",
       header + load2d("x", "in", 32, 32, "f32") +
           "  %s = scan %x {axis = 0, reverse = false} : tile<32x32xf32> {\n  " + kAddRegion +
           "  %ob = splat %out : tile<32x32xptr<f32>>\n"
           "  %op = addptr %ob, %x_off : tile<32x32xptr<f32>>\n"
           "  store %op, %s\n  return\n}\n",
       is(OpKind::Scan), /*usesPrefix=*/true},
      {"dot on FMAs (f32)", dotKernel("f32", 16), is(OpKind::Dot)},
      {"dot on tensor cores (f16)", dotKernel("f16", 32), is(OpKind::Dot)},
      {"atomic broadcast",
       header +
           "  %one = constant {value = 1.0} : f32\n"
           "  %old = atomic_rmw %in, %one {kind = \"add\", scope = \"gpu\", sem = \"acq_rel\"} : f32\n"
           "  store %out, %old\n  return\n}\n",
       is(OpKind::AtomicRMW)},
  };
}

// Runs the layout passes and allocate-shared-memory for the NVPTX target, as the JIT does.
std::unique_ptr<ir::Module> laidOut(const std::string& text, const backends::Target& target) {
  std::unique_ptr<ir::Module> m = ir::parseModule(text, "scratch.tir");
  ir::verify(*m);
  transforms::PassOptions options{4, target.warpSize(), nullptr};
  options.layoutPolicy = target.layoutPolicy(options);
  transforms::PassManager pm;
  for (const char* pass : {"coalesce", "assign-layouts", "remove-layout-conversions", "allocate-shared-memory"})
    pm.add(transforms::createPass(pass, options));
  pm.run(*m);
  return m;
}

void lower(const ir::Function& f, const backends::Target& target) {
  llvm::LLVMContext ctx;
  backends::TargetOptions opts;
  opts.arch = "sm_80";
  target.lowerToLLVM(f, ctx, opts);
}

TEST(ScratchContract, AllocationEqualsWhatTheLoweringAsksFor) {
  std::unique_ptr<backends::Target> target = backends::createTarget("nvptx");
  for (const Family& family : families()) {
    SCOPED_TRACE(family.name);
    std::unique_ptr<ir::Module> m = laidOut(family.kernel, *target);
    ir::Function& f = *m->functions().at(0);
    std::vector<Op*> owners;
    f.walk([&](Op* op) {
      if (family.owner(*op) && op->hasAttr("smem_bytes")) owners.push_back(op);
    });
    ASSERT_FALSE(owners.empty()) << "no op of the family got scratch";
    ASSERT_NO_THROW(lower(f, *target));  // the allocation as the pass made it suffices

    for (Op* op : owners) {
      const int64_t allocated = op->intAttr("smem_bytes");
      op->setAttr("smem_bytes", ir::Attr::integer(0));
      std::string message;
      try {
        lower(f, *target);
      } catch (const Error& e) {
        message = e.what();
      }
      op->setAttr("smem_bytes", ir::Attr::integer(allocated));
      std::smatch match;
      ASSERT_TRUE(std::regex_search(message, match, std::regex("needs ([0-9]+) bytes of shared-memory scratch")))
          << "lowering with smem_bytes = 0 did not ask for scratch: " << message;
      const int64_t asked = std::stoll(match[1].str());
      EXPECT_GT(asked, 0);
      if (family.usesPrefix)
        EXPECT_LE(asked, allocated) << op->describe();
      else
        EXPECT_EQ(asked, allocated) << op->describe();
    }
  }
}

// The lowering reads an op's range as the barrier analysis does (scratchRangeOf): a half-given or negative range is
// an error naming the op, not a pointer into someone else's bytes.
TEST(ScratchContract, TheLoweringRejectsAMalformedRange) {
  std::unique_ptr<backends::Target> target = backends::createTarget("nvptx");
  std::unique_ptr<ir::Module> m = laidOut(dotKernel("f32", 16), *target);
  ir::Function& f = *m->functions().at(0);
  Op* dot = nullptr;
  f.walk([&](Op* op) {
    if (op->is(OpKind::Dot)) dot = op;
  });
  ASSERT_NE(dot, nullptr);
  const ir::Attr bytes = dot->attr("smem_bytes");
  auto loweringError = [&] {
    try {
      lower(f, *target);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  dot->attrs().erase("smem_bytes");
  EXPECT_NE(loweringError().find("'dot'"), std::string::npos) << loweringError();
  EXPECT_NE(loweringError().find("has only one of 'smem_offset' and 'smem_bytes'"), std::string::npos)
      << loweringError();
  dot->setAttr("smem_bytes", bytes);
  dot->setAttr("smem_offset", ir::Attr::integer(-16));
  EXPECT_NE(loweringError().find("'smem_offset' must be a non-negative int"), std::string::npos) << loweringError();
}

}  // namespace
