// The user guide's table of supported model operators is the executor's
// registry: the test reads the table between the "model ops" markers of
// docs/user_guide.md and compares it with the one libhflow_model.so makes
// (hflow_model_ops_table). On a mismatch it prints the table to paste.
//
// Thread-safety: single-threaded.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "deploy/deployer.h"
#include "flow_func/udf_library.h"

namespace hflow {
namespace {

std::string LibraryTable() {
  std::string path;
  EXPECT_TRUE(deploy::FindModelLibrary(&path).ok());
  EXPECT_TRUE(flow_func::LoadUdfLibrary(path).ok());
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) return "";
  auto fn = reinterpret_cast<size_t (*)(char*, size_t)>(
      dlsym(h, "hflow_model_ops_table"));
  dlclose(h);
  if (fn == nullptr) return "";
  std::vector<char> buf(fn(nullptr, 0));
  fn(buf.data(), buf.size());
  return std::string(buf.data());
}

std::string DocTable() {
  std::ifstream in(HFLOW_SOURCE_DIR "/docs/user_guide.md");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const std::string begin = "<!-- model ops: begin -->\n";
  const size_t b = text.find(begin);
  const size_t e = text.find("<!-- model ops: end -->");
  if (b == std::string::npos || e == std::string::npos || e < b) return "?";
  return text.substr(b + begin.size(), e - b - begin.size());
}

TEST(ModelOpsDocTest, TheUserGuidesTableIsTheRegistry) {
  const std::string want = LibraryTable();
  ASSERT_FALSE(want.empty()) << "libhflow_model.so has no table";
  EXPECT_EQ(DocTable(), want)
      << "docs/user_guide.md's table between the \"model ops\" markers is "
         "stale; replace it with:\n"
      << want;
}

}  // namespace
}  // namespace hflow
