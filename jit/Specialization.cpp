#include "jit/Specialization.h"

#include <algorithm>
#include <limits>

namespace tessera::jit {

namespace {

std::string constantText(const ConstValue& v) {
  if (std::holds_alternative<int64_t>(v)) return std::to_string(std::get<int64_t>(v));
  return ir::formatFloat(std::get<double>(v));  // bit-exact, so 0.1 and 0.1000001 never share a kernel
}

const char* kindName(KernelArg::Kind k) {
  switch (k) {
    case KernelArg::Kind::Pointer: return "a device pointer";
    case KernelArg::Kind::Int: return "an integer";
    case KernelArg::Kind::Float: return "a floating-point number";
    case KernelArg::Kind::TensorDescriptor: return "a tensor descriptor";
  }
  return "?";
}

// Whether `v` is representable in the integer type `t` (u64 accepts any bit pattern).
bool fitsIntType(ir::Type t, int64_t v) {
  int bits = t.bitWidth();
  if (t.isBool()) return v == 0 || v == 1;
  if (bits >= 64) return true;
  if (t.isSigned()) return v >= -(int64_t(1) << (bits - 1)) && v < (int64_t(1) << (bits - 1));
  return v >= 0 && v < (int64_t(1) << bits);
}

// Whether `bytes` of memory hold fewer than 2^31 elements of the pointee of `pointerType` (a partial element
// counts), so that every element offset from the base that stays inside the memory fits an i32.
bool fewerThan2To31Elements(uint64_t bytes, ir::Type pointerType) {
  const uint64_t elementBytes = static_cast<uint64_t>(pointerType.pointee().storageBytes());
  return bytes / elementBytes + (bytes % elementBytes != 0) < (uint64_t(1) << 31);
}

}  // namespace

std::string Specialization::key() const {
  std::string k;
  for (const auto& [name, value] : constants) k += name + "=" + constantText(value) + ";";
  k += "args=";
  for (size_t i = 0; i < args.size(); ++i) {
    k += i ? "," : "";
    if (args[i].descriptorType)
      k += args[i].descriptorType.str() + (args[i].divisibleBy16 ? "16" : "");
    else
      k += std::string(args[i].divisibleBy16  ? "16"
                       : args[i].divisibleBy8 ? "8"
                       : args[i].equalTo1     ? "1"
                                              : "_") +
           (args[i].offsets32 ? "r32" : "");
  }
  k += ";warps=" + std::to_string(numWarps) + ";stages=" + std::to_string(numStages) + ";" + target + ";" + arch + (fastMath ? ";fast" : ";precise");
  if (persistent) k += ";persistent";
  if (warpSpecialize) k += ";warp_specialize";
  if (pingPong) k += ";ping_pong";
  if (!consumerTurns) k += ";no_consumer_turns";
  if (matrixInstrSize) k += ";matrix_instr_nonkdim=" + std::to_string(matrixInstrSize);
  if (clusterDims != std::array<int, 3>{1, 1, 1}) k += ";cluster=" + clusterShapeText(clusterDims);
  return k;
}

std::string clusterShapeText(const std::array<int, 3>& clusterDims) {
  return std::to_string(clusterDims[0]) + "x" + std::to_string(clusterDims[1]) + "x" + std::to_string(clusterDims[2]);
}

std::vector<ArgFacts> argumentFacts(const std::string& kernelName, const std::vector<ParamInfo>& params,
                                    const std::vector<KernelArg>& args) {
  if (args.size() != params.size())
    throw Error("kernel '" + kernelName + "' takes " + std::to_string(params.size()) + " runtime arguments, got " +
                std::to_string(args.size()));
  std::vector<ArgFacts> facts(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const ParamInfo& p = params[i];
    const KernelArg& a = args[i];
    KernelArg::Kind want = p.kind == ParamKind::Pointer            ? KernelArg::Kind::Pointer
                           : p.kind == ParamKind::TensorDescriptor ? KernelArg::Kind::TensorDescriptor
                           : p.type.isFloat()                      ? KernelArg::Kind::Float
                                                                   : KernelArg::Kind::Int;
    if (a.kind() != want)
      throw Error("kernel '" + kernelName + "': argument '" + p.name + "' (" + p.type.str() + ") must be " +
                  kindName(want) + ", got " + kindName(a.kind()));
    if (want == KernelArg::Kind::TensorDescriptor) {
      if (auto why = ir::descriptorError(a.descriptor(), p.type))
        throw Error("kernel '" + kernelName + "': descriptor argument '" + p.name + "': " + *why);
      facts[i].descriptorType = ir::descriptorType(a.descriptor(), p.type);
      // The innermost dimension's: masks along it are then constant over 16 elements, and copies of its rows
      // vectorize. The outer dimensions' masks are constant along the rows whatever their sizes (a ragged
      // sequence length must not turn attention's [batch * heads, seq_len, d] copies into 2-byte ones).
      facts[i].divisibleBy16 = a.descriptor().shape.back() % 16 == 0;
    } else if (want == KernelArg::Kind::Pointer) {
      facts[i].divisibleBy16 = a.pointerValue() % 16 == 0;
      facts[i].offsets32 = a.pointerBytes() && fewerThan2To31Elements(*a.pointerBytes(), p.type);
    } else if (want == KernelArg::Kind::Int) {
      if (!fitsIntType(p.type, a.intValue()))
        throw Error("kernel '" + kernelName + "': argument '" + p.name + "' = " + std::to_string(a.intValue()) +
                    " does not fit its type " + p.type.str());
      // Booleans carry no divisibility facts worth specializing on.
      if (!p.type.isBool()) {
        facts[i].divisibleBy16 = a.intValue() % 16 == 0;
        facts[i].divisibleBy8 = !facts[i].divisibleBy16 && a.intValue() % 8 == 0;
        facts[i].equalTo1 = a.intValue() == 1;
      }
    }
  }
  return facts;
}

DescriptorTypes descriptorTypes(const std::vector<ParamInfo>& runtimeParams, const std::vector<ArgFacts>& facts) {
  DescriptorTypes types;
  for (size_t i = 0; i < runtimeParams.size() && i < facts.size(); ++i)
    if (facts[i].descriptorType) types[runtimeParams[i].name] = facts[i].descriptorType;
  return types;
}

void applySpecialization(ir::Function& f, const std::vector<ArgFacts>& facts) {
  if (facts.size() != f.numArguments())
    throw Error("applySpecialization: " + std::to_string(facts.size()) + " argument facts for @" + f.name() +
                ", which has " + std::to_string(f.numArguments()) + " arguments");
  for (unsigned i = 0; i < f.numArguments(); ++i) {
    ir::AttrDict& attrs = f.argAttrs(i);
    if (facts[i].divisibleBy16) attrs["divisibility"] = ir::Attr::integer(16);
    else if (facts[i].divisibleBy8) attrs["divisibility"] = ir::Attr::integer(8);
    if (facts[i].equalTo1) attrs["equal_to_1"] = ir::Attr::boolean(true);
    if (facts[i].offsets32) attrs["pointer_range"] = ir::Attr::integer(32);
  }
}

}  // namespace tessera::jit
