// SHA-256 (FIPS 180-4), used for JIT cache keys and cache-entry checksums. Small and self-contained so the
// cache does not depend on a crypto library.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tessera::jit {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  // Finishes the hash; the object must not be updated afterwards.
  std::array<uint8_t, 32> digest();
  std::string hexDigest();  // 64 lowercase hex characters

 private:
  void compressBlock(const uint8_t* block);
  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_{};
  size_t buffered_ = 0;
  uint64_t totalBytes_ = 0;
  bool finished_ = false;
};

std::string sha256Hex(std::string_view data);

}  // namespace tessera::jit
