// Shared plumbing for the tutorial programs: random inputs, result checks, and the IR round trip every
// tutorial shows (trace -> verify -> print -> parse -> print again).
#pragma once

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "tessera/tessera.h"

namespace tutorials {

inline std::vector<float> randomFloats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// Largest |got - want| / (atol + rtol * |want|); <= 1 means every element is within tolerance.
inline double worstError(const std::vector<float>& got, const std::vector<double>& want, double atol, double rtol) {
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double e = std::fabs(static_cast<double>(got[i]) - want[i]) / (atol + rtol * std::fabs(want[i]));
    if (std::isnan(got[i]) != std::isnan(want[i])) e = INFINITY;
    worst = std::max(worst, e);
  }
  return worst;
}

inline tessera::interp::Buffer buffer(std::vector<float>& v) { return {v.data(), v.size() * sizeof(float)}; }

// Prints the traced IR when asked (TESSERA_TUTORIAL_PRINT_IR=1) and checks that it verifies and survives a
// print/parse/print round trip unchanged.
inline bool checkRoundTrip(const tessera::ir::Module& m) {
  std::string text = tessera::ir::print(m);
  if (const char* env = std::getenv("TESSERA_TUTORIAL_PRINT_IR"); env && std::string(env) == "1")
    std::printf("%s\n", text.c_str());
  tessera::ir::verify(m);
  auto reparsed = tessera::ir::parseModule(text, "<traced>");
  tessera::ir::verify(*reparsed);
  return tessera::ir::print(*reparsed) == text;
}

struct Report {
  std::string tutorial;
  int failures = 0;
  void check(const std::string& what, bool ok, const std::string& detail = "") {
    std::printf("  %-44s %s%s%s\n", what.c_str(), ok ? "ok" : "FAILED", detail.empty() ? "" : "  ", detail.c_str());
    failures += !ok;
  }
  int finish() const {
    std::printf("%s: %s\n", tutorial.c_str(), failures == 0 ? "PASS" : "FAIL");
    return failures == 0 ? 0 : 1;
  }
};

inline std::string fmtError(double e) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "(worst error %.3g of tolerance)", e);
  return buf;
}

}  // namespace tutorials
