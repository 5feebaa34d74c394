// The C loader every ahead-of-time export embeds: lazy loading of the exported binaries through the CUDA driver
// or the HIP runtime (dlopen'ed), grid checks, launch, and per-thread error messages. Plain C11 text.
#pragma once

namespace tessera::jit::aot {

// C source defining static aot_* functions over the TESSERA_AOT_* status codes of the export's header
// (CSource.cpp). It needs <dlfcn.h>, <pthread.h>, <stdarg.h>, <stdio.h>, <stdlib.h> and <string.h>.
const char* cLoaderSource();

}  // namespace tessera::jit::aot
