#include "backends/nvptx/WgmmaAsm.h"

#include <algorithm>
#include <sstream>
#include <unordered_map>

#include "ir/Error.h"

namespace tessera::backends::nvptx {

namespace {

const char* inputName(WgmmaInput input) {
  switch (input) {
    case WgmmaInput::F16: return "f16";
    case WgmmaInput::BF16: return "bf16";
    case WgmmaInput::E4M3: return "e4m3";
    case WgmmaInput::E5M2: return "e5m2";
  }
  return "?";
}

// The instructions the ISA defines: 16-bit A and B of one type, any transposes (A in registers: none of A); 8-bit
// floats, mixed, none, A from shared memory (the backend takes no 8-bit A from registers).
bool valid(const WgmmaMma& mma) {
  if (wgmmaTransposable(mma.inputA)) return mma.inputB == mma.inputA && !(mma.aInRegisters && mma.transposeA);
  if (mma.aInRegisters) return false;
  return !wgmmaTransposable(mma.inputB) && !mma.transposeA && !mma.transposeB;
}

// `outputs` "=f" registers, then `inputs`, then one input tied to each output.
std::string tiedConstraints(int outputs, const std::string& inputs) {
  std::string c;
  for (int i = 0; i < outputs; ++i) c += i ? ",=f" : "=f";
  if (!inputs.empty()) c += (c.empty() ? "" : ",") + inputs;
  for (int i = 0; i < outputs; ++i) c += (c.empty() ? "" : ",") + std::to_string(i);
  return c;
}

std::string key(std::string_view asmString, std::string_view constraints) {
  std::string k(asmString);
  k += '\n';
  k += constraints;
  return k;
}

// Every string the backend may emit, generated once.
const std::unordered_map<std::string, WgmmaAsm>& wgmmaAsmSet() {
  static const std::unordered_map<std::string, WgmmaAsm> set = [] {
    std::unordered_map<std::string, WgmmaAsm> s;
    auto entry = [](WgmmaAsm::Kind kind, int pendingGroups = 0, int registers = 0) {
      WgmmaAsm e;
      e.kind = kind;
      e.pendingGroups = pendingGroups;
      e.registers = registers;
      return e;
    };
    s[key(kWgmmaFenceAsm, "")] = entry(WgmmaAsm::Kind::Fence);
    s[key(kProxyFenceAsm, "")] = entry(WgmmaAsm::Kind::ProxyFence);
    s[key(kWgmmaCommitAsm, "")] = entry(WgmmaAsm::Kind::Commit);
    for (int pending = 0; pending <= kWgmmaMaxPendingGroups; ++pending)
      for (int registers = 0; registers <= kWgmmaMaxWaitRegisters; ++registers)
        s[key(wgmmaWaitAsm(pending), wgmmaWaitConstraints(registers))] = entry(WgmmaAsm::Kind::Wait, pending, registers);
    constexpr WgmmaInput kInputs[] = {WgmmaInput::F16, WgmmaInput::BF16, WgmmaInput::E4M3, WgmmaInput::E5M2};
    for (int n : wgmmaNs())
      for (WgmmaInput a : kInputs)
        for (WgmmaInput b : kInputs)
          for (int trans = 0; trans < 4; ++trans)
            for (bool aInRegisters : {false, true}) {
              const WgmmaMma mma{n, a, b, (trans & 1) != 0, (trans & 2) != 0, aInRegisters};
              if (valid(mma))
                s[key(wgmmaMmaAsm(mma), wgmmaMmaConstraints(n, aInRegisters))] = {WgmmaAsm::Kind::Mma, 0, n / 2, mma};
            }
    return s;
  }();
  return set;
}

void checkValid(const WgmmaMma& mma) {
  if (!valid(mma))
    throw Error(std::string("wgmma.mma_async has no instruction for A ") + inputName(mma.inputA) + ", B " +
                inputName(mma.inputB) + (mma.transposeA || mma.transposeB ? " with transposes" : ""));
}

// p = (operand `scale` != 0): the scale-d predicate of the mma_async instructions that follow.
std::string scalePredicate(int scale) {
  return "\t.reg .pred p;\n\tsetp.ne.b32 p, $" + std::to_string(scale) + ", 0;\n";
}

// One mma_async: D is operands [firstD, firstD + n / 2), A operand `a` (a descriptor, or the first of the four
// registers of the thread's fragment), B operand `b`; imm-scale-a/b 1.
std::string mmaInstruction(const WgmmaMma& mma, int firstD, int a, int b) {
  std::string d;
  for (int i = 0; i < mma.n / 2; ++i) d += (i ? ", $" : "$") + std::to_string(firstD + i);
  std::string transposes;
  if (wgmmaTransposable(mma.inputA))
    transposes = std::string(mma.aInRegisters ? "" : mma.transposeA ? ", 1" : ", 0") + (mma.transposeB ? ", 1" : ", 0");
  const std::string aText = mma.aInRegisters ? "{$" + std::to_string(a) + ", $" + std::to_string(a + 1) + ", $" +
                                                   std::to_string(a + 2) + ", $" + std::to_string(a + 3) + "}"
                                             : "$" + std::to_string(a);
  return "wgmma.mma_async.sync.aligned.m64n" + std::to_string(mma.n) + "k" + std::to_string(wgmmaK(mma.inputA)) +
         ".f32." + inputName(mma.inputA) + "." + inputName(mma.inputB) + " {" + d + "}, " + aText + ", $" +
         std::to_string(b) + ", p, 1, 1" + transposes + ";";
}

// The comment a group string opens with: its parameters, in the order parseGroupHeader reads them.
constexpr std::string_view kGroupHeader = "{\n\t// tessera wgmma group:";

std::string groupHeader(const WgmmaGroup& g) {
  return std::string(kGroupHeader) + " n " + std::to_string(g.mma.n) + " a " + inputName(g.mma.inputA) + " b " +
         inputName(g.mma.inputB) + " trans " + (g.mma.transposeA ? "1 " : "0 ") + (g.mma.transposeB ? "1" : "0") +
         " a-registers " + (g.mma.aInRegisters ? "1" : "0") + " slices " + std::to_string(g.slices) + " steps " +
         std::to_string(g.steps) + " wait " + std::to_string(g.pendingGroups) + "\n";
}

std::optional<WgmmaInput> inputNamed(const std::string& name) {
  for (WgmmaInput input : {WgmmaInput::F16, WgmmaInput::BF16, WgmmaInput::E4M3, WgmmaInput::E5M2})
    if (name == inputName(input)) return input;
  return std::nullopt;
}

// The parameters a group string's header names; nullopt when it has none or they do not read as parameters.
std::optional<WgmmaGroup> parseGroupHeader(std::string_view asmString) {
  if (asmString.substr(0, kGroupHeader.size()) != kGroupHeader) return std::nullopt;
  const size_t end = asmString.find('\n', kGroupHeader.size());
  if (end == std::string_view::npos) return std::nullopt;
  std::istringstream in(std::string(asmString.substr(kGroupHeader.size(), end - kGroupHeader.size())));
  std::string n, a, b, trans, aRegisters, slices, steps, wait, inputA, inputB;
  WgmmaGroup g;
  int ta = 0, tb = 0, ar = 0;
  if (!(in >> n >> g.mma.n >> a >> inputA >> b >> inputB >> trans >> ta >> tb >> aRegisters >> ar >> slices >>
        g.slices >> steps >> g.steps >> wait >> g.pendingGroups))
    return std::nullopt;
  std::optional<WgmmaInput> ia = inputNamed(inputA), ib = inputNamed(inputB);
  if (!ia || !ib || ta < 0 || ta > 1 || tb < 0 || tb > 1 || ar < 0 || ar > 1) return std::nullopt;
  g.mma.inputA = *ia;
  g.mma.inputB = *ib;
  g.mma.transposeA = ta == 1;
  g.mma.transposeB = tb == 1;
  g.mma.aInRegisters = ar == 1;
  return g;
}

bool validGroup(const WgmmaGroup& g) {
  return valid(g.mma) && std::find(wgmmaNs().begin(), wgmmaNs().end(), g.mma.n) != wgmmaNs().end() &&
         g.slices >= 1 && g.steps >= 1 && g.issues() <= kWgmmaMaxGroupIssues &&
         g.registers() <= kWgmmaMaxGroupRegisters && g.pendingGroups >= 0 &&
         g.pendingGroups <= kWgmmaMaxPendingGroups;
}

}  // namespace

const std::vector<int>& wgmmaNs() {
  static const std::vector<int> ns = {8, 16, 32, 64, 128, 256};
  return ns;
}

int wgmmaK(WgmmaInput input) { return wgmmaTransposable(input) ? 16 : 32; }

bool wgmmaTransposable(WgmmaInput input) { return input == WgmmaInput::F16 || input == WgmmaInput::BF16; }

std::string wgmmaMmaAsm(const WgmmaMma& mma) {
  checkValid(mma);
  const int r = mma.n / 2;
  const int bOperand = r + (mma.aInRegisters ? 4 : 1);
  return "{\n" + scalePredicate(bOperand + 1) + "\t" + mmaInstruction(mma, 0, r, bOperand) + "\n}";
}

std::string wgmmaMmaConstraints(int n, bool aInRegisters) {
  return tiedConstraints(n / 2, aInRegisters ? "r,r,r,r,l,r" : "l,l,r");
}

std::string wgmmaGroupAsm(const WgmmaGroup& g) {
  checkValid(g.mma);
  if (!validGroup(g))
    throw Error("wgmma group of " + std::to_string(g.slices) + " slices, " + std::to_string(g.steps) +
                " steps and wait " + std::to_string(g.pendingGroups) + " is outside the backend's bounds");
  const int r = g.registers();
  const int perIssue = g.aOperands() + 1;
  std::string s = groupHeader(g) + scalePredicate(r + g.issues() * perIssue) + "\t" + std::string(kProxyFenceAsm) +
                  "\n\t" + std::string(kWgmmaFenceAsm) + "\n";
  for (int i = 0; i < g.issues(); ++i) {
    const int a = r + i * perIssue;
    s += "\t" + mmaInstruction(g.mma, (i % g.slices) * (g.mma.n / 2), a, a + g.aOperands()) + "\n";
  }
  return s + "\t" + std::string(kWgmmaCommitAsm) + "\n\t" + wgmmaWaitAsm(g.pendingGroups) + "\n}";
}

std::string wgmmaGroupConstraints(const WgmmaGroup& g) {
  std::string inputs;
  for (int i = 0; i < g.issues(); ++i) inputs += g.mma.aInRegisters ? "r,r,r,r,l," : "l,l,";
  return tiedConstraints(g.registers(), inputs + "r");
}

std::string wgmmaWaitAsm(int pendingGroups) {
  return "wgmma.wait_group.sync.aligned " + std::to_string(pendingGroups) + ";";
}

std::string wgmmaWaitConstraints(int registers) { return tiedConstraints(registers, ""); }

std::optional<WgmmaAsm> findWgmmaAsm(std::string_view asmString, std::string_view constraints) {
  if (std::optional<WgmmaGroup> g = parseGroupHeader(asmString)) {
    if (!validGroup(*g) || wgmmaGroupAsm(*g) != asmString || wgmmaGroupConstraints(*g) != constraints)
      return std::nullopt;
    WgmmaAsm group;
    group.kind = WgmmaAsm::Kind::Group;
    group.registers = g->registers();
    group.group = *g;
    return group;
  }
  const auto& set = wgmmaAsmSet();
  auto it = set.find(key(asmString, constraints));
  if (it == set.end()) return std::nullopt;
  return it->second;
}

}  // namespace tessera::backends::nvptx
