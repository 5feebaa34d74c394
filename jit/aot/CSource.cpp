#include "jit/aot/CSource.h"

#include <cctype>
#include <cstdio>
#include <sstream>

#include "ir/Error.h"
#include "ir/Version.h"
#include "jit/aot/CLoader.h"

namespace tessera::jit::aot {

namespace {

std::string upper(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// How an element of scalar kind `k` is stored: 16-bit floats and fp8 travel as their bits.
std::string cElementType(ir::ScalarKind k) {
  using K = ir::ScalarKind;
  switch (k) {
    case K::I1: return "uint8_t";  // one byte per flag in memory
    case K::I8: return "int8_t";
    case K::I16: return "int16_t";
    case K::I32: return "int32_t";
    case K::I64: return "int64_t";
    case K::U8: return "uint8_t";
    case K::U16: return "uint16_t";
    case K::U32: return "uint32_t";
    case K::U64: return "uint64_t";
    case K::F16:
    case K::BF16: return "uint16_t";
    case K::F32: return "float";
    case K::F64: return "double";
    case K::F8E4M3:
    case K::F8E5M2: return "uint8_t";
  }
  throw Error("aot: no C type for scalar kind " + std::string(ir::scalarKindName(k)));
}

// The C declaration of the launch function, without the trailing ';' or body.
std::string launchSignature(const CExport& e) {
  std::string s = "int " + e.name + "_launch(void* stream, unsigned grid_x, unsigned grid_y, unsigned grid_z";
  for (const CParam& p : e.params) s += ", " + cParamType(p.type) + " " + p.name;
  return s + ")";
}

const char* statusDefinitions() {
  return R"C(#ifndef TESSERA_AOT_STATUS_DEFINED
#define TESSERA_AOT_STATUS_DEFINED
/* What every tessera-aot launch function returns; <name>_last_error() says more about the last failure. */
typedef enum {
  TESSERA_AOT_SUCCESS = 0,
  TESSERA_AOT_ERROR_INVALID_ARGUMENT = 1,    /* a null pointer, or an argument the export was not specialized for */
  TESSERA_AOT_ERROR_INVALID_GRID = 2,        /* a grid dimension of 0 or past the device limit */
  TESSERA_AOT_ERROR_NO_DEVICE = 3,           /* no CUDA driver or HIP runtime, or no GPU */
  TESSERA_AOT_ERROR_NO_COMPATIBLE_BINARY = 4, /* the GPU runs none of the exported binaries */
  TESSERA_AOT_ERROR_DRIVER = 5               /* a driver call failed */
} tessera_aot_status;

static inline const char* tessera_aot_error_string(int status) {
  switch (status) {
    case TESSERA_AOT_SUCCESS: return "success";
    case TESSERA_AOT_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case TESSERA_AOT_ERROR_INVALID_GRID: return "invalid launch grid";
    case TESSERA_AOT_ERROR_NO_DEVICE: return "no device";
    case TESSERA_AOT_ERROR_NO_COMPATIBLE_BINARY: return "no compatible binary for this GPU";
    case TESSERA_AOT_ERROR_DRIVER: return "driver error";
    default: return "unknown tessera-aot status";
  }
}
#endif
)C";
}

void emitBytes(std::ostringstream& out, const std::string& name, const std::string& bytes) {
  out << "static const unsigned char " << name << "[" << bytes.size() + 1 << "] = {";
  char hex[8];
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i % 16 == 0) out << "\n   ";
    std::snprintf(hex, sizeof hex, " 0x%02x,", static_cast<unsigned char>(bytes[i]));
    out << hex;
  }
  out << "\n    0x00}; /* NUL: the CUDA driver reads PTX as a C string */\n";
}

// The launch function's checks of one parameter: null pointers, and the facts the binaries were compiled to
// assume (a launch that broke them would compute wrong results silently).
void emitParamChecks(std::ostringstream& out, const CExport& e, const CParam& p) {
  const std::string& n = p.name;
  const std::string prefix = "    return aot_fail(TESSERA_AOT_ERROR_INVALID_ARGUMENT, \"" + e.name + ": argument '" + n + "' ";
  if (p.type.isPtr()) {
    out << "  if (" << n << " == NULL)\n" << prefix << "is a null pointer\");\n";
    if (p.facts.divisibleBy16)
      out << "  if ((uintptr_t)" << n << " % 16 != 0)\n"
          << prefix << "(%p) is not 16-byte aligned, which this export was specialized to assume\", (void*)" << n
          << ");\n";
    return;
  }
  if (p.facts.divisibleBy16)
    out << "  if (" << n << " % 16 != 0)\n"
        << prefix << "is %lld, not a multiple of 16, which this export was specialized to assume\", (long long)" << n
        << ");\n";
  if (p.facts.divisibleBy8)
    out << "  if (" << n << " % 8 != 0)\n"
        << prefix << "is %lld, not a multiple of 8, which this export was specialized to assume\", (long long)" << n
        << ");\n";
  if (p.facts.equalTo1)
    out << "  if (" << n << " != 1)\n"
        << prefix << "is %lld, not 1, which this export was specialized to assume\", (long long)" << n << ");\n";
}

}  // namespace

std::string cParamType(const ir::Type& t) {
  if (t.isPtr()) return cElementType(t.pointee().scalarKind()) + "*";
  if (t.isBool()) return "bool";
  return cElementType(t.scalarKind());
}

std::string generateHeader(const CExport& e) {
  std::ostringstream out;
  const std::string guard = "TESSERA_AOT_" + upper(e.name) + "_H";
  out << "/* " << e.name << ".h: generated by tessera-aot " << version() << ". Do not edit.\n";
  for (const std::string& line : e.description) out << " * " << line << "\n";
  out << " *\n"
         " * " << e.name << "_launch enqueues one launch of grid_x * grid_y * grid_z programs on `stream` (a CUstream or\n"
         " * hipStream_t; NULL: the default stream) and returns at once. Pointers are device addresses. The first\n"
         " * launch loads the module through the CUDA driver or HIP runtime (dlopen'ed; nothing to link but -ldl and\n"
         " * -lpthread). A status other than TESSERA_AOT_SUCCESS comes with a message from " << e.name << "_last_error()\n"
         " * (per thread). " << e.name << "_unload() frees the module; a later launch loads it again. */\n";
  out << "#ifndef " << guard << "\n#define " << guard << "\n\n#include <stdbool.h>\n#include <stdint.h>\n\n";
  out << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n" << statusDefinitions() << "\n";
  out << launchSignature(e) << ";\n";
  out << "const char* " << e.name << "_last_error(void);\n";
  out << "void " << e.name << "_unload(void);\n\n";
  out << "#ifdef __cplusplus\n}\n#endif\n\n#endif /* " << guard << " */\n";
  return out.str();
}

std::string generateSource(const CExport& e) {
  if (e.images.empty()) throw Error("aot: export '" + e.name + "' has no binaries");
  std::ostringstream out;
  out << "/* " << e.name << ".c: generated by tessera-aot " << version() << " (kernel '" << e.kernelSymbol
      << "'). Do not edit. */\n";
  out << "#define _POSIX_C_SOURCE 200809L /* pthreads and dlopen under -std=c11 */\n";
  out << "#include \"" << e.name << ".h\"\n\n";
  out << "#include <dlfcn.h>\n#include <pthread.h>\n#include <stdarg.h>\n#include <stddef.h>\n#include <stdio.h>\n"
         "#include <stdlib.h>\n#include <string.h>\n";
  out << cLoaderSource() << "\n";
  for (size_t i = 0; i < e.images.size(); ++i)
    emitBytes(out, "aot_image_" + std::to_string(i) + "_bytes", e.images[i].bytes);
  out << "\nstatic const aot_image aot_images[] = {\n";
  for (size_t i = 0; i < e.images.size(); ++i) {
    const CImage& im = e.images[i];
    out << "    {" << (im.target == "amdgpu" ? "AOT_HIP" : "AOT_CUDA") << ", \"" << im.arch << "\", \"" << im.format
        << "\", aot_image_" << i << "_bytes, " << im.bytes.size() << ", " << im.threadsPerBlock << ", "
        << im.sharedBytes << "},\n";
  }
  out << "};\n\nstatic aot_state aot_module = {.lock = PTHREAD_MUTEX_INITIALIZER};\n\n";

  out << launchSignature(e) << " {\n";
  out << "  const unsigned aot_grid[3] = {grid_x, grid_y, grid_z};\n";
  out << "  int aot_status = aot_check_grid(\"" << e.name << "\", aot_grid);\n  if (aot_status != TESSERA_AOT_SUCCESS) return aot_status;\n";
  for (const CParam& p : e.params) emitParamChecks(out, e, p);
  out << "  aot_status = aot_ensure_loaded(&aot_module, aot_images, sizeof aot_images / sizeof aot_images[0], \""
      << e.kernelSymbol << "\", \"" << e.name << "\");\n  if (aot_status != TESSERA_AOT_SUCCESS) return aot_status;\n";
  out << "  void* aot_params[] = {";
  for (size_t i = 0; i < e.params.size(); ++i) out << (i ? ", " : "") << "&" << e.params[i].name;
  if (e.params.empty()) out << "NULL";
  out << "};\n";
  out << "  return aot_launch(&aot_module, \"" << e.name << "\", aot_grid, stream, aot_params);\n}\n\n";
  out << "const char* " << e.name << "_last_error(void) { return aot_last_error; }\n\n";
  out << "void " << e.name << "_unload(void) { aot_unload(&aot_module); }\n";
  return out.str();
}

}  // namespace tessera::jit::aot
