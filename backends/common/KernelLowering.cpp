// The driver of the lowering: kernel signature, value bookkeeping, per-layout thread coordinates, shared
// memory scratch, the generic data exchange, and dispatch to the per-family files.
#include "backends/common/KernelLowering.h"

#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "backends/common/DebugLocations.h"
#include "ir/Printer.h"

namespace tessera::backends {

using ir::OpKind;

KernelLowering::KernelLowering(const ir::Function& f, llvm::LLVMContext& c, LoweringHooks& h,
                               const LoweringOptions& o)
    : ctx(c), hooks(h), opts(o), func(f), b(c), warpSize(h.warpSize()), axis(f) {}

[[noreturn]] void KernelLowering::fail(const ir::Op& op, const std::string& why) {
  throw Error("cannot lower '" + std::string(op.name()) + "': " + why, op.loc());
}

// ------------------------------------------------------------------------------------------------ types

llvm::Type* KernelLowering::regType(ir::Type element) {
  element = element.element();
  if (element.isPtr()) return llvm::PointerType::get(ctx, element.addrSpace());
  switch (element.scalarKind()) {
    case ir::ScalarKind::I1: return b.getInt1Ty();
    case ir::ScalarKind::I8: case ir::ScalarKind::U8: return b.getInt8Ty();
    case ir::ScalarKind::I16: case ir::ScalarKind::U16: return b.getInt16Ty();
    case ir::ScalarKind::I32: case ir::ScalarKind::U32: return b.getInt32Ty();
    case ir::ScalarKind::I64: case ir::ScalarKind::U64: return b.getInt64Ty();
    case ir::ScalarKind::F16: return b.getHalfTy();
    case ir::ScalarKind::BF16: return b.getBFloatTy();
    case ir::ScalarKind::F32: return b.getFloatTy();
    case ir::ScalarKind::F64: return b.getDoubleTy();
    case ir::ScalarKind::F8E4M3: case ir::ScalarKind::F8E5M2: return b.getInt8Ty();  // storage only
  }
  throw Error("unknown scalar kind");
}

llvm::Type* KernelLowering::memType(ir::Type element) {
  element = element.element();
  if (element.isPtr()) return b.getInt64Ty();
  if (element.isBool()) return b.getInt8Ty();
  return regType(element);
}

int64_t KernelLowering::memBytes(ir::Type element) {
  element = element.element();
  if (element.isPtr()) return 8;
  if (element.isBool()) return 1;
  return element.bitWidth() / 8;
}

llvm::Value* KernelLowering::toMemory(llvm::Value* v, ir::Type element) {
  element = element.element();
  if (element.isPtr()) return b.CreatePtrToInt(v, b.getInt64Ty());
  if (element.isBool()) return b.CreateZExt(v, b.getInt8Ty());
  return v;
}

llvm::Value* KernelLowering::fromMemory(llvm::Value* v, ir::Type element) {
  element = element.element();
  if (element.isPtr()) return b.CreateIntToPtr(v, regType(element));
  if (element.isBool()) return b.CreateICmpNE(v, b.getInt8(0));
  return v;
}

// ------------------------------------------------------------------------------------------------ values

Regs& KernelLowering::get(const ir::Value* v) {
  auto it = values_.find(v);
  if (it == values_.end()) {
    std::string where = v->definingOp() ? std::string(" (result of '") + v->definingOp()->name() + "')" : "";
    throw Error("lowering: value" + where + " used before it was lowered");
  }
  return it->second;
}

void KernelLowering::set(const ir::Value* v, Regs regs) { values_[v] = std::move(regs); }

const ThreadMap& KernelLowering::mapOf(ir::Type t, const std::string& what) {
  auto it = maps_.find(t);
  if (it != maps_.end()) return it->second;
  return maps_.emplace(t, ThreadMap::of(t, opts.numWarps, warpSize, what)).first->second;
}

template <class F>
auto KernelLowering::inPrologue(F fn) {
  IRBuilder::InsertPointGuard guard(b);
  b.SetInsertPoint(prologue_);
  return fn();
}

llvm::Value* KernelLowering::laneId() { return laneId_; }
llvm::Value* KernelLowering::warpId() { return warpId_; }

// Builds XOR over bits of `id` of the per-bit constants `bases[i]`; runs of consecutive bits whose bases are
// consecutive powers of two become one shift-and-mask.
static llvm::Value* linearCombination(IRBuilder& b, llvm::Value* id, const std::vector<int64_t>& bases) {
  llvm::Value* acc = b.getInt32(0);
  size_t i = 0;
  while (i < bases.size()) {
    if (bases[i] == 0) { ++i; continue; }
    size_t j = i + 1;
    while (j < bases.size() && bases[j] == bases[j - 1] * 2) ++j;
    int64_t runBits = static_cast<int64_t>(j - i);
    llvm::Value* field = b.CreateAnd(b.CreateLShr(id, b.getInt32(static_cast<uint32_t>(i))),
                                     b.getInt32(static_cast<uint32_t>((int64_t(1) << runBits) - 1)));
    if ((bases[i] & (bases[i] - 1)) == 0) {
      int shift = 0;
      while ((int64_t(1) << shift) < bases[i]) ++shift;
      acc = b.CreateXor(acc, b.CreateShl(field, b.getInt32(shift)));
    } else {
      acc = b.CreateXor(acc, b.CreateMul(field, b.getInt32(static_cast<uint32_t>(bases[i]))));
    }
    i = j;
  }
  return acc;
}

const std::vector<llvm::Value*>& KernelLowering::threadPart(const ThreadMap& map) {
  std::vector<Coords> key = map.laneBases;
  key.insert(key.end(), map.warpBases.begin(), map.warpBases.end());
  key.push_back(Coords{static_cast<int64_t>(map.rank())});
  auto it = threadParts_.find(key);
  if (it != threadParts_.end()) return it->second;
  std::vector<llvm::Value*> parts = inPrologue([&] {
    std::vector<llvm::Value*> r;
    for (int d = 0; d < map.rank(); ++d) {
      std::vector<int64_t> lane, warp;
      for (const Coords& c : map.laneBases) lane.push_back(c[d]);
      for (const Coords& c : map.warpBases) warp.push_back(c[d]);
      r.push_back(b.CreateXor(linearCombination(b, laneId_, lane), linearCombination(b, warpId_, warp)));
    }
    return r;
  });
  return threadParts_.emplace(key, std::move(parts)).first->second;
}

llvm::Value* KernelLowering::coord(const ThreadMap& map, int64_t reg, int dim) {
  // When the register bits and the thread bits of this dimension are disjoint (always, for blocked layouts), the
  // XOR is an addition, which address arithmetic downstream understands better.
  int64_t threadBits = 0;
  for (const Coords& c : map.laneBases) threadBits |= c[dim];
  for (const Coords& c : map.warpBases) threadBits |= c[dim];
  const int64_t regPart = map.regCoords[reg][dim];
  llvm::Value* t = threadPart(map)[dim];
  if (regPart == 0) return t;
  if ((regPart & threadBits) == 0) return b.CreateAdd(t, b.getInt32(static_cast<uint32_t>(regPart)), "", true, true);
  return b.CreateXor(t, b.getInt32(static_cast<uint32_t>(regPart)));
}

llvm::Value* KernelLowering::ownsRegister(const ThreadMap& map, int64_t reg) {
  if (!map.regOwner[reg]) return b.getFalse();
  uint64_t laneMask = map.replicatedLaneMask(), warpMask = map.replicatedWarpMask();
  if (laneMask == 0 && warpMask == 0) return b.getTrue();
  return inPrologue([&] {
    llvm::Value* bits = b.CreateOr(b.CreateAnd(laneId_, b.getInt32(static_cast<uint32_t>(laneMask))),
                                   b.CreateAnd(warpId_, b.getInt32(static_cast<uint32_t>(warpMask))));
    return b.CreateICmpEQ(bits, b.getInt32(0), "owner");
  });
}

llvm::Value* KernelLowering::predicated(llvm::Value* pred, const std::function<llvm::Value*()>& then,
                                        llvm::Value* otherwise) {
  if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(pred)) {
    if (c->isOne()) return then();
    return otherwise;
  }
  llvm::BasicBlock* from = b.GetInsertBlock();
  llvm::BasicBlock* thenBB = llvm::BasicBlock::Create(ctx, "pred.then", kernel);
  llvm::BasicBlock* join = llvm::BasicBlock::Create(ctx, "pred.join", kernel);
  b.CreateCondBr(pred, thenBB, join);
  b.SetInsertPoint(thenBB);
  llvm::Value* v = then();
  llvm::BasicBlock* thenEnd = b.GetInsertBlock();
  b.CreateBr(join);
  b.SetInsertPoint(join);
  if (!v || !otherwise) return nullptr;
  llvm::PHINode* phi = b.CreatePHI(v->getType(), 2);
  phi->addIncoming(v, thenEnd);
  phi->addIncoming(otherwise, from);
  return phi;
}

int64_t KernelLowering::constIntOf(const ir::Value* v, bool* known) {
  const ir::Op* def = v->definingOp();
  *known = def && def->is(OpKind::Constant) && def->attr("value").isInt();
  return *known ? def->attr("value").getInt() : 0;
}

// ------------------------------------------------------------------------------------------------ shared memory

llvm::Value* KernelLowering::scratch(const ir::Op& op, int64_t need) {
  if (!op.hasAttr("smem_offset"))
    fail(op, "needs " + std::to_string(need) +
                 " bytes of shared-memory scratch but has no 'smem_offset' (run allocate-shared-memory)");
  if (op.hasAttr("smem_bytes") && op.intAttr("smem_bytes") < need)
    fail(op, "needs " + std::to_string(need) + " bytes of shared-memory scratch but 'smem_bytes' is only " +
                 std::to_string(op.intAttr("smem_bytes")));
  int64_t offset = op.intAttr("smem_offset");
  int64_t total = func.attrs().count("smem_bytes") ? func.attrs().at("smem_bytes").getInt() : -1;
  if (total >= 0 && offset + need > total)
    fail(op, "scratch [" + std::to_string(offset) + ", " + std::to_string(offset + need) +
                 ") exceeds the function's smem_bytes = " + std::to_string(total));
  if (!smemBase_) smemBase_ = inPrologue([&] { return hooks.sharedMemoryBase(b); });
  return b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), smemBase_, static_cast<uint64_t>(offset));
}

llvm::Value* KernelLowering::smemElementPtr(llvm::Value* base, llvm::Type* elemTy, llvm::Value* index) {
  return b.CreateInBoundsGEP(elemTy, base, index);
}

// ------------------------------------------------------------------------------------------------ exchange

namespace {

// The affine map `f` applied to a thread basis vector: its linear part.
Coords linearPart(const CoordFn& f, const Coords& basis, const Coords& origin) {
  return xorCoords(f(basis), f(origin));
}

bool sameThreadBases(const ThreadMap& src, const CoordFn& srcFn, const ThreadMap& dst, const CoordFn& dstFn) {
  Coords srcZero(src.rank(), 0), dstZero(dst.rank(), 0);
  for (size_t i = 0; i < src.laneBases.size(); ++i)
    if (linearPart(srcFn, src.laneBases[i], srcZero) != linearPart(dstFn, dst.laneBases[i], dstZero)) return false;
  for (size_t i = 0; i < src.warpBases.size(); ++i)
    if (linearPart(srcFn, src.warpBases[i], srcZero) != linearPart(dstFn, dst.warpBases[i], dstZero)) return false;
  return true;
}

// For each destination register: the (source, register) holding the same buffer element in the same thread.
std::optional<std::vector<std::vector<std::pair<int, int64_t>>>> registerRemap(
    const std::vector<ExchangeSource>& sources, const std::vector<ExchangeDest>& dests) {
  std::map<Coords, std::pair<int, int64_t>> where;
  std::vector<std::vector<std::pair<int, int64_t>>> result;
  for (const ExchangeDest& d : dests) {
    where.clear();
    for (size_t s = 0; s < sources.size(); ++s) {
      if (!sameThreadBases(*sources[s].map, sources[s].toBuffer, *d.map, d.fromBuffer)) continue;
      for (int64_t r = 0; r < sources[s].map->numRegs(); ++r)
        where.emplace(sources[s].toBuffer(sources[s].map->regCoords[r]), std::make_pair(static_cast<int>(s), r));
    }
    std::vector<std::pair<int, int64_t>> regs;
    for (int64_t r = 0; r < d.map->numRegs(); ++r) {
      auto it = where.find(d.fromBuffer(d.map->regCoords[r]));
      if (it == where.end()) return std::nullopt;
      regs.push_back(it->second);
    }
    result.push_back(std::move(regs));
  }
  return result;
}

}  // namespace

bool KernelLowering::canRemapInRegisters(const std::vector<ExchangeSource>& sources,
                                         const std::vector<ExchangeDest>& dests) {
  return registerRemap(sources, dests).has_value();
}

std::vector<Regs> KernelLowering::exchange(const ir::Op& op, ir::Type element, const std::vector<int64_t>& bufferShape,
                                           const std::vector<ExchangeSource>& sources,
                                           const std::vector<ExchangeDest>& dests) {
  if (auto remap = registerRemap(sources, dests)) {
    std::vector<Regs> out;
    for (const auto& regs : *remap) {
      Regs r;
      for (auto [s, reg] : regs) r.push_back((*sources[s].regs)[reg]);
      out.push_back(std::move(r));
    }
    return out;
  }
  // Through shared memory: the row-padded exchange buffer of transforms/SharedMemory.h. Each row (a line along
  // the last dimension) is followed by max(4, B) bytes of padding, so threads reading a column hit distinct banks.
  const int64_t elemBytes = memBytes(element);
  const int64_t rowLength = bufferShape.empty() ? 1 : bufferShape.back();
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < bufferShape.size(); ++d) rows *= bufferShape[d];
  const int64_t pitch = rowLength + std::max<int64_t>(4, elemBytes) / elemBytes;  // in elements
  llvm::Value* base = scratch(op, alignTo(rows * pitch * elemBytes, 16));
  llvm::Type* mt = memType(element);
  auto bufferIndex = [&](const ThreadMap& map, const CoordFn& fn, int64_t reg) -> llvm::Value* {
    // Buffer coordinates = fn(register part) XOR linear(fn)(thread part); the thread part is expressed through a
    // virtual map whose bases are the images of the thread bases.
    ThreadMap image;
    image.shape = bufferShape;
    Coords zero(map.rank(), 0);
    for (const Coords& c : map.laneBases) image.laneBases.push_back(linearPart(fn, c, zero));
    for (const Coords& c : map.warpBases) image.warpBases.push_back(linearPart(fn, c, zero));
    Coords regPart = fn(map.regCoords[reg]);
    const std::vector<llvm::Value*>& thread = threadPart(image);
    llvm::Value* row = b.getInt32(0);
    llvm::Value* col = b.getInt32(0);
    for (size_t d = 0; d < bufferShape.size(); ++d) {
      llvm::Value* c = b.CreateXor(thread[d], b.getInt32(static_cast<uint32_t>(regPart[d])));
      if (d + 1 == bufferShape.size()) col = c;
      else row = b.CreateAdd(b.CreateMul(row, b.getInt32(static_cast<uint32_t>(bufferShape[d]))), c);
    }
    return b.CreateAdd(b.CreateMul(row, b.getInt32(static_cast<uint32_t>(pitch))), col);
  };
  for (const ExchangeSource& s : sources)
    for (int64_t r = 0; r < s.map->numRegs(); ++r) {
      if (!s.map->regOwner[r]) continue;  // same element as an earlier register of this thread
      llvm::Value* p = smemElementPtr(base, mt, bufferIndex(*s.map, s.toBuffer, r));
      b.CreateStore(toMemory((*s.regs)[r], element), p);
    }
  hooks.barrier(b);
  std::vector<Regs> out;
  for (const ExchangeDest& d : dests) {
    Regs regs;
    for (int64_t r = 0; r < d.map->numRegs(); ++r) {
      llvm::Value* p = smemElementPtr(base, mt, bufferIndex(*d.map, d.fromBuffer, r));
      regs.push_back(fromMemory(b.CreateLoad(mt, p), element));
    }
    out.push_back(std::move(regs));
  }
  return out;
}

// ------------------------------------------------------------------------------------------------ driver

void KernelLowering::declareKernel() {
  std::vector<llvm::Type*> params;
  for (unsigned i = 0; i < func.numArguments(); ++i) {
    ir::Type t = func.argument(i)->type();
    if (t.isTile()) throw Error("cannot lower kernel '" + func.name() + "': argument " + std::to_string(i) +
                                " is a tile (" + t.str() + "); kernel arguments are scalars and pointers");
    // i1 travels as a byte: kernel parameters are at least byte-sized.
    params.push_back(t.isBool() ? b.getInt8Ty() : regType(t));
  }
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), params, false);
  kernel = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, func.name(), module.get());
  hooks.configureKernel(*kernel, opts.numWarps);
  for (unsigned i = 0; i < func.numArguments(); ++i) {
    llvm::Argument* a = kernel->getArg(i);
    a->setName(func.argument(i)->nameHint().empty() ? "arg" + std::to_string(i) : func.argument(i)->nameHint());
    ir::Type t = func.argument(i)->type();
    if (t.isPtr()) {
      a->addAttr(llvm::Attribute::NoUndef);
      const ir::AttrDict& attrs = func.argAttrs(i);
      auto it = attrs.find("divisibility");
      if (it != attrs.end() && it->second.isInt() && it->second.getInt() > 0)
        a->addAttr(llvm::Attribute::getWithAlignment(ctx, llvm::Align(static_cast<uint64_t>(
                                                              std::min<int64_t>(it->second.getInt(), 4096)))));
    }
  }
}

std::unique_ptr<llvm::Module> KernelLowering::run() {
  if (func.attrs().count("num_warps") && func.attrs().at("num_warps").isInt() &&
      func.attrs().at("num_warps").getInt() != opts.numWarps)
    throw Error("kernel '" + func.name() + "' was laid out for num_warps = " +
                std::to_string(func.attrs().at("num_warps").getInt()) + " but is lowered for " +
                std::to_string(opts.numWarps));
  module = std::make_unique<llvm::Module>(func.name(), ctx);
  declareKernel();
  debugLocations_ = std::make_unique<DebugLocations>(*module, *kernel, func, hooks.lineDirectivesOnly());
  prologue_ = llvm::BasicBlock::Create(ctx, "prologue", kernel);
  llvm::BasicBlock* body = llvm::BasicBlock::Create(ctx, "body", kernel);
  b.SetInsertPoint(prologue_);
  llvm::Value* tid = hooks.threadId(b);
  laneId_ = b.CreateURem(tid, b.getInt32(static_cast<uint32_t>(warpSize)), "lane");
  warpId_ = b.CreateUDiv(tid, b.getInt32(static_cast<uint32_t>(warpSize)), "warp");
  for (unsigned i = 0; i < func.numArguments(); ++i) {
    llvm::Value* a = kernel->getArg(i);
    if (func.argument(i)->type().isBool()) a = b.CreateICmpNE(a, b.getInt8(0));
    set(func.argument(i), {a});
  }
  b.SetInsertPoint(body);
  lowerBlock(*func.body());
  b.SetInsertPoint(prologue_);
  b.CreateBr(body);
  debugLocations_->finalize();

  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyModule(*module, &os))
    throw Error("internal error: lowering kernel '" + func.name() + "' produced invalid LLVM IR: " + os.str());
  return std::move(module);
}

void KernelLowering::lowerBlock(const ir::Block& block) {
  for (const auto& op : block.ops()) {
    try {
      lowerOp(*op);
    } catch (const Error& e) {
      // Helpers that only know the op's name (thread maps, layouts) throw without a location: add the op's.
      if (e.location().known()) throw;
      throw Error(e.message(), op->loc());
    }
  }
}

void KernelLowering::lowerOp(const ir::Op& op) {
  DebugLocations::OpScope located(*debugLocations_, op, b);
  switch (op.kind()) {
    case OpKind::Constant: case OpKind::ProgramId: case OpKind::NumPrograms: case OpKind::Arange:
    case OpKind::Splat:
      return lowerConstantLike(op);
    case OpKind::Broadcast: case OpKind::ExpandDims: case OpKind::Reshape: case OpKind::Trans: case OpKind::Cat:
    case OpKind::Join: case OpKind::Split: case OpKind::ConvertLayout:
      return lowerShapeOp(op);
    case OpKind::Load: case OpKind::Store: case OpKind::AtomicRMW: case OpKind::AtomicCAS:
      return lowerMemoryOp(op);
    case OpKind::Reduce: return lowerReduce(op);
    case OpKind::Scan: return lowerScan(op);
    case OpKind::Dot: return lowerDot(op);
    case OpKind::For: case OpKind::If: case OpKind::While:
      return lowerControlFlow(op);
    case OpKind::Yield:
      fail(op, "'yield' is lowered by its parent op");  // parents consume their terminators
    case OpKind::Return:
      b.CreateRetVoid();
      return;
    case OpKind::Barrier:
      hooks.barrier(b);
      return;
    case OpKind::Hint:
      set(op.result(0), get(op.operand(0)));
      return;
    case OpKind::DebugPrint: case OpKind::DeviceAssert:
      return lowerDebugOp(op);
    default:
      if (op.info().has(ir::kElementwise)) return lowerElementwise(op);
      fail(op, "no lowering for this op");
  }
}

std::unique_ptr<llvm::Module> lowerFunction(const ir::Function& f, llvm::LLVMContext& ctx, LoweringHooks& hooks,
                                            const LoweringOptions& opts) {
  KernelLowering lowering(f, ctx, hooks, opts);
  return lowering.run();
}

}  // namespace tessera::backends
