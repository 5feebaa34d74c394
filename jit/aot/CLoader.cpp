#include "jit/aot/CLoader.h"

namespace tessera::jit::aot {

// The loader every exported source carries (static, so several exports link into one program). It dlopen's the
// CUDA driver or the HIP runtime on the first launch, as jit/CudaDriver.cpp and jit/HipRuntime.cpp do, so the
// program needs neither at link time and a machine without them gets TESSERA_AOT_ERROR_NO_DEVICE, not a crash.
// Images are tried in the order given (best first); an image the device cannot run is skipped.
const char* cLoaderSource() {
  return R"C(
/* ---- loader: identical in every tessera-aot export ---- */
#define AOT_CUDA 0
#define AOT_HIP 1
#define AOT_CUDA_DEFAULT_SHARED_LIMIT (48 * 1024) /* above this a kernel must opt in */

typedef struct {
  int runtime;     /* AOT_CUDA or AOT_HIP */
  const char* arch; /* "sm_90a", "gfx942", ... */
  const char* format; /* "cubin", "ptx" or "hsaco" */
  const unsigned char* data;
  size_t size;
  unsigned threads;      /* per block: num_warps * warp size */
  unsigned shared_bytes; /* dynamic shared memory a CUDA launch passes */
} aot_image;

typedef struct {
  int (*init)(unsigned);
  int (*device_count)(int*);
  int (*device_get)(int*, int);
  int (*device_attribute)(int*, int, int);
  int (*ctx_get_current)(void**);
  int (*ctx_set_current)(void*);
  int (*ctx_get_device)(int*);
  int (*primary_ctx_retain)(void**, int);
  int (*primary_ctx_release)(int);
  int (*module_load_data)(void**, const void*);
  int (*module_unload)(void*);
  int (*module_get_function)(void**, void*, const char*);
  int (*func_set_attribute)(void*, int, int);
  int (*launch_kernel)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**,
                       void**);
  int (*error_name)(int, const char**);
} aot_cuda_api;

typedef struct {
  int (*init)(unsigned);
  int (*device_count)(int*);
  int (*module_load_data)(void**, const void*);
  int (*module_unload)(void*);
  int (*module_get_function)(void**, void*, const char*);
  int (*launch_kernel)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**,
                       void**);
  const char* (*error_name)(int);
} aot_hip_api;

typedef struct {
  pthread_mutex_t lock;
  int attempted; /* the module load ran (and its outcome is kept until unload) */
  int status;
  char message[768];
  int runtime;
  const aot_image* image;
  void* library;
  int device;
  void* context;
  int retained_primary; /* the context is the device's primary one, retained by the loader */
  void* module;
  void* function;
  aot_cuda_api cu;
  aot_hip_api hip;
} aot_state;

static _Thread_local char aot_last_error[1024];

static int aot_fail(int status, const char* format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(aot_last_error, sizeof aot_last_error, format, args);
  va_end(args);
  return status;
}

/* dlsym into a function pointer slot (memcpy: ISO C has no cast from object to function pointer). */
static int aot_symbol(void* library, const char* name, void* slot) {
  void* p = dlsym(library, name);
  if (!p) return 0;
  memcpy(slot, &p, sizeof p);
  return 1;
}

typedef struct {
  const char* name;
  void* slot;
} aot_symbol_slot;

/* Resolves every symbol; on failure names the first missing one in `why`. */
static int aot_resolve_all(void* library, const char* path, const aot_symbol_slot* slots, size_t count, char* why,
                           size_t why_size) {
  for (size_t i = 0; i < count; ++i) {
    if (!aot_symbol(library, slots[i].name, slots[i].slot)) {
      snprintf(why, why_size, "'%s' lacks %s", path, slots[i].name);
      return 0;
    }
  }
  return 1;
}

static const char* aot_env_or(const char* variable, const char* fallback) {
  const char* v = getenv(variable);
  return v && *v ? v : fallback;
}

static const char* aot_cuda_error_name(aot_state* s, int r) {
  const char* name = NULL;
  if (s->cu.error_name) s->cu.error_name(r, &name);
  return name ? name : "unknown CUresult";
}

/* Whether a CUDA image for `arch` can run on compute capability `cc` (major * 10 + minor). */
static int aot_cuda_arch_runs(const aot_image* image, int cc) {
  unsigned number = 0;
  char suffix = 0;
  if (sscanf(image->arch, "sm_%u%c", &number, &suffix) < 1) return 0;
  if (suffix == 'a') return (int)number == cc;                       /* arch-specific features: that GPU only */
  if (strcmp(image->format, "cubin") == 0) return (int)number / 10 == cc / 10 && (int)number <= cc;
  return (int)number <= cc;                                          /* PTX is JIT-compiled for newer GPUs */
}

static int aot_open_cuda(aot_state* s, char* why, size_t why_size) {
  const char* path = aot_env_or("TESSERA_LIBCUDA", "libcuda.so.1");
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* error = dlerror();
    snprintf(why, why_size, "cannot load the CUDA driver '%s': %s", path, error ? error : "unknown error");
    return TESSERA_AOT_ERROR_NO_DEVICE;
  }
  const aot_symbol_slot slots[] = {
      {"cuInit", &s->cu.init},
      {"cuDeviceGetCount", &s->cu.device_count},
      {"cuDeviceGet", &s->cu.device_get},
      {"cuDeviceGetAttribute", &s->cu.device_attribute},
      {"cuCtxGetCurrent", &s->cu.ctx_get_current},
      {"cuCtxSetCurrent", &s->cu.ctx_set_current},
      {"cuCtxGetDevice", &s->cu.ctx_get_device},
      {"cuDevicePrimaryCtxRetain", &s->cu.primary_ctx_retain},
      {"cuDevicePrimaryCtxRelease_v2", &s->cu.primary_ctx_release},
      {"cuModuleLoadData", &s->cu.module_load_data},
      {"cuModuleUnload", &s->cu.module_unload},
      {"cuModuleGetFunction", &s->cu.module_get_function},
      {"cuFuncSetAttribute", &s->cu.func_set_attribute},
      {"cuLaunchKernel", &s->cu.launch_kernel},
      {"cuGetErrorName", &s->cu.error_name},
  };
  if (!aot_resolve_all(library, path, slots, sizeof slots / sizeof slots[0], why, why_size)) {
    dlclose(library);
    return TESSERA_AOT_ERROR_NO_DEVICE;
  }
  int r = s->cu.init(0);
  if (r != 0) {
    snprintf(why, why_size, "cuInit failed: %s", aot_cuda_error_name(s, r));
    return TESSERA_AOT_ERROR_NO_DEVICE;
  }
  int count = 0;
  if ((r = s->cu.device_count(&count)) != 0) {
    snprintf(why, why_size, "cuDeviceGetCount failed: %s", aot_cuda_error_name(s, r));
    return TESSERA_AOT_ERROR_NO_DEVICE;
  }
  if (count == 0) {
    snprintf(why, why_size, "the CUDA driver found no GPU");
    return TESSERA_AOT_ERROR_NO_DEVICE;
  }
  /* Use the caller's current context if there is one, else device 0's primary context. */
  void* context = NULL;
  if ((r = s->cu.ctx_get_current(&context)) != 0) goto driver_error;
  if (context) {
    if ((r = s->cu.ctx_get_device(&s->device)) != 0) goto driver_error;
  } else {
    if ((r = s->cu.device_get(&s->device, 0)) != 0) goto driver_error;
    if ((r = s->cu.primary_ctx_retain(&context, s->device)) != 0) goto driver_error;
    s->retained_primary = 1;
  }
  s->context = context;
  s->library = library;
  return TESSERA_AOT_SUCCESS;
driver_error:
  snprintf(why, why_size, "setting up a CUDA context failed: %s", aot_cuda_error_name(s, r));
  return TESSERA_AOT_ERROR_DRIVER;
}

static int aot_load_cuda(aot_state* s, const aot_image* images, size_t count, const char* symbol, char* why,
                         size_t why_size) {
  int major = 0, minor = 0, r;
  if ((r = s->cu.ctx_set_current(s->context)) != 0 || (r = s->cu.device_attribute(&major, 75, s->device)) != 0 ||
      (r = s->cu.device_attribute(&minor, 76, s->device)) != 0) {
    snprintf(why, why_size, "querying the CUDA device failed: %s", aot_cuda_error_name(s, r));
    return TESSERA_AOT_ERROR_DRIVER;
  }
  const int cc = major * 10 + minor;
  char rejected[256] = "";
  for (size_t i = 0; i < count; ++i) {
    const aot_image* image = &images[i];
    if (image->runtime != AOT_CUDA || !aot_cuda_arch_runs(image, cc)) continue;
    void* module = NULL;
    if ((r = s->cu.module_load_data(&module, image->data)) != 0) {
      snprintf(rejected, sizeof rejected, "; the driver rejected %s %s: %s", image->arch, image->format,
               aot_cuda_error_name(s, r));
      continue;
    }
    void* function = NULL;
    if ((r = s->cu.module_get_function(&function, module, symbol)) != 0 ||
        (image->shared_bytes > AOT_CUDA_DEFAULT_SHARED_LIMIT &&
         (r = s->cu.func_set_attribute(function, 8 /* max dynamic shared bytes */, (int)image->shared_bytes)) != 0)) {
      snprintf(why, why_size, "preparing kernel '%s' (%s %s) failed: %s", symbol, image->arch, image->format,
               aot_cuda_error_name(s, r));
      s->cu.module_unload(module);
      return TESSERA_AOT_ERROR_DRIVER;
    }
    s->module = module;
    s->function = function;
    s->image = image;
    s->runtime = AOT_CUDA;
    return TESSERA_AOT_SUCCESS;
  }
  snprintf(why, why_size, "no exported binary runs on this GPU (compute capability %d.%d)%s", major, minor,
           rejected);
  return TESSERA_AOT_ERROR_NO_COMPATIBLE_BINARY;
}

static int aot_open_hip(aot_state* s, char* why, size_t why_size) {
  const char* override = aot_env_or("TESSERA_LIBAMDHIP", NULL);
  const char* candidates[] = {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"};
  const char* path = override;
  void* library = NULL;
  if (override) {
    library = dlopen(override, RTLD_NOW | RTLD_LOCAL);
  } else {
    for (size_t i = 0; !library && i < sizeof candidates / sizeof candidates[0]; ++i)
      library = dlopen(path = candidates[i], RTLD_NOW | RTLD_LOCAL);
  }
  if (!library) {
    const char* error = dlerror();
    snprintf(why, why_size, "cannot load the HIP runtime %s: %s",
             override ? override : "(libamdhip64.so, .so.6 or .so.5)", error ? error : "unknown error");
    return TESSERA_AOT_ERROR_NO_DEVICE;
  }
  const aot_symbol_slot slots[] = {
      {"hipInit", &s->hip.init},
      {"hipGetDeviceCount", &s->hip.device_count},
      {"hipModuleLoadData", &s->hip.module_load_data},
      {"hipModuleUnload", &s->hip.module_unload},
      {"hipModuleGetFunction", &s->hip.module_get_function},
      {"hipModuleLaunchKernel", &s->hip.launch_kernel},
      {"hipGetErrorName", &s->hip.error_name},
  };
  if (!aot_resolve_all(library, path, slots, sizeof slots / sizeof slots[0], why, why_size)) {
    dlclose(library);
    return TESSERA_AOT_ERROR_NO_DEVICE;
  }
  int count = 0, r = s->hip.init(0);
  if (r != 0 || (r = s->hip.device_count(&count)) != 0) {
    snprintf(why, why_size, "HIP initialization failed: %s", s->hip.error_name(r));
    return TESSERA_AOT_ERROR_NO_DEVICE;
  }
  if (count == 0) {
    snprintf(why, why_size, "the HIP runtime found no AMD GPU");
    return TESSERA_AOT_ERROR_NO_DEVICE;
  }
  s->library = library;
  return TESSERA_AOT_SUCCESS;
}

static int aot_load_hip(aot_state* s, const aot_image* images, size_t count, const char* symbol, char* why,
                        size_t why_size) {
  char rejected[256] = "";
  for (size_t i = 0; i < count; ++i) {
    const aot_image* image = &images[i];
    if (image->runtime != AOT_HIP) continue;
    void* module = NULL;
    int r = s->hip.module_load_data(&module, image->data);
    if (r != 0) { /* a code object for another gfx arch does not load: try the next */
      snprintf(rejected, sizeof rejected, "; the runtime rejected %s: %s", image->arch, s->hip.error_name(r));
      continue;
    }
    void* function = NULL;
    if ((r = s->hip.module_get_function(&function, module, symbol)) != 0) {
      snprintf(why, why_size, "hipModuleGetFunction('%s') failed: %s", symbol, s->hip.error_name(r));
      s->hip.module_unload(module);
      return TESSERA_AOT_ERROR_DRIVER;
    }
    s->module = module;
    s->function = function;
    s->image = image;
    s->runtime = AOT_HIP;
    return TESSERA_AOT_SUCCESS;
  }
  snprintf(why, why_size, "no exported code object runs on this AMD GPU%s", rejected);
  return TESSERA_AOT_ERROR_NO_COMPATIBLE_BINARY;
}

static int aot_has_runtime(const aot_image* images, size_t count, int runtime) {
  for (size_t i = 0; i < count; ++i)
    if (images[i].runtime == runtime) return 1;
  return 0;
}

/* CUDA first, then HIP: the first runtime with a device loads the module. */
static int aot_load_module(aot_state* s, const aot_image* images, size_t count, const char* symbol) {
  char cuda_why[320] = "no CUDA binary was exported", hip_why[320] = "no HIP code object was exported";
  int status = TESSERA_AOT_ERROR_NO_DEVICE;
  if (aot_has_runtime(images, count, AOT_CUDA)) {
    status = aot_open_cuda(s, cuda_why, sizeof cuda_why);
    if (status == TESSERA_AOT_SUCCESS) status = aot_load_cuda(s, images, count, symbol, cuda_why, sizeof cuda_why);
    if (status != TESSERA_AOT_ERROR_NO_DEVICE) {
      snprintf(s->message, sizeof s->message, "%s", cuda_why);
      return status;
    }
  }
  if (aot_has_runtime(images, count, AOT_HIP)) {
    status = aot_open_hip(s, hip_why, sizeof hip_why);
    if (status == TESSERA_AOT_SUCCESS) status = aot_load_hip(s, images, count, symbol, hip_why, sizeof hip_why);
    if (status != TESSERA_AOT_ERROR_NO_DEVICE) {
      snprintf(s->message, sizeof s->message, "%s", hip_why);
      return status;
    }
  }
  snprintf(s->message, sizeof s->message, "no GPU device: CUDA: %s; HIP: %s", cuda_why, hip_why);
  return TESSERA_AOT_ERROR_NO_DEVICE;
}

/* Loads on first use; the outcome, failure included, is kept until aot_unload. */
static int aot_ensure_loaded(aot_state* s, const aot_image* images, size_t count, const char* symbol,
                             const char* export_name) {
  pthread_mutex_lock(&s->lock);
  if (!s->attempted) {
    s->attempted = 1;
    s->status = aot_load_module(s, images, count, symbol);
  }
  const int status = s->status;
  pthread_mutex_unlock(&s->lock);
  return status == TESSERA_AOT_SUCCESS ? status : aot_fail(status, "%s: %s", export_name, s->message);
}

static void aot_unload(aot_state* s) {
  pthread_mutex_lock(&s->lock);
  if (s->module && s->runtime == AOT_CUDA) {
    s->cu.ctx_set_current(s->context);
    s->cu.module_unload(s->module);
  }
  if (s->module && s->runtime == AOT_HIP) s->hip.module_unload(s->module);
  if (s->retained_primary) s->cu.primary_ctx_release(s->device);
  /* The driver libraries stay loaded: their own exit handlers may still run. */
  s->attempted = 0;
  s->retained_primary = 0;
  s->module = s->function = s->context = NULL;
  s->image = NULL;
  pthread_mutex_unlock(&s->lock);
}

/* CUDA's limits: x < 2^31, y and z < 2^16 (HIP's are no smaller). */
static int aot_check_grid(const char* export_name, const unsigned grid[3]) {
  const unsigned limits[3] = {2147483647u, 65535u, 65535u};
  for (int d = 0; d < 3; ++d)
    if (grid[d] == 0 || grid[d] > limits[d])
      return aot_fail(TESSERA_AOT_ERROR_INVALID_GRID, "%s: grid dimension %d is %u; it must be between 1 and %u",
                      export_name, d, grid[d], limits[d]);
  return TESSERA_AOT_SUCCESS;
}

static int aot_launch(aot_state* s, const char* export_name, const unsigned grid[3], void* stream, void** params) {
  const aot_image* image = s->image;
  if (s->runtime == AOT_CUDA) {
    int r = s->cu.ctx_set_current(s->context);
    if (r == 0)
      r = s->cu.launch_kernel(s->function, grid[0], grid[1], grid[2], image->threads, 1, 1, image->shared_bytes,
                              stream, params, NULL);
    if (r != 0)
      return aot_fail(TESSERA_AOT_ERROR_DRIVER, "%s: cuLaunchKernel failed: %s", export_name,
                      aot_cuda_error_name(s, r));
  } else {
    /* HIP: the code object's LDS size is static, no dynamic shared memory is passed. */
    int r = s->hip.launch_kernel(s->function, grid[0], grid[1], grid[2], image->threads, 1, 1, 0, stream, params,
                                 NULL);
    if (r != 0)
      return aot_fail(TESSERA_AOT_ERROR_DRIVER, "%s: hipModuleLaunchKernel failed: %s", export_name,
                      s->hip.error_name(r));
  }
  return TESSERA_AOT_SUCCESS;
}
/* ---- end of loader ---- */
)C";
}

}  // namespace tessera::jit::aot
