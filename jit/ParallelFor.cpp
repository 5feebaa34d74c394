#include "jit/ParallelFor.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>

#include "ir/Error.h"

namespace tessera::jit {

std::vector<std::exception_ptr> parallelFor(size_t n, unsigned threads, const std::function<void(size_t)>& body) {
  std::vector<std::exception_ptr> errors(n);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < n; i = next++) {
      try {
        body(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const size_t helpers = std::min<size_t>(std::max(threads, 1u), n) - (n > 0 ? 1 : 0);
  std::vector<std::thread> pool;
  for (size_t t = 0; t < helpers; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return errors;
}

unsigned defaultCompileThreads() {
  if (const char* env = std::getenv("TESSERA_COMPILE_THREADS"); env && *env) {
    char* end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (*end != '\0' || v < 1 || v > 1024)
      throw Error("TESSERA_COMPILE_THREADS must be a thread count from 1 to 1024, got '" + std::string(env) + "'");
    return static_cast<unsigned>(v);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace tessera::jit
