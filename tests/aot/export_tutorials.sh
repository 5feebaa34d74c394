#!/usr/bin/env bash
# Exports every tutorial kernel (frontend/tessera/kernels) with tessera-aot for nvptx sm_80/sm_90a and amdgpu
# gfx90a/gfx942, compiles smoke.c against all the exports with cc -std=c11 -Wall -Werror (nothing but libc,
# libdl and pthreads: no Tessera, no LLVM) and runs it. The CUDA driver and HIP runtime are pointed at paths that
# do not exist, so every launch must fail with "no device" on any machine (smoke.c passes fake device pointers);
# tests/python/test_aot.py compares exports with the JIT where a GPU is present.
# Then hip_launch.c launches the vector add on the recording HIP runtime (tests/fake_hip), a gfx942 device: the
# loader must pass over the gfx90a code object the runtime refuses and launch the gfx942 one with its arguments.
#
#   tests/aot/export_tutorials.sh <tessera-aot> <scratch dir> <recording libamdhip64>   (ctest runs it)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
aot=$1 work=$2 fake_hip=$3
rm -rf "$work"
mkdir -p "$work/exports"
targets=(--target nvptx:sm_80 --target nvptx:sm_90a --target amdgpu:gfx90a --target amdgpu:gfx942)
matmul=(--const BM=64 --const BN=64 --const BK=32 --const GROUP_M=8 --divisible-by-16 a,b,c,K,stride_am,stride_bk,stride_cm)
export_kernel() { "$aot" "${targets[@]}" -o "$work/exports" "$@" >>"$work/export.log"; }

export_kernel --kernel vector_add --const BLOCK=1024 --divisible-by-16 x,y,out,n
export_kernel --kernel softmax --const BLOCK=1024 --divisible-by-16 out,in,in_row_stride,out_row_stride
export_kernel --kernel layernorm_fwd --const BLOCK=1024 --divisible-by-16 x,y,weight,bias,row_stride
export_kernel --kernel layernorm_bwd_dx --const BLOCK=1024 --num-warps 8
export_kernel --kernel layernorm_bwd_dwdb --const BLOCK_M=32 --const BLOCK_N=128
export_kernel --kernel layernorm_bwd_atomic --const BLOCK=1024 --equal-to-1 rows_per_program
export_kernel --kernel matmul "${matmul[@]}"
export_kernel --kernel matmul_epilogue --name matmul_relu "${matmul[@]}" --const ACTIVATION=1
export_kernel --kernel matmul_epilogue_f16 --name matmul_gelu_f16 "${matmul[@]}" --const ACTIVATION=3
export_kernel --kernel attention_fwd --name attention_fwd_causal --const BM=64 --const BN=64 --const HEAD_DIM=64 \
  --const CAUSAL=1 --divisible-by-16 q,k,v,out,seq_len

# Every export embeds a binary for each target (and a cubin per nvptx arch where ptxas is installed).
for arch in "nvptx sm_80 ptx" "nvptx sm_90a ptx" "amdgpu gfx90a hsaco" "amdgpu gfx942 hsaco"; do
  [ "$(grep -c "embedded: $arch\$" "$work/export.log")" = 10 ] || { echo "not every export embeds $arch" >&2; exit 1; }
done
if [ -x /usr/local/cuda/bin/ptxas ]; then
  [ "$(grep -c "embedded: nvptx sm_90a cubin\$" "$work/export.log")" = 10 ] || { echo "cubins missing" >&2; exit 1; }
fi

${CC:-cc} -std=c11 -Wall -Wextra -Werror -pedantic -I "$work/exports" -o "$work/smoke" "$here/smoke.c" \
  "$work/exports"/*.c -ldl -lpthread
TESSERA_LIBCUDA=/nonexistent/libcuda.so.1 TESSERA_LIBAMDHIP=/nonexistent/libamdhip64.so "$work/smoke"

${CC:-cc} -std=c11 -Wall -Wextra -Werror -pedantic -I "$work/exports" -o "$work/hip_launch" "$here/hip_launch.c" \
  "$work/exports"/vector_add.c -ldl -lpthread
log=$work/fake-hip.log
TESSERA_LIBCUDA=/nonexistent/libcuda.so.1 TESSERA_LIBAMDHIP=$fake_hip TESSERA_FAKE_HIP_ARCH=gfx942 \
  TESSERA_FAKE_HIP_LOG=$log "$work/hip_launch"
# hipErrorNoBinaryForGpu (209) for the gfx90a code object, then the gfx942 one; 4 wavefronts; x, y, out, n = 4096.
expect_log() { grep -qF -- "$1" "$log" || { echo "the recording HIP runtime's log lacks: $1" >&2; cat "$log" >&2; exit 1; }; }
expect_log '{"call": "hipModuleLoadData", "device_arch": "gfx942", "result": 209}'
expect_log '{"call": "hipModuleLoadData", "device_arch": "gfx942", "result": 0}'
expect_log '"kernel": "vector_add", "grid": [4, 1, 1], "block": [256, 1, 1], "shared": 0'
expect_log '"00100000"]}'
[ "$(grep -c hipModuleLaunchKernel "$log")" = 1 ] || { echo "expected one launch" >&2; cat "$log" >&2; exit 1; }
echo "the HIP export launched its gfx942 code object"
