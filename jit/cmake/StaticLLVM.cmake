# TESSERA_STATIC_LLVM=ON: every target that links the imported target `LLVM` (Debian's libLLVM.so) gets LLVM's
# static component libraries instead, so the GPU bundle (scripts/gpu/) runs on a machine without LLVM.
# Only the bundle build turns this on; normal builds link the shared library.
llvm_map_components_to_libnames(TESSERA_STATIC_LLVM_LIBS
  core support irreader bitreader bitwriter linker passes target analysis transformutils scalaropts instcombine ipo
  codegen asmprinter mc mcparser nvptxcodegen nvptxdesc nvptxinfo
  # The emulator (jit/sim) compiles the kernel's rewritten module for the host with ORC.
  orcjit x86codegen x86desc x86info x86asmparser)
if(TARGET tessera_amdgpu)  # the AMDGPU backend is behind the same createTarget factory
  llvm_map_components_to_libnames(amdgpu_libs amdgpucodegen amdgpuasmparser amdgpudesc amdgpuinfo)
  list(APPEND TESSERA_STATIC_LLVM_LIBS ${amdgpu_libs})
endif()

# The imported target must keep a location: an empty archive ("!<arch>\n" is a valid one) stands in for
# libLLVM.so, and the static libraries come through its interface.
set(placeholder ${CMAKE_BINARY_DIR}/libtessera-llvm-placeholder.a)
file(WRITE ${placeholder} "!<arch>\n")
foreach(config "" _RELWITHDEBINFO _RELEASE _DEBUG _MINSIZEREL _NONE)
  set_property(TARGET LLVM PROPERTY IMPORTED_LOCATION${config} ${placeholder})
  set_property(TARGET LLVM PROPERTY IMPORTED_SONAME${config} "")
endforeach()
set_property(TARGET LLVM PROPERTY IMPORTED_NO_SONAME TRUE)
set_property(TARGET LLVM PROPERTY INTERFACE_LINK_LIBRARIES ${TESSERA_STATIC_LLVM_LIBS})
message(STATUS "TESSERA_STATIC_LLVM: linking LLVM statically (${TESSERA_STATIC_LLVM_LIBS})")
