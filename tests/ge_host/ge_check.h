// Small helpers shared by the GE host programs of tests/ge_host: checks that
// print what they compare and count failures, int32/int64 tensor makers and
// readers, the device list a program runs on, and GE's initialize options
// for it. C++11, as GE host programs are. Only GE's public headers are
// used, so the programs compile unchanged against CANN.
#ifndef TESTS_GE_HOST_GE_CHECK_H_
#define TESTS_GE_HOST_GE_CHECK_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "ge/ge_api.h"

namespace ge_host {

// Failed checks so far (the program's exit status is non-zero when any).
inline int& Failures() {
  static int failures = 0;
  return failures;
}

inline bool Check(bool ok, const std::string& what) {
  std::printf("[%s] %s\n", ok ? " ok " : "FAIL", what.c_str());
  std::fflush(stdout);
  if (!ok) ++Failures();
  return ok;
}

template <typename T>
std::string Str(const std::vector<T>& v) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < v.size(); ++i) s << (i ? "," : "") << v[i];
  s << "]";
  return s.str();
}

template <typename T>
std::string Str(const T& v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// Checks actual == expected, printing both.
template <typename T>
bool Eq(const T& actual, const T& expected, const std::string& what) {
  return Check(actual == expected,
               what + ": " + Str(actual) + (actual == expected ? "" : " != ") +
                   (actual == expected ? "" : Str(expected)));
}

// A GE status check: prints the code and, on a mismatch, GE's last error.
inline bool StatusIs(ge::Status actual, ge::Status expected,
                     const std::string& what) {
  bool ok = actual == expected;
  std::string msg = what + ": status " + Str(actual);
  if (!ok)
    msg += " (expected " + Str(expected) + "; " + ge::GEGetErrorMsg() + ")";
  return Check(ok, msg);
}

// The status is an error (any code but SUCCESS), and GE's last error
// message is not empty.
inline bool Fails(ge::Status actual, const std::string& what) {
  std::string err = ge::GEGetErrorMsg();
  return Check(actual != ge::SUCCESS && !err.empty(),
               what + ": status " + Str(actual) + ", \"" + err + "\"");
}

inline bool Contains(const std::string& text, const std::string& part,
                     const std::string& what) {
  return Check(text.find(part) != std::string::npos,
               what + ": \"" + part + "\" in \"" + text + "\"");
}

template <typename T>
ge::Tensor MakeTensor(ge::DataType dtype, const std::vector<int64_t>& shape,
                      const std::vector<T>& values) {
  ge::TensorDesc desc(ge::Shape(shape), ge::FORMAT_ND, dtype);
  return ge::Tensor(desc, reinterpret_cast<const uint8_t*>(values.data()),
                    values.size() * sizeof(T));
}

inline ge::Tensor Int32s(const std::vector<int64_t>& shape,
                         const std::vector<int32_t>& values) {
  return MakeTensor(ge::DT_INT32, shape, values);
}
inline ge::Tensor Int64s(const std::vector<int64_t>& shape,
                         const std::vector<int64_t>& values) {
  return MakeTensor(ge::DT_INT64, shape, values);
}

template <typename T>
std::vector<T> Values(const ge::Tensor& t) {
  std::vector<T> v(t.GetSize() / sizeof(T));
  if (!v.empty()) std::memcpy(&v[0], t.GetData(), v.size() * sizeof(T));
  return v;
}

inline std::vector<int64_t> Dims(const ge::Tensor& t) {
  return t.GetTensorDesc().GetShape().GetDims();
}

// The devices the program runs on: argv[1] ("2,3,4,5"), else the default
// cluster's 0..3. The driver passes the devices of RESOURCE_CONFIG_PATH.
inline std::vector<int32_t> Devices(int argc, char** argv) {
  std::vector<int32_t> d;
  std::string list = argc > 1 ? argv[1] : "0,1,2,3";
  std::istringstream s(list);
  std::string item;
  while (std::getline(s, item, ',')) d.push_back(std::atoi(item.c_str()));
  return d;
}

// GEInitialize's options as GE's samples write them. ge.exec.deviceId is
// logical, as in CANN: "0" is the first device of the cluster, whatever its
// id.
inline std::map<ge::AscendString, ge::AscendString> InitOptions() {
  std::map<ge::AscendString, ge::AscendString> o;
  o["ge.exec.deviceId"] = "0";
  o["ge.graphRunMode"] = "0";
  return o;
}

// Prints the summary line; the program's exit status.
inline int Finish(const char* program) {
  std::printf("%s: %s (%d failed)\n", program,
              Failures() == 0 ? "PASS" : "FAIL", Failures());
  return Failures() == 0 ? 0 : 1;
}

}  // namespace ge_host

#endif  // TESTS_GE_HOST_GE_CHECK_H_
