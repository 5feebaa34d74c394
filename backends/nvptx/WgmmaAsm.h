// The wgmma entries of the inline-asm table (InlineAsmTable.h): Hopper's warpgroup matrix multiply has no LLVM 19
// intrinsic, so the backend emits it as inline PTX. The strings depend on parameters (N, the input type, the
// transposes, how many accumulator registers a wait passes through), so they are generated here, in one place,
// and the emulator (jit/sim) accepts an inline asm only when its string and constraints equal one generated for
// a parameter set of wgmmaAsmSet(): it never parses asm.
//
// Inputs: f16 and bf16 (m64nNk16, A and B of one type, each K-major or MN-major by the transpose immediates) and
// the 8-bit floats e4m3 and e5m2 (m64nNk32, A and B of either type, both K-major: the ISA gives 8-bit types no
// transpose immediates, so their instruction ends after imm-scale-b).
//
// Operand conventions (LLVM inline asm, $i numbering outputs first):
//  - mma_async: outputs $0..$(R-1) are the f32 accumulator registers D (R = N / 2), inputs $R: the A matrix
//    descriptor (u64), $(R+1): the B descriptor, $(R+2): scale-d (u32, nonzero: D = A * B + D, zero: D = A * B),
//    then R inputs tied to the outputs (the accumulator C). imm-scale-a/b are 1; imm-trans-a/b as given (16-bit
//    inputs only).
//  - mma_async with A from registers (16-bit inputs): $R..$(R+3) are the four b32 registers of the thread's A
//    fragment (two elements each, the low half first), then the B descriptor, scale-d and C as above; the
//    instruction has no imm-trans-a.
//  - wait_group N: the accumulator registers it passes through (tied), so that no read of them can be moved
//    above the wait.
//  - group (a dot's whole issue, WgmmaGroup): outputs $0..$(R-1), the accumulator (R = slices * N / 2); inputs:
//    each issue's A (descriptor or four registers) and B descriptor, in issue order; scale-d; the R tied inputs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::backends::nvptx {

enum class WgmmaInput : uint8_t { F16, BF16, E4M3, E5M2 };

// The instruction's K: 32 bytes of K per row, 16 elements of 16 bits or 32 of 8.
int wgmmaK(WgmmaInput input);
// Whether an input type has the transpose immediates (the 16-bit ones).
bool wgmmaTransposable(WgmmaInput input);

// wgmma.mma_async.sync.aligned.m64n{n}k{K}.f32.{inputA}.{inputB}, B from a shared-memory descriptor, A from one
// too or from registers. A and B are both 16-bit of one type, or both 8-bit floats (wgmmaMmaAsm throws otherwise,
// for a transpose of 8-bit inputs, and for 8-bit or transposed A in registers).
struct WgmmaMma {
  int n = 8;                         // 8..256, a multiple of 8
  WgmmaInput inputA = WgmmaInput::F16;
  WgmmaInput inputB = WgmmaInput::F16;
  bool transposeA = false;           // imm-trans-a: A is M-major (else K-major)
  bool transposeB = false;           // imm-trans-b: B is N-major (else K-major)
  bool aInRegisters = false;         // A from the threads' registers (16-bit inputs, transposeA false)
  bool operator==(const WgmmaMma&) const = default;
};

// The N values the backend emits (and the emulator accepts).
const std::vector<int>& wgmmaNs();
// The largest number of accumulator registers a wait_group passes through (a warpgroup's whole accumulator).
inline constexpr int kWgmmaMaxWaitRegisters = 256;
// The deepest wait_group the backend emits.
inline constexpr int kWgmmaMaxPendingGroups = 1;

std::string wgmmaMmaAsm(const WgmmaMma& mma);
std::string wgmmaMmaConstraints(int n, bool aInRegisters = false);
inline constexpr std::string_view kWgmmaFenceAsm = "wgmma.fence.sync.aligned;";
// Orders the thread's earlier shared-memory writes (st.shared, cp.async: the generic proxy) before later reads
// through the async proxy, which is how wgmma reads its shared operands.
inline constexpr std::string_view kProxyFenceAsm = "fence.proxy.async.shared::cta;";
inline constexpr std::string_view kWgmmaCommitAsm = "wgmma.commit_group.sync.aligned;";
std::string wgmmaWaitAsm(int pendingGroups);
std::string wgmmaWaitConstraints(int registers);  // `registers` f32 outputs, each tied to an input

// A dot's whole issue as one statement: fence.proxy.async, wgmma.fence, `slices * steps` mma_async,
// commit_group, wait_group `pendingGroups`. Issue i (K step i / slices) accumulates into slice i % slices of the
// accumulator (registers [(i % slices) * n / 2, (i % slices + 1) * n / 2)): a warpgroup's repeats along M and N
// are its slices. The backend emits every wgmma dot so: one inline asm per dot instead of one per instruction
// is a fifth less work for LLVM's code generation, which handles an asm's accumulator operands one by one.
// The string opens with a comment naming these parameters, from which findWgmmaAsm regenerates the string it
// must equal (the emulator expands a group into the single instructions above, expandWgmmaGroups).
struct WgmmaGroup {
  WgmmaMma mma;
  int slices = 1;
  int steps = 1;
  int pendingGroups = 0;
  int registers() const { return slices * mma.n / 2; }
  int issues() const { return slices * steps; }
  int aOperands() const { return mma.aInRegisters ? 4 : 1; }  // per issue, then one B descriptor
  bool operator==(const WgmmaGroup&) const = default;
};
// Bounds on what a group string may describe (far above any tile's: a thread has at most 255 registers).
inline constexpr int kWgmmaMaxGroupRegisters = 1024;
inline constexpr int kWgmmaMaxGroupIssues = 1024;
std::string wgmmaGroupAsm(const WgmmaGroup& group);
std::string wgmmaGroupConstraints(const WgmmaGroup& group);

// What an inline asm of the set is.
struct WgmmaAsm {
  enum class Kind : uint8_t { Fence, ProxyFence, Commit, Wait, Mma, Group } kind = Kind::Fence;
  int pendingGroups = 0;  // Wait
  int registers = 0;      // Wait: accumulator registers passed through; Mma: n / 2; Group: the accumulator's
  WgmmaMma mma;           // Mma
  WgmmaGroup group;       // Group
};
// The wgmma asm with exactly this string and these constraints; nullopt when there is none.
std::optional<WgmmaAsm> findWgmmaAsm(std::string_view asmString, std::string_view constraints);

}  // namespace tessera::backends::nvptx
