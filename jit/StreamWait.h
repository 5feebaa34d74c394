// Waiting for a stream's work with a time limit, shared by the CUDA driver and the HIP runtime: a kernel that
// never ends (a barrier or an mbarrier phase that no thread completes) is reported, naming the kernel, instead of
// hanging the process. The limit is $TESSERA_GPU_TIMEOUT seconds; unset or 0, the API's own blocking wait is used.
#pragma once

#include <functional>
#include <string>

#include "ir/Error.h"

namespace tessera::jit {

// Thrown when a stream's work has not finished within $TESSERA_GPU_TIMEOUT seconds. The GPU goes on running it
// and later work on the device waits behind it: a caller should stop launching, not retry.
class KernelTimeout : public Error {
 public:
  using Error::Error;
};

// $TESSERA_GPU_TIMEOUT in seconds; 0 (no limit) when unset or empty. Throws tessera::Error naming the variable
// for anything but a non-negative number.
double gpuTimeoutSeconds();

// Polls `finished` (true once the stream's work is done; it throws for the API's errors) until it says so, and
// throws KernelTimeout naming `kernelName` (the stream's work when empty) once `limitSeconds` have passed.
void pollUntilFinished(const std::function<bool()>& finished, double limitSeconds, const std::string& kernelName);

}  // namespace tessera::jit
