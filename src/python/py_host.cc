// The host half of `dataflow._core`: GE's initialize/finalize, sessions,
// graphs and feed/fetch, over the GE bridge (ge_api/runner/bridge.h), so
// the Python API has GE's option handling, status codes, placement and
// build-on-first-feed from the same code as GE's C++ API. Returns GE's
// numeric codes, as GE's Python wrapper does; malformed arguments raise
// TypeError/ValueError before anything reaches hflow.
//
// Fetched tensors are copied once, out of the bridge's views into vectors
// that the returned numpy arrays then own (no copy back into Python).
//
// Thread-safety: every bridge call runs with the GIL released (Note [The
// GIL and hflow's threads] in py_core.h); a Session object may be used
// from several Python threads at once, as the bridge's sessions may.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ge/ge_error_codes.h"
#include "ge_api/runner/bridge.h"
#include "python/py_core.h"
#include "session/ge_codes.h"

namespace hflow {
namespace python {
namespace {

namespace py = pybind11;
namespace gb = gebridge;
using StringMap = std::map<std::string, std::string>;

// Options as the bridge's key/value array; the map owns the text.
std::vector<gb::KeyValue> KeyValues(const StringMap& options) {
  std::vector<gb::KeyValue> kv;
  for (const auto& [key, value] : options) {
    kv.push_back({key.c_str(), value.c_str()});
  }
  return kv;
}

// A FlowInfo tuple (start_time, end_time, flow_flags, transaction_id,
// user_data, ret_code) as the bridge's view; `user_data` keeps the bytes.
gb::InfoView InfoOfChecked(const py::tuple& t, std::string* user_data);

// pybind's cast errors surface as RuntimeError; a wrong type is TypeError.
template <typename F>
auto Typed(const char* what, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const py::cast_error& e) {
    throw py::type_error(std::string(what) + ": " + e.what());
  }
}

gb::InfoView InfoOf(const py::tuple& t, std::string* user_data) {
  return Typed(
      "flow info (start_time, end_time, flow_flags, transaction_id, "
      "user_data: bytes, ret_code)",
      [&] { return InfoOfChecked(t, user_data); });
}

gb::InfoView InfoOfChecked(const py::tuple& t, std::string* user_data) {
  if (t.size() != 6) {
    throw py::value_error(
        "flow info must be (start_time, end_time, flow_flags, "
        "transaction_id, user_data, ret_code), got " +
        std::to_string(t.size()) + " items");
  }
  gb::InfoView v;
  v.start_time = t[0].cast<uint64_t>();
  v.end_time = t[1].cast<uint64_t>();
  v.flags = t[2].cast<uint32_t>();
  v.transaction_id = t[3].cast<uint64_t>();
  *user_data = t[4].cast<std::string>();
  if (user_data->size() > 64) {
    throw py::value_error("user_data is " + std::to_string(user_data->size()) +
                          " bytes; at most 64 travel with a message");
  }
  v.user_data = reinterpret_cast<const uint8_t*>(user_data->data());
  v.user_data_size = user_data->size();
  v.ret_code = t[5].cast<int32_t>();
  return v;
}

py::tuple InfoTuple(const gb::InfoView& v) {
  std::string user(reinterpret_cast<const char*>(v.user_data),
                   v.user_data == nullptr ? 0 : v.user_data_size);
  return py::make_tuple(v.start_time, v.end_time, v.flags, v.transaction_id,
                        py::bytes(user), v.ret_code);
}

// One tensor to feed: (dtype code, C-contiguous ndarray), kept alive and
// viewed until the call returns.
struct FedTensor {
  py::array array;
  std::vector<int64_t> dims;
  gb::TensorView view;
};

void ViewTensor(const py::handle& item, FedTensor* out) {
  if (!py::isinstance<py::tuple>(item) ||
      py::reinterpret_borrow<py::tuple>(item).size() != 2) {
    throw py::type_error("a tensor is (dtype_code, numpy.ndarray)");
  }
  py::tuple t = py::reinterpret_borrow<py::tuple>(item);
  const int32_t dtype =
      Typed("a tensor's dtype code", [&] { return t[0].cast<int32_t>(); });
  if (!py::isinstance<py::array>(t[1])) {
    throw py::type_error("tensor data must be a numpy.ndarray, got " +
                         std::string(py::str(t[1].get_type())));
  }
  out->array = py::reinterpret_borrow<py::array>(t[1]);
  const size_t size = DtypeSize(dtype);
  if (size == 0) {
    throw py::value_error("data type code " + std::to_string(dtype) +
                          " is not one hflow's tensors carry (DT_STRING and "
                          "DT_BF16 are not supported)");
  }
  if (static_cast<size_t>(out->array.itemsize()) != size) {
    throw py::value_error("the array's items are " +
                          std::to_string(out->array.itemsize()) +
                          " bytes but data type code " + std::to_string(dtype) +
                          " has " + std::to_string(size));
  }
  if (!(out->array.flags() & py::array::c_style)) {
    throw py::value_error("tensor data must be C-contiguous");
  }
  for (py::ssize_t i = 0; i < out->array.ndim(); ++i) {
    out->dims.push_back(out->array.shape(i));
  }
  out->view.dtype = dtype;
  out->view.dims = out->dims.data();
  out->view.dim_num = out->dims.size();
  out->view.data = out->array.data();
  out->view.size = static_cast<size_t>(out->array.nbytes());
}

// What a fetch returned, held without the GIL and turned into Python
// objects after it.
struct Fetched {
  bool tensor = true;  // OnTensor (else OnMessage)
  uint16_t msg_type = 0;
  bool empty = false;
  int32_t dtype = 0;
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;  // tensor bytes, or raw payload
  std::string user_data;
  gb::InfoView info;
};

class Collector : public gb::FetchSink {
 public:
  void OnTensor(size_t position, const gb::TensorView& t) override {
    Fetched& f = At(position);
    Copy(t, &f);
  }
  void OnInfo(const gb::InfoView& info) override { Keep(info, &info_, &ud_); }
  void OnMessage(size_t position, const gb::MessageView& m) override {
    Fetched& f = At(position);
    f.tensor = false;
    f.msg_type = m.msg_type;
    f.empty = m.empty;
    if (!m.empty && m.msg_type == 0) {
      Copy(m.tensor, &f);
    } else if (!m.empty && m.raw != nullptr) {
      const auto* p = static_cast<const uint8_t*>(m.raw);
      f.data.assign(p, p + m.raw_size);
    }
    Keep(m.info, &f.info, &f.user_data);
  }

  std::vector<Fetched>& items() { return items_; }
  const gb::InfoView& info() const { return info_; }

 private:
  Fetched& At(size_t position) {
    if (items_.size() <= position) items_.resize(position + 1);
    return items_[position];
  }
  static void Copy(const gb::TensorView& t, Fetched* f) {
    f->dtype = t.dtype;
    f->dims.assign(t.dims, t.dims + t.dim_num);
    const auto* p = static_cast<const uint8_t*>(t.data);
    f->data.assign(p, p + (p == nullptr ? 0 : t.size));
  }
  static void Keep(const gb::InfoView& in, gb::InfoView* out,
                   std::string* storage) {
    *out = in;
    storage->assign(reinterpret_cast<const char*>(in.user_data),
                    in.user_data == nullptr ? 0 : in.user_data_size);
    out->user_data = reinterpret_cast<const uint8_t*>(storage->data());
    out->user_data_size = storage->size();
  }

  std::vector<Fetched> items_;
  gb::InfoView info_;
  std::string ud_;
};

// An ndarray owning the fetched bytes (moved, not copied). Bytes that do
// not fill the shape (a position a failed fetch left unset, a tensor
// without data) give an empty array, never a read past them.
py::object ArrayOf(Fetched& f) {
  if (NumpyFormat(f.dtype) == nullptr) {
    throw py::value_error("a fetched tensor has data type code " +
                          std::to_string(f.dtype) +
                          ", which numpy cannot hold");
  }
  size_t expected = DtypeSize(f.dtype);
  for (int64_t d : f.dims) expected *= d < 0 ? 0 : static_cast<size_t>(d);
  if (expected != f.data.size()) {
    f.dims = {0};
    f.data.clear();
  }
  auto* owned = new std::vector<uint8_t>(std::move(f.data));
  py::capsule owner(
      owned, [](void* p) { delete static_cast<std::vector<uint8_t>*>(p); });
  return py::array(NumpyDtype(f.dtype), f.dims, owned->data(), owner);
}

py::object PayloadOf(Fetched& f) {
  if (f.empty) return py::none();
  if (f.msg_type == 0) return py::make_tuple(f.dtype, ArrayOf(f));
  return py::bytes(reinterpret_cast<const char*>(f.data.data()), f.data.size());
}

// Every call below releases the GIL around its bridge call.
class Session {
 public:
  explicit Session(const StringMap& options) {
    std::vector<gb::KeyValue> kv = KeyValues(options);
    py::gil_scoped_release release;
    id_ = gb::CreateSession(kv.data(), kv.size());
  }
  ~Session() {
    py::gil_scoped_release release;
    gb::DestroySession(id_);
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  uint32_t AddGraph(uint32_t graph_id, const std::string& json,
                    const std::string& source, const StringMap& options) {
    std::vector<gb::KeyValue> kv = KeyValues(options);
    py::gil_scoped_release release;
    return gb::AddGraph(id_, graph_id, json.c_str(), source.c_str(), kv.data(),
                        kv.size());
  }
  uint32_t BuildGraph(uint32_t graph_id) {
    py::gil_scoped_release release;
    return gb::BuildGraph(id_, graph_id);
  }
  uint32_t RemoveGraph(uint32_t graph_id) {
    py::gil_scoped_release release;
    return gb::RemoveGraph(id_, graph_id);
  }

  uint32_t FeedTensors(uint32_t graph_id, const std::vector<uint32_t>& indexes,
                       const py::list& tensors, const py::tuple& info,
                       int32_t timeout) {
    std::vector<FedTensor> fed(tensors.size());
    std::vector<gb::TensorView> views;
    for (size_t i = 0; i < fed.size(); ++i) {
      ViewTensor(tensors[i], &fed[i]);
      views.push_back(fed[i].view);
    }
    std::string ud;
    gb::InfoView v = InfoOf(info, &ud);
    py::gil_scoped_release release;
    return gb::FeedTensors(id_, graph_id, indexes.data(), indexes.size(),
                           views.data(), views.size(), v, timeout);
  }

  uint32_t FeedMessages(uint32_t graph_id, const std::vector<uint32_t>& indexes,
                        const py::list& messages, int32_t timeout) {
    const size_t n = messages.size();
    std::vector<FedTensor> tensors(n);
    std::vector<std::string> raws(n), uds(n);
    std::vector<gb::MessageView> views(n);
    for (size_t i = 0; i < n; ++i) {
      if (!py::isinstance<py::tuple>(messages[i]) ||
          messages[i].cast<py::tuple>().size() != 3) {
        throw py::type_error("a message is (msg_type, payload, flow_info)");
      }
      py::tuple m = messages[i].cast<py::tuple>();
      gb::MessageView& v = views[i];
      v.msg_type = Typed("a message's type (0..65535)",
                         [&] { return m[0].cast<uint16_t>(); });
      if (!py::isinstance<py::tuple>(m[2])) {
        throw py::type_error("a message's flow info must be a tuple");
      }
      v.info = InfoOf(m[2].cast<py::tuple>(), &uds[i]);
      py::handle payload = m[1];
      if (payload.is_none()) {
        v.empty = true;
      } else if (v.msg_type == 0) {
        ViewTensor(payload, &tensors[i]);
        v.tensor = tensors[i].view;
      } else {
        raws[i] = Bytes(payload);
        v.raw = raws[i].data();
        v.raw_size = raws[i].size();
      }
    }
    py::gil_scoped_release release;
    return gb::FeedMessages(id_, graph_id, indexes.data(), indexes.size(),
                            views.data(), views.size(), timeout);
  }

  py::tuple FetchTensors(uint32_t graph_id,
                         const std::vector<uint32_t>& indexes,
                         int32_t timeout) {
    Collector c;
    const uint32_t code = WithoutGil([&] {
      return gb::FetchTensors(id_, graph_id, indexes.data(), indexes.size(),
                              timeout, &c);
    });
    py::list out;
    for (Fetched& f : c.items())
      out.append(py::make_tuple(f.dtype, ArrayOf(f)));
    return py::make_tuple(code, out, InfoTuple(c.info()));
  }

  py::tuple FetchMessages(uint32_t graph_id,
                          const std::vector<uint32_t>& indexes,
                          int32_t timeout) {
    Collector c;
    const uint32_t code = WithoutGil([&] {
      return gb::FetchMessages(id_, graph_id, indexes.data(), indexes.size(),
                               timeout, &c);
    });
    py::list out;
    for (Fetched& f : c.items()) {
      out.append(py::make_tuple(f.msg_type, PayloadOf(f), InfoTuple(f.info)));
    }
    return py::make_tuple(code, out);
  }

 private:
  template <typename Call>
  static uint32_t WithoutGil(Call&& call) {
    py::gil_scoped_release release;
    return call();
  }

  // bytes, bytearray or anything with the buffer protocol (memoryview).
  static std::string Bytes(py::handle payload) {
    if (py::isinstance<py::bytes>(payload)) return payload.cast<std::string>();
    if (!PyObject_CheckBuffer(payload.ptr())) {
      throw py::type_error("a raw message's payload must be bytes-like, got " +
                           std::string(py::str(payload.get_type())));
    }
    py::buffer_info b = py::reinterpret_borrow<py::buffer>(payload).request();
    return std::string(static_cast<const char*>(b.ptr),
                       static_cast<size_t>(b.size * b.itemsize));
  }

  uint64_t id_ = 0;
};

uint32_t GeInitialize(const StringMap& options) {
  std::vector<gb::KeyValue> kv = KeyValues(options);
  py::gil_scoped_release release;
  return gb::Initialize(kv.data(), kv.size());
}

uint32_t GeFinalize() {
  py::gil_scoped_release release;
  return gb::Finalize();
}

}  // namespace

void BindHost(py::module_& m) {
  m.def("ge_initialize", &GeInitialize, py::arg("options"),
        "GE's GEInitialize: starts hflow with GE's ge.* options.");
  m.def("ge_finalize", &GeFinalize, "GE's GEFinalize.");
  m.def(
      "last_error", [] { return std::string(gb::LastError()); },
      "The calling thread's last failure line, '' when none.");
  py::class_<Session>(m, "Session")
      .def(py::init<const StringMap&>(), py::arg("options"))
      .def("add_graph", &Session::AddGraph, py::arg("graph_id"),
           py::arg("json"), py::arg("source"), py::arg("options"))
      .def("build_graph", &Session::BuildGraph, py::arg("graph_id"))
      .def("remove_graph", &Session::RemoveGraph, py::arg("graph_id"))
      .def("feed_tensors", &Session::FeedTensors, py::arg("graph_id"),
           py::arg("indexes"), py::arg("tensors"), py::arg("info"),
           py::arg("timeout"))
      .def("feed_messages", &Session::FeedMessages, py::arg("graph_id"),
           py::arg("indexes"), py::arg("messages"), py::arg("timeout"))
      .def("fetch_tensors", &Session::FetchTensors, py::arg("graph_id"),
           py::arg("indexes"), py::arg("timeout"))
      .def("fetch_messages", &Session::FetchMessages, py::arg("graph_id"),
           py::arg("indexes"), py::arg("timeout"));

  m.attr("SUCCESS") = ge::kGeSuccess;
  m.attr("FAILED") = ge::kGeFailed;
  m.attr("PARAM_INVALID") = ge::kGeParamInvalid;
  m.attr("NOT_INIT") = ge::kGeExecNotInit;
  m.attr("SHAPE_INVALID") = ACL_ERROR_GE_SHAPE_INVALID;
  m.attr("DATATYPE_INVALID") = ACL_ERROR_GE_DATATYPE_INVALID;
  m.attr("SUBHEALTHY") = ge::kGeSubhealthy;
  m.attr("USER_RAISE_EXCEPTION") = ge::kGeUserRaiseException;
  m.attr("DATA_NOT_ALIGNED") = ge::kGeDataNotAligned;
  m.attr("INTERNAL_ERROR") = ge::kGeInternalError;
  m.attr("TIMEOUT") = ge::kGeModelExecuteTimeout;
  m.attr("REDEPLOYING") = ge::kGeRedeploying;
  m.attr("END_OF_SEQUENCE") = ge::kGeEndOfSequence;
  m.attr("MEMORY_ALLOCATION") = ge::kGeMemoryAllocation;
}

}  // namespace python
}  // namespace hflow
