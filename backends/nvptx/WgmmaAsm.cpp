#include "backends/nvptx/WgmmaAsm.h"

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

}  // namespace

const std::vector<int>& wgmmaNs() {
  static const std::vector<int> ns = {8, 16, 32, 64, 128, 256};
  return ns;
}

int wgmmaK(WgmmaInput input) { return wgmmaTransposable(input) ? 16 : 32; }

bool wgmmaTransposable(WgmmaInput input) { return input == WgmmaInput::F16 || input == WgmmaInput::BF16; }

std::string wgmmaMmaAsm(const WgmmaMma& mma) {
  if (!valid(mma))
    throw Error(std::string("wgmma.mma_async has no instruction for A ") + inputName(mma.inputA) + ", B " +
                inputName(mma.inputB) + (mma.transposeA || mma.transposeB ? " with transposes" : ""));
  const int r = mma.n / 2;
  std::string d;
  for (int i = 0; i < r; ++i) d += (i ? ", $" : "$") + std::to_string(i);
  std::string transposes;
  if (wgmmaTransposable(mma.inputA))
    transposes = std::string(mma.aInRegisters ? "" : mma.transposeA ? ", 1" : ", 0") + (mma.transposeB ? ", 1" : ", 0");
  // A: its descriptor, or the four registers of the thread's fragment.
  const std::string a = mma.aInRegisters ? "{$" + std::to_string(r) + ", $" + std::to_string(r + 1) + ", $" +
                                               std::to_string(r + 2) + ", $" + std::to_string(r + 3) + "}"
                                         : "$" + std::to_string(r);
  const int bOperand = r + (mma.aInRegisters ? 4 : 1);
  return "{\n"
         "\t.reg .pred p;\n"
         "\tsetp.ne.b32 p, $" + std::to_string(bOperand + 1) + ", 0;\n"
         "\twgmma.mma_async.sync.aligned.m64n" + std::to_string(mma.n) + "k" + std::to_string(wgmmaK(mma.inputA)) +
         ".f32." + inputName(mma.inputA) + "." + inputName(mma.inputB) + " {" + d + "}, " + a +
         ", $" + std::to_string(bOperand) + ", p, 1, 1" + transposes + ";\n"
         "}";
}

std::string wgmmaMmaConstraints(int n, bool aInRegisters) {
  return tiedConstraints(n / 2, aInRegisters ? "r,r,r,r,l,r" : "l,l,r");
}

std::string wgmmaWaitAsm(int pendingGroups) {
  return "wgmma.wait_group.sync.aligned " + std::to_string(pendingGroups) + ";";
}

std::string wgmmaWaitConstraints(int registers) { return tiedConstraints(registers, ""); }

std::optional<WgmmaAsm> findWgmmaAsm(std::string_view asmString, std::string_view constraints) {
  const auto& set = wgmmaAsmSet();
  auto it = set.find(key(asmString, constraints));
  if (it == set.end()) return std::nullopt;
  return it->second;
}

}  // namespace tessera::backends::nvptx
