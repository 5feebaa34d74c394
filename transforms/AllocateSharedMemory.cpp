// allocate-shared-memory: gives every op that needs shared-memory scratch (analysis/SharedScratch.h) a byte range,
// so that buffers live at the same time never share bytes, and records the total on the function.
//
// Each scratch buffer is live only while its op runs (its interval is the op's number in OpNumbering), so
// scratch buffers of different ops may all reuse the same bytes; the barrier pass then orders those reuses. A
// local_alloc's buffer lives from the local_alloc to its last read (OpNumbering::bufferInterval: a dot reading a
// local_load's operand reads the buffer), an mbarrier_alloc's to its last use.
//
// When the total is over the target's limit (PassOptions::maxSharedBytes), the exchanges living beside the
// buffers that make it so run in rounds of fewer rows (SharedScratch.h), halved until the total fits (when even
// rounds of one row would not make it fit, they are left whole). A persistent warp-specialized matmul's epilogue
// conversion (128x256 f32, 132 KiB) cannot reuse the pipeline's buffers, which the producer is already filling for
// the next tile, and would otherwise make the kernel too large.
#include <algorithm>
#include <vector>

#include "ir/Layout.h"
#include "transforms/PassManager.h"
#include "transforms/SharedMemoryAllocator.h"
#include "transforms/analysis/Liveness.h"
#include "transforms/analysis/SharedScratch.h"

namespace tessera::transforms {
namespace {

using ir::Op;
using ir::OpKind;

// Linear shared layouts may XOR-swizzle the offset bits of a stage (the NVMMA layouts of wgmma operands do, over
// 1024-byte patterns that the hardware applies to address bits): their buffers start on such a boundary.
constexpr int64_t kSwizzleAlignment = 1024;

bool isLinearShared(const ir::Type& buffer) {
  return buffer.encoding() && ir::Layout::fromAttr(*buffer.encoding()).kind() == ir::Layout::Kind::LinearShared;
}

bool insideCombineRegion(const Op* op) {
  for (const Op* p = op->parentOp(); p; p = p->parentOp())
    if (p->is(OpKind::Reduce) || p->is(OpKind::Scan)) return true;
  return false;
}

class AllocateSharedMemoryPass : public Pass {
 public:
  explicit AllocateSharedMemoryPass(const PassOptions& options) : options_(options) {}
  const char* name() const override { return "allocate-shared-memory"; }

  void run(ir::Function& f) override {
    OpNumbering numbering(f);
    std::vector<Op*> owners;
    std::vector<SharedBuffer> buffers;
    f.walk([&](Op* op) {
      // Recomputed from scratch: a stale range from an earlier run must not survive.
      op->attrs().erase("smem_offset");
      op->attrs().erase("smem_bytes");
      op->attrs().erase(kExchangePad);
      op->attrs().erase(kExchangeSwizzle);
      // A conversion through shared memory: its buffer's pad or swizzle is chosen once, here, and recorded on it.
      if (op->is(OpKind::ConvertLayout) && exchangeNeedsSharedMemory(*op, options_)) recordExchangeChoice(*op);
      int64_t bytes = scratchBytes(*op, options_);
      if (bytes == 0) return;
      if (insideCombineRegion(op))
        throw Error(op->describe() + ": needs shared-memory scratch inside a reduce/scan combine region, which runs "
                                     "per element and cannot own shared memory", op->loc());
      owners.push_back(op);
      LiveInterval live = op->is(OpKind::LocalAlloc)       ? numbering.bufferInterval(op->result(0))
                          : op->is(OpKind::MbarrierAlloc) ? numbering.valueInterval(op->result(0))
                                                          : numbering.scratchInterval(op);
      buffers.push_back({bytes, live});
      if (op->is(OpKind::LocalAlloc) && isLinearShared(op->result(0)->type())) buffers.back().align = kSwizzleAlignment;
      if (op->is(OpKind::DescStore)) buffers.back().align = kTmaStagingAlignment;
    });
    int64_t total = assignSharedOffsets(buffers);
    if (options_.maxSharedBytes > 0 && total > options_.maxSharedBytes) {
      const std::vector<SharedBuffer> whole = buffers;
      while (total > options_.maxSharedBytes && shrinkExchanges(owners, buffers)) total = assignSharedOffsets(buffers);
      // Rounds that do not make the kernel fit would only slow it (the target reports it as too large).
      if (total > options_.maxSharedBytes) {
        buffers = whole;
        total = assignSharedOffsets(buffers);
      }
    }
    for (size_t i = 0; i < owners.size(); ++i) {
      owners[i]->setAttr("smem_offset", ir::Attr::integer(buffers[i].offset));
      owners[i]->setAttr("smem_bytes", ir::Attr::integer(buffers[i].bytes));
    }
    f.attrs()["smem_bytes"] = ir::Attr::integer(total);
  }

 private:
  // Halves the rows per round of every exchange live where some buffer ends past the limit (its own included);
  // false when none could shrink.
  bool shrinkExchanges(const std::vector<Op*>& owners, std::vector<SharedBuffer>& buffers) const {
    std::vector<LiveInterval> crowded;
    for (const SharedBuffer& b : buffers)
      if (b.offset + alignToShared(b.bytes) > options_.maxSharedBytes) crowded.push_back(b.live);
    bool shrunk = false;
    for (size_t i = 0; i < owners.size(); ++i) {
      if (!isExchangeOp(*owners[i])) continue;
      if (std::none_of(crowded.begin(), crowded.end(),
                       [&](const LiveInterval& live) { return live.overlaps(buffers[i].live); }))
        continue;
      const ExchangeBuffer exchange = exchangeBufferOf(*owners[i]);
      const int64_t rows = exchange.rowsPerRound(buffers[i].bytes);
      if (rows <= 1) continue;
      int64_t fewer = 1;  // the largest power of two below `rows`
      while (fewer * 2 < rows) fewer *= 2;
      buffers[i].bytes = exchange.roundBytes(fewer);
      shrunk = true;
    }
    return shrunk;
  }

  PassOptions options_;
};

}  // namespace

std::unique_ptr<Pass> createAllocateSharedMemoryPass(const PassOptions& options) {
  return std::make_unique<AllocateSharedMemoryPass>(options);
}

}  // namespace tessera::transforms
