// Replay runner for the fuzz targets in ordinary (gcc, non-libFuzzer)
// builds: runs every file named on the command line, and every regular file
// under every directory named (recursively, sorted, so runs repeat exactly),
// through LLVMFuzzerTestOneInput once. A crash or broken invariant aborts
// the process, which fails the ctest replaying the seed corpus and the
// crash regressions; that is how both run in every CI build.
//
// Thread-safety: single-threaded program.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

bool Collect(const fs::path& arg, std::vector<fs::path>* files) {
  std::error_code ec;
  if (fs::is_regular_file(arg, ec)) {
    files->push_back(arg);
    return true;
  }
  if (!fs::is_directory(arg, ec)) {
    std::fprintf(stderr, "replay: '%s' is neither a file nor a directory\n",
                 arg.c_str());
    return false;
  }
  std::vector<fs::path> found;
  for (auto it = fs::recursive_directory_iterator(arg, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec)) found.push_back(it->path());
  }
  if (ec) {
    std::fprintf(stderr, "replay: cannot list '%s': %s\n", arg.c_str(),
                 ec.message().c_str());
    return false;
  }
  std::sort(found.begin(), found.end());
  files->insert(files->end(), found.begin(), found.end());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
    return 2;
  }
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    if (!Collect(argv[i], &files)) return 2;
  }
  for (const fs::path& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "replay: cannot read '%s'\n", f.c_str());
      return 2;
    }
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                               std::istreambuf_iterator<char>());
    // Announced first so that a crash names its input.
    std::fprintf(stderr, "replay: %s (%zu bytes)\n", f.c_str(), bytes.size());
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  }
  std::fprintf(stderr, "replay: %zu inputs ran clean\n", files.size());
  return 0;
}
