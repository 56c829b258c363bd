// Where `hflow run` puts its results: one JSON line per graph output per
// fetched result (result_json.h), in transaction order, on stdout or in
// `--output FILE`, and with `--output-npy DIR` each fetched tensor as
// DIR/out<k>_t<trans>.npy (the line then names the file instead of holding
// the data).
//
// Every line is flushed as soon as it is complete, so the results already
// produced reach a file or a pipe even when a UDF crashes the process or a
// hang makes hflow exit without tearing down; and `--output FILE` keeps them
// apart from whatever a UDF itself prints on stdout.
//
// Thread-safety: not thread-safe; the fetch loop's thread owns it.
#ifndef HFLOW_TOOLS_RESULT_PRINTER_H_
#define HFLOW_TOOLS_RESULT_PRINTER_H_

#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "hflow/session.h"
#include "hflow/status.h"

namespace hflow::tools {

struct OutputArgs {
  std::string file;     // --output FILE; empty: stdout
  std::string npy_dir;  // --output-npy DIR; empty: data inline
  // The graph output each fetched tensor is (--fetch); empty: the k-th
  // tensor is output k.
  std::vector<uint32_t> outputs;
};

// Prints fetched results in transaction order: replicas may return them out
// of order, so each waits until its predecessors are printed.
class ResultPrinter {
 public:
  // Opens the --output file (truncating it) and creates the --output-npy
  // folder; errors name the path. `out` gets the lines when there is no
  // file and must outlive the printer.
  static Status Open(const OutputArgs& args, std::ostream* out,
                     std::unique_ptr<ResultPrinter>* printer);

  // Takes one fetched result and prints every result now in order. An
  // error (a write failed) names the file.
  Status Add(const FlowInfo& info, std::vector<Tensor> outputs);
  // Prints whatever is left (after a lost message), still in order.
  Status FlushAll();

 private:
  explicit ResultPrinter(std::ostream* out) : out_(out) {}
  Status PrintFirst();
  Status WriteLine();

  std::ostream* out_;  // stdout or file_
  std::ofstream file_;
  std::string file_name_;  // for messages: "--output FILE" or "stdout"
  std::string npy_dir_;
  std::vector<uint32_t> outputs_;  // OutputArgs::outputs
  std::string line_;               // reused: one buffer for every line
  uint64_t next_ = 1;
  std::multimap<uint64_t, std::pair<FlowInfo, std::vector<Tensor>>> pending_;
};

}  // namespace hflow::tools

#endif  // HFLOW_TOOLS_RESULT_PRINTER_H_
