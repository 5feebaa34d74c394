// The version has one source, project(VERSION) in CMakeLists.txt: tessera::version() and the JIT's compiler
// version (part of every cache key) both come from it.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "ir/Version.h"
#include "jit/Version.h"

namespace {

std::string projectVersion() {
  std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/CMakeLists.txt");
  std::stringstream text;
  text << in.rdbuf();
  std::smatch m;
  std::string s = text.str();
  if (!std::regex_search(s, m, std::regex(R"(project\(Tessera VERSION ([0-9]+\.[0-9]+\.[0-9]+))"))) return "";
  return m[1];
}

}  // namespace

TEST(Version, IsTheProjectVersion) {
  std::string expected = projectVersion();
  ASSERT_FALSE(expected.empty()) << "CMakeLists.txt has no project(Tessera VERSION x.y.z)";
  EXPECT_EQ(tessera::version(), expected);
}

TEST(Version, StartsTheJitCompilerVersion) {
  EXPECT_EQ(tessera::jit::compilerVersion().rfind(std::string("tessera ") + tessera::version() + " (", 0), 0u)
      << tessera::jit::compilerVersion();
}
