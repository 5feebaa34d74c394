// Tile IR types. Types are interned: two Types are equal iff they point at the same storage, so they compare
// and hash by pointer and are cheap to copy.
//
//   scalar   i1 i8 i16 i32 i64 u8 u16 u32 u64 f16 bf16 f32 f64 f8e4m3 f8e5m2
//   pointer  ptr<f32>, ptr<f16, 3>          (pointee scalar, address space; 1 = global is the default)
//   tile     tile<128x64xf32>, tile<128xptr<f16>>, tile<64xf32, #blocked{...}>
//   smem     smem<3x64x32xf16, #shared{...}>  (a shared-memory buffer: a leading stage dimension, then one stage's
//            shape, laid out per stage by the shared layout; what local_alloc makes)
//   token    async_token                      (orders asynchronous copies: async_copy, commit and wait groups)
//   desc     tensordesc<64x32xf16>            (a tensor descriptor kernel parameter: a global tensor's base, shape
//            and strides, read block by block; the type holds the block shape, rank 1 to 5, and the element)
//
// Tiles have rank 1 to 3 with power-of-two static dimensions; a rank-0 "tile" is just its element type.
// The optional encoding (a layout attribute) is assigned by the backend-independent layout passes.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tessera::ir {

class Attr;

enum class ScalarKind : uint8_t {
  I1, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64, F8E4M3, F8E5M2,
};

const char* scalarKindName(ScalarKind k);
std::optional<ScalarKind> scalarKindFromName(const std::string& name);

// Largest number of elements a tile may hold (as Triton: 2^20).
constexpr int64_t kMaxTileElements = int64_t(1) << 20;
constexpr int kMaxTileRank = 3;
// Tensor descriptors: the ranks and block dimensions a TMA tensor map allows.
constexpr int kMaxDescriptorRank = 5;
constexpr int64_t kMaxDescriptorBlockDim = 256;
// Address spaces (LLVM numbering, shared by NVPTX and AMDGPU for these two).
constexpr int kGlobalAddrSpace = 1;
constexpr int kSharedAddrSpace = 3;

struct TypeStorage;

class Type {
 public:
  Type() = default;

  // Factories. scalar() and ptr() never fail; tile() throws tessera::Error on an invalid shape (use
  // checkTileShape first to get the message without throwing).
  static Type scalar(ScalarKind k);
  static Type i1() { return scalar(ScalarKind::I1); }
  static Type i32() { return scalar(ScalarKind::I32); }
  static Type i64() { return scalar(ScalarKind::I64); }
  static Type f16() { return scalar(ScalarKind::F16); }
  static Type f32() { return scalar(ScalarKind::F32); }
  static Type ptr(Type pointee, int addrSpace = kGlobalAddrSpace);
  static Type tile(const std::vector<int64_t>& shape, Type element, std::shared_ptr<const Attr> encoding = nullptr);
  // Returns an error message if `shape` is not a legal tile shape, else nullopt. Empty shape is legal (scalar).
  static std::optional<std::string> checkTileShape(const std::vector<int64_t>& shape);
  // A shared-memory buffer of `stages` copies of a tile of `stageShape` elements of scalar `element`, each laid out
  // by `encoding` (a shared layout attribute; required). Throws tessera::Error on an invalid shape or stage count.
  static Type sharedBuffer(int64_t stages, const std::vector<int64_t>& stageShape, Type element,
                           std::shared_ptr<const Attr> encoding);
  static Type asyncToken();
  // `count` mbarriers in shared memory (8 bytes each), one per stage of the shared buffers whose TMA copies they
  // complete (async_tma_copy). Throws tessera::Error when count < 1.
  static Type mbarriers(int64_t count);
  // A tensor descriptor whose loads read blocks of `blockShape` (rank 1 to kMaxDescriptorRank, dimensions powers
  // of two up to kMaxDescriptorBlockDim) of scalar `element`. Throws tessera::Error on an invalid block shape or element.
  static Type tensorDesc(const std::vector<int64_t>& blockShape, Type element);
  // An error message if `blockShape` is not a legal descriptor block, else nullopt.
  static std::optional<std::string> checkDescriptorBlock(const std::vector<int64_t>& blockShape);

  explicit operator bool() const { return s_ != nullptr; }
  bool operator==(const Type& o) const { return s_ == o.s_; }
  bool operator!=(const Type& o) const { return s_ != o.s_; }
  const TypeStorage* storage() const { return s_; }

  // Classification (tiles classify by their element type).
  bool isTile() const;      // rank >= 1
  bool isSharedBuffer() const;
  bool isAsyncToken() const;
  bool isTensorDesc() const;
  bool isMbarriers() const;
  bool isScalar() const {
    return !isTile() && !isSharedBuffer() && !isAsyncToken() && !isTensorDesc() && !isMbarriers();
  }
  bool isPtr() const;       // element is a pointer
  bool isInt() const;       // i1..i64, u8..u64
  bool isBool() const;      // i1
  bool isSigned() const;    // i8..i64 (i1 counts as unsigned)
  bool isUnsigned() const;  // i1, u8..u64
  bool isFloat() const;     // f16 bf16 f32 f64 and fp8
  bool isFP8() const;
  bool isArithmeticFloat() const { return isFloat() && !isFP8(); }

  Type element() const;                      // tile, smem, tensordesc -> its element; scalar/pointer -> itself
  ScalarKind scalarKind() const;             // of the element; pointers: undefined (assert)
  Type pointee() const;                      // element must be a pointer
  int addrSpace() const;                     // element must be a pointer
  int bitWidth() const;                      // of the element (pointers: 64)
  int storageBytes() const;                  // bytes one element occupies in memory (i1: 1, pointers: 8)
  const std::vector<int64_t>& shape() const; // empty for scalars
  int rank() const { return static_cast<int>(shape().size()); }
  int64_t numElements() const;
  const std::shared_ptr<const Attr>& encoding() const;  // tiles and smem buffers
  // tensordesc: the shape of the blocks its loads read.
  const std::vector<int64_t>& blockShape() const;
  // smem buffers: the number of stages, and the shape of one stage; mbarriers: stages() is the barrier count.
  int64_t stages() const;
  const std::vector<int64_t>& stageShape() const;
  // smem buffers: one stage as a tile type (same element; no encoding), what async_copy writes and local_load reads.
  Type stageTile() const;

  Type withElement(Type elem) const;                 // same shape (and encoding), new element
  Type withShape(const std::vector<int64_t>& s) const;  // same element, no encoding
  Type withEncoding(std::shared_ptr<const Attr> enc) const;
  Type withoutEncoding() const { return withEncoding(nullptr); }

  std::string str() const;

 private:
  explicit Type(const TypeStorage* s) : s_(s) {}
  const TypeStorage* s_ = nullptr;
};

struct TypeHash {
  size_t operator()(const Type& t) const { return std::hash<const void*>()(t.storage()); }
};

}  // namespace tessera::ir
