// DLPack's C ABI (dlpack.h, stable since v0.6): the few fields a launch reads from a "dltensor" capsule, and
// the checks shared by host (interpreter, eager) and CUDA launches.
#pragma once

#include <cstdint>
#include <string>

#include "ir/Types.h"

namespace tessera::python {

struct DLPackDevice {
  int32_t deviceType;  // kDLCPU = 1, kDLCUDA = 2, kDLROCM = 10, kDLCUDAManaged = 13
  int32_t deviceId;
};
struct DLPackDataType {
  uint8_t code;  // 0 int, 1 uint, 2 float, 4 bfloat, 5 complex, 6 bool
  uint8_t bits;
  uint16_t lanes;
};
struct DLPackTensor {
  void* data;
  DLPackDevice device;
  int32_t ndim;
  DLPackDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; null means C-contiguous
  uint64_t byteOffset;
};
struct DLPackManagedTensor {
  DLPackTensor tensor;
  void* managerContext;
  void (*deleter)(DLPackManagedTensor*);
};
constexpr int32_t kDLCPU = 1;
constexpr int32_t kDLCUDA = 2;
constexpr int32_t kDLCUDAManaged = 13;
constexpr int32_t kDLROCM = 10;  // AMD GPU memory (torch's and CuPy's ROCm builds)

// Whether elements of this DLPack type may be passed for `ptr<elem>`. bf16 and fp8 also take their bit patterns
// as unsigned integers of the same width.
inline bool dlpackDtypeMatches(ir::Type elem, DLPackDataType dt) {
  if (dt.lanes != 1) return false;
  if (elem.isBool()) return (dt.code == 6 || dt.code == 1) && dt.bits == 8;
  if (elem.isFP8()) return dt.bits == 8 && dt.code != 2;
  if (elem.scalarKind() == ir::ScalarKind::BF16) return dt.bits == 16 && (dt.code == 4 || dt.code == 1);
  if (elem.isFloat()) return dt.code == 2 && dt.bits == elem.bitWidth();
  if (elem.isSigned()) return dt.code == 0 && dt.bits == elem.bitWidth();
  return dt.code == 1 && dt.bits == elem.bitWidth();
}

// "float32", "bfloat16", "int8", "bool", ... as torch and numpy name them, for messages.
inline std::string dlpackDtypeName(DLPackDataType dt) {
  static const char* const kinds[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
  std::string name = dt.code < 7 ? kinds[dt.code] : "code " + std::to_string(dt.code) + " ";
  if (dt.code != 6) name += std::to_string(dt.bits);
  if (dt.lanes != 1) name += "x" + std::to_string(dt.lanes);
  return name;
}

}  // namespace tessera::python
