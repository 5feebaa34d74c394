#include "ir/Error.h"

namespace tessera {

std::string Location::str() const {
  std::string s = file.empty() ? std::string() : file + ":";
  s += std::to_string(line) + ":" + std::to_string(col);
  return s;
}

static std::string formatError(const std::string& message, const Location& loc) {
  return loc.known() ? loc.str() + ": error: " + message : "error: " + message;
}

Error::Error(const std::string& message, Location loc)
    : std::runtime_error(formatError(message, loc)), message_(message), loc_(std::move(loc)) {}

}  // namespace tessera
