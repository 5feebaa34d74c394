// Matrix multiplication (tutorials/04_matmul.md): C = A x B with f16 inputs and an f32 accumulator (the tutorial's
// kernels; `matmul_of<In>` takes other inputs: bf16, fp8 with an f32 accumulator, i8 with an i32 one, and f32
// with `InputPrecision::TF32` for tf32 products; `matmul_mixed_of<InA, InB>` one fp8 format times the other;
// `matmul_desc_of<In>` reads A and B through tensor descriptors). Each program computes one BM x BN tile of C,
// walking K in BK steps; programs are ordered in groups of GROUP_M rows of tiles so that programs running at the
// same time share rows of A and columns of B in the L2 cache.
//
// `matmul` (matmul_of<f16>) stores the f32 accumulator. `matmul_epilogue` (f32 C) and `matmul_epilogue_f16` (f16 C) apply an
// activation chosen by the Const ACTIVATION to the f32 accumulator while it is still in registers, then store
// it: the activation costs no extra pass over C in memory.
#pragma once

#include <numbers>
#include <type_traits>

#include "tessera/tessera.h"

namespace tessera::kernels {

// Values of the epilogue kernels' ACTIVATION constant.
enum Activation : int { kActivationNone = 0, kActivationRelu = 1, kActivationLeakyRelu = 2, kActivationGeluTanh = 3 };
inline constexpr float kLeakyReluSlope = 0.01f;  // PyTorch's default negative slope

// One program's BM x BN tile of A x B (of one element type, or of the two fp8 formats). Also returns the tile's row
// and column indices.
struct MatmulTile {
  Tensor acc, rows, cols;
};

// The accumulator of a dot on `In` inputs: f32 for floats, i32 for i8 (dot's own default).
template <class In> struct MatmulAccumulator {
  using type = f32;
};
template <> struct MatmulAccumulator<i8> {
  using type = i32;
};

// The BM x BN tile of C this program computes, as tile row and column indices (pm, pn), in grouped ordering:
// consecutive program ids walk down a group of GROUP_M tile rows before moving one tile column to the right,
// instead of sweeping a whole row of C.
struct ProgramTile {
  Tensor pm, pn;
};
inline ProgramTile grouped_program_tile(Int M, Int N, int BM, int BN, int GROUP_M) {
  Tensor pid = program_id(0);
  Tensor num_pid_m = cdiv(M, BM);
  Tensor num_pid_n = cdiv(N, BN);
  Tensor programs_per_group = GROUP_M * num_pid_n;
  Tensor first_pm = (pid / programs_per_group) * GROUP_M;
  Tensor group_rows = minimum(num_pid_m - first_pm, GROUP_M);  // the last group may be shorter
  return {first_pm + (pid % programs_per_group) % group_rows, (pid % programs_per_group) / group_rows};
}

// Stores a tile of C at rows x cols (its row and column indices), masked to M x N.
inline void store_c_tile(const Tensor& c, const Tensor& value, const MatmulTile& t, Int M, Int N, Int stride_cm,
                         Int stride_cn) {
  Tensor c_ptrs = c + expand_dims(t.rows, 1) * stride_cm + expand_dims(t.cols, 0) * stride_cn;
  store(c_ptrs, value, (expand_dims(t.rows, 1) < M) & (expand_dims(t.cols, 0) < N));
}

template <class In, class InB>
inline MatmulTile matmul_tile(Ptr<In> a, Ptr<InB> b, Int M, Int N, Int K, Int stride_am, Int stride_ak,
                              Int stride_bk, Int stride_bn, int BM, int BN, int BK, int GROUP_M,
                              InputPrecision precision = InputPrecision::IEEE) {
  const auto [pm, pn] = grouped_program_tile(M, N, BM, BN, GROUP_M);
  Tensor rm = pm * BM + arange(0, BM);
  Tensor rn = pn * BN + arange(0, BN);
  Tensor rk = arange(0, BK);
  Tensor a_ptrs = a + expand_dims(rm, 1) * stride_am + expand_dims(rk, 0) * stride_ak;  // [BM, BK]
  Tensor b_ptrs = b + expand_dims(rk, 1) * stride_bk + expand_dims(rn, 0) * stride_bn;  // [BK, BN]

  Tensor acc = zeros<typename MatmulAccumulator<In>::type>({BM, BN});
  for (Tensor k : range(0, K, BK)) {  // acc, a_ptrs and b_ptrs become loop-carried values
    Tensor a_mask = (expand_dims(rm, 1) < M) & (expand_dims(rk, 0) + k < K);
    Tensor b_mask = (expand_dims(rk, 1) + k < K) & (expand_dims(rn, 0) < N);
    acc = dot(load(a_ptrs, a_mask), load(b_ptrs, b_mask), acc, precision);  // masked-off elements read as 0
    a_ptrs += BK * stride_ak;
    b_ptrs += BK * stride_bk;
  }
  return {acc, rm, rn};
}

// C holds the accumulator as it is (f32, or i32 for i8 inputs).
template <class In, InputPrecision Precision = InputPrecision::IEEE>
inline void matmul_of(Ptr<In> a, Ptr<In> b, Ptr<typename MatmulAccumulator<In>::type> c, Int M, Int N, Int K,
                      Int stride_am, Int stride_ak, Int stride_bk, Int stride_bn, Int stride_cm, Int stride_cn,
                      Const<int> BM, Const<int> BN, Const<int> BK, Const<int> GROUP_M) {
  MatmulTile t =
      matmul_tile(a, b, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, BM, BN, BK, GROUP_M, Precision);
  store_c_tile(c, t.acc, t, M, N, stride_cm, stride_cn);
}

// C = A x B with A and B read through tensor descriptors (blocks BM x BK of A and BK x BN of B, which the launch's
// descriptors give): each load is the block at (row, k) of its matrix, zero where it reaches past M, N or K, so the
// kernel needs no masks or pointer arithmetic of its own. Only C is a plain pointer. C holds the accumulator, or
// (Out) its rounding to another type, once, at the store.
template <class In, class Out = typename MatmulAccumulator<In>::type>
inline void matmul_desc_of(TensorDesc<In> a, TensorDesc<In> b, Ptr<Out> c, Int M, Int N, Int K, Int stride_cm,
                           Int stride_cn, Const<int> BM, Const<int> BN, Const<int> BK, Const<int> GROUP_M) {
  using Acc = typename MatmulAccumulator<In>::type;
  const auto [pm, pn] = grouped_program_tile(M, N, BM, BN, GROUP_M);
  Tensor m0 = pm * BM, n0 = pn * BN;
  Tensor acc = zeros<Acc>({BM, BN});
  for (Tensor k : range(0, K, BK)) acc = dot(load(a, {m0, k}), load(b, {k, n0}), acc);
  MatmulTile tile{acc, m0 + arange(0, BM), n0 + arange(0, BN)};
  if constexpr (std::is_same_v<Out, Acc>)
    store_c_tile(c, acc, tile, M, N, stride_cm, stride_cn);
  else
    store_c_tile(c, cast<Out>(acc), tile, M, N, stride_cm, stride_cn);
}

// matmul_desc_of with C stored through a tensor descriptor too (blocks BM x BN of C): on sm_90 a TMA store (the
// tile staged in shared memory and written by one bulk copy, clipped to the matrix), elsewhere a masked store. C
// holds the accumulator rounded to Out.
template <class In, class Out = In>
inline void matmul_desc_tma_c_of(TensorDesc<In> a, TensorDesc<In> b, TensorDesc<Out> c, Int M, Int N, Int K,
                                 Const<int> BM, Const<int> BN, Const<int> BK, Const<int> GROUP_M) {
  using Acc = typename MatmulAccumulator<In>::type;
  const auto [pm, pn] = grouped_program_tile(M, N, BM, BN, GROUP_M);
  Tensor m0 = pm * BM, n0 = pn * BN;
  Tensor acc = zeros<Acc>({BM, BN});
  for (Tensor k : range(0, K, BK)) acc = dot(load(a, {m0, k}), load(b, {k, n0}), acc);
  if constexpr (std::is_same_v<Out, Acc>)
    store(c, {m0, n0}, acc);
  else
    store(c, {m0, n0}, cast<Out>(acc));
}

// The activation, on the f32 accumulator. ACTIVATION is a Const, so this is ordinary C++ control flow that runs
// while tracing: each specialization's IR holds only the ops of its own activation, and no branch.
inline Tensor apply_activation(const Tensor& x, int activation) {
  switch (activation) {
    case kActivationNone: return x;
    case kActivationRelu: return maximum(x, 0.0f);
    case kActivationLeakyRelu: return where(x > 0.0f, x, x * kLeakyReluSlope);
    case kActivationGeluTanh: {
      // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
      const float k = static_cast<float>(std::numbers::sqrt2 * std::numbers::inv_sqrtpi);  // sqrt(2/pi)
      return 0.5f * x * (1.0f + tanh(k * (x + 0.044715f * x * x * x)));
    }
  }
  throw Error("ACTIVATION must be 0 (none), 1 (relu), 2 (leaky relu) or 3 (gelu-tanh), got " +
              std::to_string(activation));
}

// Matmul with a fused epilogue; C's element type (f32, or f16 to halve the bytes written) is the template
// argument: the accumulator is converted only at the store.
template <class OutT>
inline void matmul_epilogue(Ptr<f16> a, Ptr<f16> b, Ptr<OutT> c, Int M, Int N, Int K, Int stride_am,
                            Int stride_ak, Int stride_bk, Int stride_bn, Int stride_cm, Int stride_cn, Const<int> BM,
                            Const<int> BN, Const<int> BK, Const<int> GROUP_M, Const<int> ACTIVATION) {
  MatmulTile t = matmul_tile(a, b, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, BM, BN, BK, GROUP_M);
  store_c_tile(c, cast<OutT>(apply_activation(t.acc, ACTIVATION)), t, M, N, stride_cm, stride_cn);
}

// C = A x B with A and B of different fp8 formats (e4m3 x e5m2, or the reverse), f32 accumulator and C.
template <class InA, class InB>
inline void matmul_mixed_of(Ptr<InA> a, Ptr<InB> b, Ptr<f32> c, Int M, Int N, Int K, Int stride_am, Int stride_ak,
                            Int stride_bk, Int stride_bn, Int stride_cm, Int stride_cn, Const<int> BM, Const<int> BN,
                            Const<int> BK, Const<int> GROUP_M) {
  MatmulTile t = matmul_tile(a, b, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, BM, BN, BK, GROUP_M);
  store_c_tile(c, t.acc, t, M, N, stride_cm, stride_cn);
}

inline std::vector<std::string> matmul_param_names() {
  return {"a", "b", "c", "M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm",
          "stride_cn", "BM", "BN", "BK", "GROUP_M"};
}

inline KernelDef matmul_kernel() { return kernel("matmul", matmul_of<f16>, matmul_param_names()); }

// matmul on other inputs, named after them ("matmul_bf16", "matmul_i8", ...).
template <class In>
inline KernelDef matmul_kernel_of(const std::string& inputName) {
  return kernel("matmul_" + inputName, matmul_of<In>, matmul_param_names());
}

// matmul_mixed_of, named after its inputs ("matmul_f8e4m3_f8e5m2", ...).
template <class InA, class InB>
inline KernelDef matmul_mixed_kernel(const std::string& inputNames) {
  return kernel("matmul_" + inputNames, matmul_mixed_of<InA, InB>, matmul_param_names());
}

// matmul on f32 inputs rounded to tf32 (tensor cores on NVIDIA GPUs; the FMA path elsewhere).
inline KernelDef matmul_tf32_kernel() {
  return kernel("matmul_tf32", matmul_of<f32, InputPrecision::TF32>, matmul_param_names());
}

inline std::vector<std::string> matmul_desc_param_names() {
  return {"a", "b", "c", "M", "N", "K", "stride_cm", "stride_cn", "BM", "BN", "BK", "GROUP_M"};
}

// matmul_desc_of on f16 (or `In`) inputs, named "matmul_desc" (or "matmul_desc_<inputName>").
template <class In = f16>
inline KernelDef matmul_desc_kernel(const std::string& inputName = "") {
  return kernel(inputName.empty() ? "matmul_desc" : "matmul_desc_" + inputName, matmul_desc_of<In>,
                matmul_desc_param_names());
}

// matmul_desc_of with C in the input type (what torch.matmul returns: f16 or bf16), named
// "matmul_desc_<inputName>_out".
template <class In>
inline KernelDef matmul_desc_same_out_kernel(const std::string& inputName) {
  return kernel("matmul_desc_" + inputName + "_out", matmul_desc_of<In, In>, matmul_desc_param_names());
}

// matmul_desc_tma_c_of on `In` inputs with C in the input type, named "matmul_desc_<inputName>_tma_c".
template <class In>
inline KernelDef matmul_desc_tma_c_kernel(const std::string& inputName) {
  return kernel("matmul_desc_" + inputName + "_tma_c", matmul_desc_tma_c_of<In>,
                {"a", "b", "c", "M", "N", "K", "BM", "BN", "BK", "GROUP_M"});
}

inline std::vector<std::string> matmul_epilogue_param_names() {
  std::vector<std::string> names = matmul_param_names();
  names.push_back("ACTIVATION");
  return names;
}

inline KernelDef matmul_epilogue_kernel() {
  return kernel("matmul_epilogue", matmul_epilogue<f32>, matmul_epilogue_param_names());
}

inline KernelDef matmul_epilogue_f16_kernel() {
  return kernel("matmul_epilogue_f16", matmul_epilogue<f16>, matmul_epilogue_param_names());
}

}  // namespace tessera::kernels
