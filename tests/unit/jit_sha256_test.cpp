// SHA-256 against the FIPS 180-4 example vectors and lengths around the 64-byte block and padding boundaries.
#include <gtest/gtest.h>

#include <string>

#include "ir/Error.h"
#include "jit/Sha256.h"

using tessera::jit::Sha256;
using tessera::jit::sha256Hex;

TEST(JitSha256, StandardVectors) {
  EXPECT_EQ(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256Hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(JitSha256, PaddingBoundaries) {
  // 55 bytes is the longest message padded within one block; 56..63 spill the length into a second block.
  const std::pair<size_t, const char*> cases[] = {
      {55, "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072"},
      {56, "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e"},
      {63, "75220b47218278e656f2013bb8f0c455a25eaf01e86c64924e9d48d89776d6f2"},
      {64, "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c"},
      {65, "9537c5fdf120482f7d58d25e9ed583f52c02b4e304ea814db1633ad565aed7e9"},
      {119, "000b48d4edf0fa7bee3c6236ecd2785baa5db4eeb8bb54341b029e0d9fa5fb0c"},
      {120, "13f05a0b594787f5ecd315edc96141bd3243203d1b7d4f0836f37308b276ba98"},
  };
  for (const auto& [n, want] : cases) EXPECT_EQ(sha256Hex(std::string(n, 'x')), want) << n << " bytes";
}

TEST(JitSha256, IncrementalUpdatesMatchOneShotOfBinaryData) {
  std::string data;
  for (int rep = 0; rep < 3; ++rep)
    for (int b = 0; b < 256; ++b) data += static_cast<char>(b);  // includes NUL and high bytes
  const char* want = "f3a25aa93aa2fbba28d79260535bbd6a5eb0fc1c24a8b0f04e12b484c1dfe363";
  EXPECT_EQ(sha256Hex(data), want);
  for (size_t chunk : {1, 7, 63, 64, 65, 500}) {
    Sha256 h;
    for (size_t i = 0; i < data.size(); i += chunk) h.update(std::string_view(data).substr(i, chunk));
    EXPECT_EQ(h.hexDigest(), want) << "chunk " << chunk;
  }
}

TEST(JitSha256, MisuseAfterDigestIsAnError) {
  Sha256 h;
  h.update("abc");
  h.digest();
  EXPECT_THROW(h.update("more"), tessera::Error);
  EXPECT_THROW(h.digest(), tessera::Error);
}
