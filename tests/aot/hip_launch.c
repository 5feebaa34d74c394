/* Launches the vector add export on the recording HIP runtime (tests/fake_hip/FakeHipRuntime.cpp), which runs
 * nothing, takes host memory as device memory, and checks each code object against its device's arch as HIP does.
 * export_tutorials.sh points it at a gfx942 device and reads its log: the export's gfx90a code object must be
 * refused and its gfx942 one loaded and launched. Exit status 0 when the launch reports success. */
#include <stdio.h>

#include "vector_add.h"

int main(void) {
  static _Alignas(16) float x[4096], y[4096], out[4096];
  const int status = vector_add_launch(NULL, 4, 1, 1, x, y, out, 4096);
  if (status != TESSERA_AOT_SUCCESS) {
    printf("FAIL vector_add_launch: %s: %s\n", tessera_aot_error_string(status), vector_add_last_error());
    return 1;
  }
  printf("vector_add launched through HIP\n");
  return 0;
}
