// Errors and source locations shared by every layer of Tessera.
#pragma once

#include <source_location>
#include <stdexcept>
#include <string>

namespace tessera {

// Where something came from: a DSL call site (file:line:col of the kernel author's code) or a position in
// textual IR. An empty file means "unknown".
struct Location {
  std::string file;
  unsigned line = 0;
  unsigned col = 0;

  static Location from(const std::source_location& sl) {
    return Location{sl.file_name(), static_cast<unsigned>(sl.line()), static_cast<unsigned>(sl.column())};
  }
  bool known() const { return !file.empty() || line != 0; }
  std::string str() const;  // "file:line:col" (or "line:col" when the file is unknown)
  bool operator==(const Location&) const = default;
};

// The single exception type Tessera throws for user-facing errors (DSL misuse, malformed IR, verifier
// failures, runtime failures). what() is "file:line:col: error: message" when a location is known.
class Error : public std::runtime_error {
 public:
  Error(const std::string& message, Location loc = {});
  const std::string& message() const { return message_; }
  const Location& location() const { return loc_; }

 private:
  std::string message_;
  Location loc_;
};

}  // namespace tessera
