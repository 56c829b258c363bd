// The folder of the GE graph files this process writes: a GraphPp's graph
// (process_point.cc) and a plain ge::Graph given to Session::AddGraph
// (runner/run_graph.cc). Part of libflow_graph.so (old string ABI).
//
// Thread-safety: WriteGraphFile may be called from any thread.
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <mutex>

#include "ge_api/flow_graph/flow_graph_internal.h"

namespace ge {
namespace dflow {
namespace {

// Note [GraphPp graph files]: a GraphPp's graph is built when the node
// adds it and written as a GE graph file, which the node's model_pp names
// (framework "ge_graph"): the deployer and the model library read files,
// and a file lets a build check and load the model like any other. The
// files live in one folder per process under $TMPDIR, removed at exit.
class GraphFileDir {
 public:
  static GraphFileDir& Get() {
    static GraphFileDir dir;
    return dir;
  }
  // A new file's path, or "" when the folder cannot be made.
  std::string NewFile(const std::string& pp_name) {
    std::lock_guard<std::mutex> lock(mu_);
    if (path_.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      std::string templ = std::string(tmp != nullptr && *tmp ? tmp : "/tmp") +
                          "/hflow-ge-graphs-XXXXXX";
      if (mkdtemp(&templ[0]) == nullptr) return "";
      path_ = templ;
    }
    std::string safe;
    for (char c : pp_name)
      safe += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    files_.push_back(path_ + "/" + std::to_string(files_.size()) + "-" + safe +
                     ".hfg");
    return files_.back();
  }
  ~GraphFileDir() {
    for (const std::string& f : files_) unlink(f.c_str());
    if (!path_.empty()) rmdir(path_.c_str());
  }

 private:
  std::mutex mu_;
  std::string path_;
  std::vector<std::string> files_;
};

}  // namespace

bool WriteGraphFile(const std::string& bytes, const std::string& name,
                    std::string* path, std::string* error) {
  *path = GraphFileDir::Get().NewFile(name);
  std::ofstream out(*path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (path->empty() || !out) {
    *error = "cannot write its graph file under $TMPDIR (" + *path + ")";
    return false;
  }
  return true;
}

}  // namespace dflow
}  // namespace ge
