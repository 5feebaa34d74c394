// The emulator runtime's own cost on the call pattern of a tiled matmul: M = N = K = 512 with 128x128x64 tiles and
// 8 warps (16 programs of 256 threads), two-stage cp.async pipeline with XOR-swizzled shared tiles, ldmatrix x4
// fragments and 65536 mma.sync m16n8k16 (the tutorial matmul's shape). The kernel is written against SimABI.h by
// hand and the mma/ldmatrix semantics are the emulator's own (WarpMatrix.h), so the time is the runtime's (fibers,
// checks, counters) plus the real fragment arithmetic, without the cost of running compiled kernel code.
//   sim_runtime_matmul [host threads] [checks 0|1]   (defaults: 2, 1)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <algorithm>

#include "jit/sim/SimABI.h"
#include "jit/sim/runtime/Launch.h"

using namespace tessera::sim;

namespace {

constexpr uint32_t kSize = 512, kBM = 128, kBN = 128, kBK = 64, kWarps = 8, kThreads = kWarps * 32;
constexpr uint32_t kTileBytes = kBM * kBK * 2;  // A and B tiles are both 16 KiB of f16
constexpr uint32_t kStages = 2;

enum SiteId : uint32_t { kCpA, kCpB, kCommit, kWait, kBarrier, kLdA, kLdB, kMma, kStoreC, kSiteCount };

// Byte offset of 16-byte chunk `chunk` of row `row` in a tile with `chunksPerRow` chunks per row, XOR-swizzled.
uint32_t swizzled(uint32_t row, uint32_t chunk, uint32_t chunksPerRow) {
  return (row * chunksPerRow + (chunk ^ (row % 8))) * 16;
}

void matmulKernel(void** params) {
  const uint8_t* lhs = static_cast<const uint8_t*>(params[0]);  // f16 [512][512]
  const uint8_t* rhs = static_cast<const uint8_t*>(params[1]);  // f16 [512][512], k-major
  float* out = static_cast<float*>(params[2]);
  uint8_t* smem = static_cast<uint8_t*>(__tsim_shared_base());
  const uint32_t tid = __tsim_thread_id(0), warp = __tsim_warp_id(), lane = __tsim_lane_id();
  const uint32_t pm = __tsim_program_id(0) / (kSize / kBN), pn = __tsim_program_id(0) % (kSize / kBN);
  const uint32_t wm = warp / 4, wn = warp % 4;  // the warp's 64 x 32 part of the 128 x 128 tile
  float acc[4][4][4] = {};

  auto loadStage = [&](uint32_t kt, uint32_t stage) {
    uint8_t* tileA = smem + stage * 2 * kTileBytes;
    uint8_t* tileB = tileA + kTileBytes;
    for (uint32_t i = 0; i < 4; ++i) {
      uint32_t chunk = tid + i * kThreads;  // A: 128 rows x 8 chunks; B: 64 rows x 16 chunks
      uint32_t ar = chunk / 8, ac = chunk % 8;
      __tsim_cp_async(reinterpret_cast<uint64_t>(tileA + swizzled(ar, ac, 8)),
                      reinterpret_cast<uint64_t>(lhs + ((pm * kBM + ar) * kSize + kt * kBK + ac * 8) * 2), 16, 16, kCpA);
      uint32_t br = chunk / 16, bc = chunk % 16;
      __tsim_cp_async(reinterpret_cast<uint64_t>(tileB + swizzled(br, bc, 16)),
                      reinterpret_cast<uint64_t>(rhs + ((kt * kBK + br) * kSize + pn * kBN + bc * 8) * 2), 16, 16, kCpB);
    }
    __tsim_cp_async_commit(kCommit);
  };

  const uint32_t kTiles = kSize / kBK;
  loadStage(0, 0);
  for (uint32_t kt = 0; kt < kTiles; ++kt) {
    if (kt + 1 < kTiles) {
      loadStage(kt + 1, (kt + 1) % kStages);
      __tsim_cp_async_wait(1, kWait);
    } else {
      __tsim_cp_async_wait(0, kWait);
    }
    __tsim_barrier(kBarrier);
    const uint8_t* tileA = smem + (kt % kStages) * 2 * kTileBytes;
    const uint8_t* tileB = tileA + kTileBytes;
    for (uint32_t ks = 0; ks < kBK / 16; ++ks) {
      uint32_t fa[4][4], fb[2][4];
      for (uint32_t i = 0; i < 4; ++i) {
        uint32_t row = wm * 64 + i * 16 + lane % 16, chunk = ks * 2 + lane / 16;
        __tsim_ldmatrix(4, 0, reinterpret_cast<uint64_t>(tileA + swizzled(row, chunk, 8)), fa[i], kLdA);
      }
      for (uint32_t j = 0; j < 2; ++j) {
        uint32_t row = ks * 16 + lane % 16, chunk = (wn * 32 + j * 16) / 8 + lane / 16;
        __tsim_ldmatrix(4, 1, reinterpret_cast<uint64_t>(tileB + swizzled(row, chunk, 16)), fb[j], kLdB);
      }
      for (uint32_t i = 0; i < 4; ++i)
        for (uint32_t j = 0; j < 4; ++j) {
          uint32_t cr[4], dr[4];
          std::memcpy(cr, acc[i][j], 16);
          __tsim_mma(kMmaM16N8K16_F16_F32, fa[i], &fb[j / 2][(j % 2) * 2], cr, dr, kMma);
          std::memcpy(acc[i][j], dr, 16);
        }
    }
    __tsim_barrier(kBarrier);
  }
  // The m16n8 accumulator layout: lane l holds rows l / 4 and l / 4 + 8, columns 2 (l % 4) and the next.
  for (uint32_t i = 0; i < 4; ++i)
    for (uint32_t j = 0; j < 4; ++j)
      for (uint32_t half = 0; half < 2; ++half) {
        uint32_t row = pm * kBM + wm * 64 + i * 16 + lane / 4 + 8 * half;
        uint32_t col = pn * kBN + wn * 32 + j * 8 + 2 * (lane % 4);
        __tsim_store(reinterpret_cast<uint64_t>(out + row * kSize + col), &acc[i][j][2 * half], 8, kStoreC);
      }
}

Site makeSite(SiteKind kind, AddressSpace space, uint32_t bytes, const char* op, uint32_t line) {
  Site s;
  s.kind = kind;
  s.space = space;
  s.bytes = bytes;
  s.align = bytes;
  s.op = op;
  s.file = "matmul.py";
  s.line = line;
  s.column = 1;
  return s;
}

// 128-byte aligned, as device allocations are (a std::vector's 16-byte alignment would split sectors).
alignas(128) uint16_t a[kSize * kSize];
alignas(128) uint16_t b[kSize * kSize];
alignas(128) float c[kSize * kSize];

}  // namespace

int main(int argc, char** argv) {
  unsigned threads = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 2;
  bool checks = argc > 2 ? std::atoi(argv[2]) != 0 : true;
  std::fill(std::begin(a), std::end(a), 0x3C00);
  std::fill(std::begin(b), std::end(b), 0x3C00);
  void* params[] = {a, b, c};

  Program p;
  p.kernel = "matmul_512";
  p.numWarps = kWarps;
  p.sharedBytes = kStages * 2 * kTileBytes;
  p.entry = &matmulKernel;
  p.sites = {makeSite(SiteKind::CpAsync, AddressSpace::Shared, 16, "load", 1),
             makeSite(SiteKind::CpAsync, AddressSpace::Shared, 16, "load", 2),
             makeSite(SiteKind::CpAsyncCommit, AddressSpace::Generic, 0, "load", 1),
             makeSite(SiteKind::CpAsyncWait, AddressSpace::Generic, 0, "load", 1),
             makeSite(SiteKind::Barrier, AddressSpace::Generic, 0, "barrier", 3),
             makeSite(SiteKind::LdMatrix, AddressSpace::Shared, 16, "dot", 4),
             makeSite(SiteKind::LdMatrix, AddressSpace::Shared, 16, "dot", 4),
             makeSite(SiteKind::Mma, AddressSpace::Generic, 0, "dot", 4),
             makeSite(SiteKind::Store, AddressSpace::Global, 8, "store", 5)};
  LaunchConfig config;
  config.allocations = {{reinterpret_cast<uint64_t>(a), sizeof a},
                        {reinterpret_cast<uint64_t>(b), sizeof b},
                        {reinterpret_cast<uint64_t>(c), sizeof c}};
  config.threads = threads;
  config.checks = checks;

  auto start = std::chrono::steady_clock::now();
  Report r = launch(p, {(kSize / kBM) * (kSize / kBN), 1, 1}, params, config);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s", r.str().c_str());
  std::printf("512x512x512 matmul schedule, %u host thread(s), checks %s: %.3f s\n", threads, checks ? "on" : "off",
              seconds);
  return r.failed() ? 1 : 0;
}
