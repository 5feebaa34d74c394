/* Links against the tessera-aot export of every tutorial kernel (tests/aot/export_tutorials.sh) and checks each
 * launch function's argument checks and, with no CUDA driver or HIP runtime to load, its "no device" error. The
 * device pointers are fake: no launch may reach a GPU. Exit status 0 when every check holds. */
#include <stdio.h>
#include <string.h>

#include "attention_fwd_causal.h"
#include "layernorm_bwd_atomic.h"
#include "layernorm_bwd_dwdb.h"
#include "layernorm_bwd_dx.h"
#include "layernorm_fwd.h"
#include "matmul.h"
#include "matmul_gelu_f16.h"
#include "matmul_relu.h"
#include "softmax.h"
#include "vector_add.h"

static int failures = 0;

/* `status` must be `want`, and the export's message must contain `needle`. */
static void expect(const char* what, int status, int want, const char* message, const char* needle) {
  if (status == want && strstr(message, needle)) {
    printf("ok   %s: %s: %s\n", what, tessera_aot_error_string(status), message);
    return;
  }
  printf("FAIL %s: got %d (%s) with message \"%s\"; want %d (%s) with \"%s\"\n", what, status,
         tessera_aot_error_string(status), message, want, tessera_aot_error_string(want), needle);
  ++failures;
}

#define EXPECT_NO_DEVICE(name, call) \
  expect(#name, (call), TESSERA_AOT_ERROR_NO_DEVICE, name##_last_error(), "no GPU device")

int main(void) {
  float* f = (float*)(uintptr_t)0x10000; /* fake, 16-byte aligned device addresses */
  uint16_t* h = (uint16_t*)(uintptr_t)0x20000;

  /* Argument checks come before any driver is loaded. */
  expect("null pointer", vector_add_launch(NULL, 4, 1, 1, f, NULL, f, 4096), TESSERA_AOT_ERROR_INVALID_ARGUMENT,
         vector_add_last_error(), "argument 'y' is a null pointer");
  expect("zero grid", vector_add_launch(NULL, 4, 0, 1, f, f, f, 4096), TESSERA_AOT_ERROR_INVALID_GRID,
         vector_add_last_error(), "grid dimension 1 is 0");
  expect("grid past the limit", softmax_launch(NULL, 1, 1, 70000, f, f, 1024, 1024, 1000),
         TESSERA_AOT_ERROR_INVALID_GRID, softmax_last_error(), "grid dimension 2 is 70000");
  expect("misaligned pointer", vector_add_launch(NULL, 4, 1, 1, f + 1, f, f, 4096),
         TESSERA_AOT_ERROR_INVALID_ARGUMENT, vector_add_last_error(), "argument 'x' (0x10004) is not 16-byte aligned");
  expect("size not a multiple of 16", vector_add_launch(NULL, 4, 1, 1, f, f, f, 4100),
         TESSERA_AOT_ERROR_INVALID_ARGUMENT, vector_add_last_error(), "argument 'n' is 4100, not a multiple of 16");
  expect("integer not 1", layernorm_bwd_atomic_launch(NULL, 8, 1, 1, f, f, f, f, f, f, f, f, 1024, 64, 1000, 8),
         TESSERA_AOT_ERROR_INVALID_ARGUMENT, layernorm_bwd_atomic_last_error(), "argument 'rows_per_program' is 8, not 1");
  expect("unspecialized size", softmax_launch(NULL, 8, 1, 1, f, f, 1024, 1024, 1001), TESSERA_AOT_ERROR_NO_DEVICE,
         softmax_last_error(), "no GPU device");

  /* Valid arguments: every export reports that there is no device, twice (the outcome is kept) and after unload. */
  EXPECT_NO_DEVICE(vector_add, vector_add_launch(NULL, 4, 1, 1, f, f, f, 4096));
  EXPECT_NO_DEVICE(vector_add, vector_add_launch(NULL, 4, 1, 1, f, f, f, 4096));
  vector_add_unload();
  EXPECT_NO_DEVICE(vector_add, vector_add_launch(NULL, 4, 1, 1, f, f, f, 4096));
  EXPECT_NO_DEVICE(softmax, softmax_launch(NULL, 8, 1, 1, f, f, 1024, 1024, 1000));
  EXPECT_NO_DEVICE(layernorm_fwd, layernorm_fwd_launch(NULL, 8, 1, 1, f, f, f, f, f, f, 1024, 1000, 1e-5f));
  EXPECT_NO_DEVICE(layernorm_bwd_dx,
                   layernorm_bwd_dx_launch(NULL, 8, 1, 1, f, f, f, f, f, f, f, f, 1024, 64, 1000, 8));
  EXPECT_NO_DEVICE(layernorm_bwd_dwdb, layernorm_bwd_dwdb_launch(NULL, 8, 1, 1, f, f, f, f, 8, 1000));
  EXPECT_NO_DEVICE(layernorm_bwd_atomic,
                   layernorm_bwd_atomic_launch(NULL, 64, 1, 1, f, f, f, f, f, f, f, f, 1024, 64, 1000, 1));
  EXPECT_NO_DEVICE(matmul, matmul_launch(NULL, 16, 1, 1, h, h, f, 256, 256, 256, 256, 1, 256, 1, 256, 1));
  EXPECT_NO_DEVICE(matmul_relu, matmul_relu_launch(NULL, 16, 1, 1, h, h, f, 256, 256, 256, 256, 1, 256, 1, 256, 1));
  EXPECT_NO_DEVICE(matmul_gelu_f16,
                   matmul_gelu_f16_launch(NULL, 16, 1, 1, h, h, h, 256, 256, 256, 256, 1, 256, 1, 256, 1));
  /* One batch of 2 heads of 256 rows, head dim 64, contiguous: strides 32768, 16384, 64 for q, k, v and out. */
  EXPECT_NO_DEVICE(attention_fwd_causal,
                   attention_fwd_causal_launch(NULL, 4, 2, 1, h, h, h, h, 0.125f, 2, 256, 32768, 16384, 64, 32768,
                                               16384, 64, 32768, 16384, 64, 32768, 16384, 64));

  if (failures) {
    printf("%d check(s) failed\n", failures);
    return 1;
  }
  printf("every export reports no device cleanly\n");
  return 0;
}
