# lit configuration for Tessera's FileCheck tests (textual IR through tessera-opt, PTX, the emulator's host
# modules of GPU LLVM IR, ...).
import os
import lit.formats

config.name = "Tessera"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".tir", ".test", ".ll"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(config.tessera_tools_dir), "tests", "lit-out")
config.excludes = ["lit.cfg.py", "lit.site.cfg.py.in", "Inputs"]

config.substitutions.append(("%tessera-opt", os.path.join(config.tessera_tools_dir, "tessera-opt")))
config.substitutions.append(("%tessera-translate", os.path.join(config.tessera_tools_dir, "tessera-translate")))
config.substitutions.append(("%tessera-gpu-check", os.path.join(config.tessera_tools_dir, "tessera-gpu-check")))
# The recording CUDA driver (tests/fake_cuda/) and HIP runtime (tests/fake_hip/), which run nothing, for the tools'
# GPU paths.
config.substitutions.append(("%fake-libcuda", config.tessera_fake_libcuda))
config.substitutions.append(("%fake-libamdhip", config.tessera_fake_libamdhip))
# project(VERSION) of CMakeLists.txt, which every tool's --version must print.
config.substitutions.append(("%tessera_version", config.tessera_version))
config.substitutions.append(("FileCheck", config.filecheck))
# FileCheck's folder (/usr/lib/llvm-19/bin) holds the other LLVM tools the tests use.
llvm_bin = os.path.dirname(os.path.realpath(config.filecheck))
config.substitutions.append(("split-file", os.path.join(llvm_bin, "split-file")))

# Tools outside the build. ptxas (CUDA) is absent in CI: RUN lines that assemble PTX are guarded with
# `%if ptxas %{ ... %}` (or the test says `REQUIRES: ptxas`), so the PTX text checks still run there. The AMDGPU
# code-object tests need ld.lld (the backend links with it), llvm-readelf and llvm-objdump, all LLVM 19 from
# Debian: `REQUIRES: amdgpu-tools`.
ptxas = "/usr/local/cuda/bin/ptxas"
if os.path.exists(ptxas):
    config.available_features.add("ptxas")
config.substitutions.append(("%ptxas", ptxas))

amdgpu_tools = {name: os.path.join(llvm_bin, name) for name in ("ld.lld", "llvm-readelf", "llvm-objdump")}
if all(os.path.exists(path) for path in amdgpu_tools.values()):
    config.available_features.add("amdgpu-tools")
config.substitutions.append(("%llvm-readelf", amdgpu_tools["llvm-readelf"]))
config.substitutions.append(("%llvm-objdump", amdgpu_tools["llvm-objdump"]))
