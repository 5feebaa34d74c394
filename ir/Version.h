// Tessera's version, "MAJOR.MINOR.PATCH", from project(VERSION) in the top-level CMakeLists.txt.
#pragma once

namespace tessera {

const char* version();

}  // namespace tessera
