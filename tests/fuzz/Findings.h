// What the libFuzzer targets share: how a finding is reported, and which failures are accepted answers.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <string>

#include "ir/Error.h"

namespace tessera::fuzz {

// Prints what went wrong and aborts, so that libFuzzer (or the regression driver) keeps the input as a finding.
[[noreturn]] inline void finding(const std::string& what, const std::string& detail) {
  std::fprintf(stderr, "fuzz finding: %s\n%s\n", what.c_str(), detail.c_str());
  std::abort();
}

// Runs `step`; true when it returned, false when it threw a tessera::Error with a message (bad input rejected
// properly). Any other exception, or an Error without a message, is a finding.
inline bool accepted(const char* stage, const std::function<void()>& step) {
  try {
    step();
    return true;
  } catch (const Error& e) {
    if (e.message().empty()) finding(std::string(stage) + " threw a tessera::Error without a message", "");
    return false;
  } catch (const std::exception& e) {
    finding(std::string(stage) + " threw an exception that is not a tessera::Error", e.what());
  }
}

}  // namespace tessera::fuzz
