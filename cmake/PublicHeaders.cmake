# The headers a Tessera user compiles against, installed (cmake/Install.cmake) and shipped in the Python package
# (python/CMakeLists.txt, for tessera.load), both as one include tree: "tessera/tessera.h" (the DSL, from
# frontend/), "ir/..." and "jit/..." (JitKernel.h and what it includes, for GPU launches from C++;
# AutotunedKernel.h and what it includes, for autotuned launches; jit/aot/Export.h, for ahead-of-time export from
# a user's own build step). None of them
# includes an LLVM or backend header: tests/cmake_consumer/run.sh compiles each one alone to keep it so.
file(GLOB TESSERA_PUBLIC_HEADERS RELATIVE ${CMAKE_SOURCE_DIR} CONFIGURE_DEPENDS
     ${CMAKE_SOURCE_DIR}/ir/*.h ${CMAKE_SOURCE_DIR}/ir/Ops.def
     ${CMAKE_SOURCE_DIR}/frontend/tessera/*.h ${CMAKE_SOURCE_DIR}/frontend/tessera/kernels/*.h)
list(APPEND TESSERA_PUBLIC_HEADERS jit/JitKernel.h jit/Cache.h jit/CompiledKernel.h jit/CudaDriver.h
     jit/DeviceRuntime.h jit/HipRuntime.h jit/KernelArg.h jit/LoadedKernel.h jit/Specialization.h
     jit/AutotunedKernel.h jit/Autotuner.h jit/ConfigPruning.h jit/DescriptorBlocks.h jit/KernelTimer.h
     jit/TuneConfig.h jit/TuningCache.h jit/StreamWait.h jit/KfdTopology.h jit/aot/Export.h)

# The include tree's place in an installation (the installed Tessera::tessera points there).
set(TESSERA_INSTALL_INCLUDE_DIR include/tessera)

# Where a header (a path relative to the source root) goes in the include tree: frontend/tessera/x.h and
# python/include/tessera/python.h are tessera/x.h and tessera/python.h there.
function(tessera_public_header_path header out_var)
  string(REGEX REPLACE "^(frontend|python/include)/" "" path "${header}")
  set(${out_var} ${path} PARENT_SCOPE)
endfunction()
