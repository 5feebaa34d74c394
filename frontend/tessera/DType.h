// Element-type tags for the DSL: Ptr<f16>, zeros<f32>({64}), cast<bf16>(x), Scalar<i64>.
#pragma once

#include "ir/Types.h"

namespace tessera {

struct i1 {};
struct i8 {};
struct i16 {};
struct i32 {};
struct i64 {};
struct u8 {};
struct u16 {};
struct u32 {};
struct u64 {};
struct f16 {};
struct bf16 {};
struct f32 {};
struct f64 {};
struct f8e4m3 {};
struct f8e5m2 {};

template <class T> struct DTypeOf;
#define TESSERA_DTYPE(Tag, Kind) \
  template <> struct DTypeOf<Tag> { static ir::Type get() { return ir::Type::scalar(ir::ScalarKind::Kind); } };
TESSERA_DTYPE(i1, I1)
TESSERA_DTYPE(i8, I8)
TESSERA_DTYPE(i16, I16)
TESSERA_DTYPE(i32, I32)
TESSERA_DTYPE(i64, I64)
TESSERA_DTYPE(u8, U8)
TESSERA_DTYPE(u16, U16)
TESSERA_DTYPE(u32, U32)
TESSERA_DTYPE(u64, U64)
TESSERA_DTYPE(f16, F16)
TESSERA_DTYPE(bf16, BF16)
TESSERA_DTYPE(f32, F32)
TESSERA_DTYPE(f64, F64)
TESSERA_DTYPE(f8e4m3, F8E4M3)
TESSERA_DTYPE(f8e5m2, F8E5M2)
#undef TESSERA_DTYPE

template <class T> ir::Type dtype() { return DTypeOf<T>::get(); }

}  // namespace tessera
