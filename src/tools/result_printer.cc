// Result output of `hflow run` (see result_printer.h).
//
// Thread-safety: single-threaded (the fetch loop).
#include "tools/result_printer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "tools/npy_file.h"
#include "tools/result_json.h"

namespace hflow::tools {

Status ResultPrinter::Open(const OutputArgs& args, std::ostream* out,
                           std::unique_ptr<ResultPrinter>* printer) {
  std::unique_ptr<ResultPrinter> p(new ResultPrinter(out));
  p->file_name_ = "stdout";
  if (!args.file.empty()) {
    p->file_.open(args.file, std::ios::binary | std::ios::trunc);
    if (!p->file_) {
      return Status::InvalidArgument(
          "--output " + args.file +
          ": cannot write the file: " + std::strerror(errno));
    }
    p->out_ = &p->file_;
    p->file_name_ = "--output " + args.file;
  }
  if (!args.npy_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(args.npy_dir, ec);
    if (ec || !std::filesystem::is_directory(args.npy_dir)) {
      return Status::InvalidArgument(
          "--output-npy " + args.npy_dir + ": cannot create the folder" +
          (ec ? ": " + ec.message() : std::string(" (a file is in the way)")));
    }
    p->npy_dir_ = args.npy_dir;
  }
  p->outputs_ = args.outputs;
  *printer = std::move(p);
  return Status::OK();
}

Status ResultPrinter::Add(const FlowInfo& info, std::vector<Tensor> outputs) {
  pending_.emplace(info.transaction_id,
                   std::make_pair(info, std::move(outputs)));
  while (!pending_.empty() && pending_.begin()->first <= next_) {
    HFLOW_RETURN_IF_ERROR(PrintFirst());
  }
  return Status::OK();
}

Status ResultPrinter::FlushAll() {
  while (!pending_.empty()) HFLOW_RETURN_IF_ERROR(PrintFirst());
  return Status::OK();
}

Status ResultPrinter::PrintFirst() {
  auto node = pending_.extract(pending_.begin());
  const FlowInfo& info = node.mapped().first;
  const std::vector<Tensor>& outputs = node.mapped().second;
  next_ = std::max(next_, node.key() + 1);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const size_t k = i < outputs_.size() ? outputs_[i] : i;
    std::string npy;
    if (!npy_dir_.empty() && !outputs[i].data.empty()) {
      npy = npy_dir_ + "/out" + std::to_string(k) + "_t" +
            std::to_string(info.transaction_id) + ".npy";
      HFLOW_RETURN_IF_ERROR(WriteNpyFile(npy, outputs[i]));
    }
    line_.clear();
    AppendOutputJson(k, info, outputs[i], &line_, npy);
    HFLOW_RETURN_IF_ERROR(WriteLine());
  }
  return Status::OK();
}

Status ResultPrinter::WriteLine() {
  line_ += '\n';
  out_->write(line_.data(), static_cast<std::streamsize>(line_.size()));
  out_->flush();  // a crash or a forced exit keeps every finished line
  if (!*out_) {
    return Status::Internal("cannot write the results to " + file_name_ + ": " +
                            std::strerror(errno));
  }
  return Status::OK();
}

}  // namespace hflow::tools
