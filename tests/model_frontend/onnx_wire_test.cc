// The ONNX front-end's weights from the mapped file (Note [Weights from the
// mapped file] in src/model/onnx_wire.h): SplitInitializerData finds every
// initializer's raw bytes where they lie, gives up on what it does not
// expect, and never changes what the front-end accepts; imports view their
// weights in a mapping (or a copy) that outlives the file's name and the
// caller's bytes. Built without ATen, from the same objects as the fuzz
// targets, so it runs in every build, sanitized ones included.
//
// Thread-safety: single-threaded.
#include "model/onnx_wire.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "model/onnx_import.h"

namespace hflow {
namespace model {
namespace {

std::string Floats(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()),
                     v.size() * sizeof(float));
}

onnx::TensorProto* AddInitializer(onnx::GraphProto* g, const std::string& name,
                                  std::vector<int64_t> dims) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  return t;
}

// y = (x + a) * b - c, a and c as raw bytes, b as float_data.
onnx::ModelProto SmallModel() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("small");
  AddInitializer(g, "a", {4})->set_raw_data(Floats({1, 2, 3, 4}));
  onnx::TensorProto* b = AddInitializer(g, "b", {4});
  for (float f : {0.5f, 1.5f, 2.5f, 3.5f}) b->add_float_data(f);
  AddInitializer(g, "c", {2, 2})->set_raw_data(Floats({9, 8, 7, 6}));
  auto node = [&](const char* op, std::vector<std::string> in,
                  const std::string& out) {
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(op);
    for (const auto& i : in) n->add_input(i);
    n->add_output(out);
  };
  node("Add", {"x", "a"}, "s");
  node("Mul", {"s", "b"}, "p");
  node("Reshape", {"p", "shape"}, "r");
  node("Sub", {"r", "c"}, "y");
  onnx::TensorProto* shape = g->add_initializer();
  shape->set_name("shape");
  shape->set_data_type(onnx::TensorProto::INT64);
  shape->add_dims(2);
  const int64_t dims[2] = {2, 2};
  shape->set_raw_data(std::string(reinterpret_cast<const char*>(dims), 16));
  auto value = [](onnx::ValueInfoProto* v, const std::string& name,
                  std::vector<int64_t> dims) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  };
  value(g->add_input(), "x", {4});
  value(g->add_output(), "y", {2, 2});
  return m;
}

// What the front-end's parse accepts: the skeleton where the walk worked,
// the whole bytes where it gave up.
bool FrontEndParses(const std::string& bytes, onnx::ModelProto* out) {
  std::string skeleton;
  std::vector<WireSpan> spans;
  if (SplitInitializerData(bytes.data(), bytes.size(), &skeleton, &spans)) {
    return out->ParseFromString(skeleton);
  }
  return out->ParseFromString(bytes);
}

TEST(OnnxWireTest, EachRawInitializerIsFoundWhereItLies) {
  const onnx::ModelProto m = SmallModel();
  const std::string bytes = m.SerializeAsString();
  std::string skeleton;
  std::vector<WireSpan> spans;
  ASSERT_TRUE(
      SplitInitializerData(bytes.data(), bytes.size(), &skeleton, &spans));
  ASSERT_EQ(spans.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    const onnx::TensorProto& t = m.graph().initializer(i);
    SCOPED_TRACE(t.name());
    EXPECT_EQ(spans[i].present, t.has_raw_data());
    if (!t.has_raw_data()) continue;
    ASSERT_LE(spans[i].offset + spans[i].size, bytes.size());
    EXPECT_EQ(bytes.substr(spans[i].offset, spans[i].size), t.raw_data());
  }
  onnx::ModelProto parsed;
  ASSERT_TRUE(parsed.ParseFromString(skeleton));
  // Three payloads of 16 bytes left out, three one-byte stand-ins in.
  EXPECT_LE(skeleton.size(), bytes.size() - 48 + 3);
  // Everything but the raw payloads is what it was; each payload is a
  // one-byte stand-in.
  onnx::ModelProto expected = m;
  for (auto& t : *expected.mutable_graph()->mutable_initializer()) {
    if (t.has_raw_data()) t.set_raw_data(std::string(1, '\0'));
  }
  EXPECT_EQ(parsed.SerializeAsString(), expected.SerializeAsString());
}

TEST(OnnxWireTest, GraphsSplitAcrossFieldsKeepTheirInitializersOrder) {
  // protobuf merges a message's repeated occurrences of a field: two graph
  // fields make one graph, the initializers in the order met.
  onnx::ModelProto first = SmallModel();
  onnx::ModelProto second;
  AddInitializer(second.mutable_graph(), "late", {2})
      ->set_raw_data(Floats({5, 6}));
  const std::string bytes =
      first.SerializeAsString() + second.SerializeAsString();
  onnx::ModelProto whole;
  ASSERT_TRUE(whole.ParseFromString(bytes));
  std::string skeleton;
  std::vector<WireSpan> spans;
  ASSERT_TRUE(
      SplitInitializerData(bytes.data(), bytes.size(), &skeleton, &spans));
  ASSERT_EQ(spans.size(), size_t(whole.graph().initializer_size()));
  for (size_t i = 0; i < spans.size(); ++i) {
    const onnx::TensorProto& t = whole.graph().initializer(int(i));
    if (!t.has_raw_data()) continue;
    EXPECT_EQ(bytes.substr(spans[i].offset, spans[i].size), t.raw_data())
        << t.name();
  }
}

TEST(OnnxWireTest, TheWalkNeverChangesWhatIsAccepted) {
  // Every prefix of a model, and the model with a group field (which the
  // walk does not expect) or a field number 0 appended: the front-end
  // accepts exactly what a whole parse accepts.
  const std::string bytes = SmallModel().SerializeAsString();
  std::vector<std::string> inputs;
  for (size_t n = 0; n <= bytes.size(); ++n)
    inputs.push_back(bytes.substr(0, n));
  inputs.push_back(bytes + std::string("\x0b\x0c", 2));  // group 1, empty
  inputs.push_back(bytes + std::string("\x02\x00", 2));  // field 0
  int given_up = 0;
  for (const std::string& in : inputs) {
    onnx::ModelProto whole;
    onnx::ModelProto front;
    const bool whole_ok = whole.ParseFromString(in);
    EXPECT_EQ(FrontEndParses(in, &front), whole_ok) << in.size() << " bytes";
    std::string skeleton;
    std::vector<WireSpan> spans;
    if (!SplitInitializerData(in.data(), in.size(), &skeleton, &spans)) {
      ++given_up;
    }
  }
  EXPECT_GT(given_up, 10);  // truncations inside fields are seen
}

std::string WriteFile(const std::string& name, const std::string& bytes) {
  const std::string path =
      ::testing::TempDir() + name + "_" + std::to_string(getpid());
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::vector<float> AsFloats(std::string_view d) {
  std::vector<float> v(d.size() / sizeof(float));
  std::memcpy(v.data(), d.data(), v.size() * sizeof(float));
  return v;
}

void ExpectSmallModelConstants(const ModelIr& ir) {
  ASSERT_EQ(ir.constants.size(), 4u);
  EXPECT_EQ(AsFloats(ir.constants[0].second.data()),
            (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(AsFloats(ir.constants[1].second.data()),
            (std::vector<float>{0.5f, 1.5f, 2.5f, 3.5f}));
  EXPECT_EQ(AsFloats(ir.constants[2].second.data()),
            (std::vector<float>{9, 8, 7, 6}));
  EXPECT_EQ(ir.constants[3].second.data().size(), 16u);
  // The raw ones are views; the typed field's values are the IR's own.
  EXPECT_NE(ir.constants[0].second.mapping, nullptr);
  EXPECT_TRUE(ir.constants[0].second.bytes.empty());
  EXPECT_EQ(ir.constants[1].second.mapping, nullptr);
  EXPECT_NE(ir.constants[2].second.mapping, nullptr);
}

TEST(OnnxWireTest, AFileImportViewsTheMappingWhichOutlivesTheFilesName) {
  const std::string path =
      WriteFile("small.onnx", SmallModel().SerializeAsString());
  ModelIr ir;
  Status s = ImportOnnxFile(path, {}, &ir);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(unlink(path.c_str()), 0);
  ExpectSmallModelConstants(ir);
  EXPECT_TRUE(CheckIr(ir).ok());
}

TEST(OnnxWireTest, ABytesImportKeepsItsOwnCopy) {
  std::string bytes = SmallModel().SerializeAsString();
  ModelIr ir;
  Status s = ImportOnnxBytes(bytes, "small.onnx", {}, &ir);
  ASSERT_TRUE(s.ok()) << s.ToString();
  bytes.assign(bytes.size(), '\x7f');
  bytes.clear();
  bytes.shrink_to_fit();
  ExpectSmallModelConstants(ir);
}

TEST(OnnxWireTest, TheCheckerStillSeesWhatTheFileHolds) {
  // A STRING tensor's data in raw_data is refused by ONNX's checker: the
  // stand-in must not hide that. A wrong size is refused by the IR check,
  // naming the constant.
  onnx::ModelProto m = SmallModel();
  m.mutable_graph()->mutable_initializer(0)->set_data_type(
      onnx::TensorProto::STRING);
  ModelIr ir;
  Status s = ImportOnnxBytes(m.SerializeAsString(), "str.onnx", {}, &ir);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("checker"), std::string::npos) << s.ToString();

  onnx::ModelProto short_a = SmallModel();
  short_a.mutable_graph()->mutable_initializer(0)->set_raw_data(Floats({1}));
  const std::string path = WriteFile("short.onnx", short_a.SerializeAsString());
  s = ImportOnnxFile(path, {}, &ir);
  unlink(path.c_str());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("constant 'a'"), std::string::npos)
      << s.ToString();
  EXPECT_NE(s.message().find("4 bytes"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace model
}  // namespace hflow
