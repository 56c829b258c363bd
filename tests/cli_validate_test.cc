// `hflow validate`: prints the plan of a valid graph (instances and queues
// per device), writes a DOT picture with one cluster per device, and exits 2
// naming the file and field for bad graphs, bad placements and unknown
// functions; flow attributes and --queue-depth in the plan. (Init and
// memory checks: cli_fault_test.cc, cli_output_test.cc.)
#include <gmock/gmock.h>

#include "cli_test_util.h"

namespace hflow {
namespace {

using ::testing::HasSubstr;

class CliValidateTest : public testing::CliTest {
 protected:
  std::string Graph(const std::string& deploy = "") {
    return Write("g.json", R"({"name": "add_pipeline", "inputs": ["a", "b"],
      "nodes": [
        {"name": "add", "inputs": ["a", "b"], "outputs": 1, "function": "_BuiltIn_Add"},
        {"name": "twice", "inputs": ["add:0", "add:0"], "outputs": 1, "function": "_BuiltIn_Add"}],
      "outputs": ["twice:0"])" +
                               deploy + "}");
  }
};

TEST_F(CliValidateTest, PrintsThePlanAndWritesDot) {
  std::string g = Graph(R"(, "deploy": {"deploy_info": [
      {"flow_node_name": "add", "logic_device_id": "0:0:3"},
      {"flow_node_name": "twice", "logic_device_id": "0:0:7"}]})");
  testing::CliResult r =
      Run("validate '" + g + "' --devices 3,6,7 --dot '" + dir_ + "/plan.dot'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("device 3:"));
  EXPECT_THAT(r.out, HasSubstr("instance add"));
  EXPECT_THAT(r.out, HasSubstr("device 7:"));
  EXPECT_THAT(r.out, HasSubstr("instance twice"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("device 6:")));
  std::string dot = Read(dir_ + "/plan.dot");
  EXPECT_THAT(dot, HasSubstr("digraph"));
  EXPECT_THAT(dot, HasSubstr("subgraph cluster_device3"));
  EXPECT_THAT(dot, HasSubstr("subgraph cluster_device7"));
}

TEST_F(CliValidateTest, RejectsBadInputsNamingThem) {
  // A device outside the cluster.
  std::string g = Graph(R"(, "deploy": {"deploy_info": [
      {"flow_node_name": "add", "logic_device_id": "0:0:9"}]})");
  testing::CliResult r = Run("validate '" + g + "' --devices 2,3");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("deploy_info[0]"));
  EXPECT_THAT(r.err, HasSubstr("device 9"));
  // An unknown function.
  std::string bad = Write("bad.json", R"({"name": "g", "inputs": ["a"],
      "nodes": [{"name": "n", "inputs": ["a"], "outputs": 1, "function": "Nope"}],
      "outputs": ["n:0"]})");
  r = Run("validate '" + bad + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("node 'n'"));
  EXPECT_THAT(r.err, HasSubstr("Nope"));
  // A dangling reference.
  std::string dangling = Write("d.json", R"({"name": "g", "inputs": ["a"],
      "nodes": [{"name": "n", "inputs": ["x:0"], "outputs": 1, "function": "_BuiltIn_Identity"}],
      "outputs": ["n:0"]})");
  r = Run("validate '" + dangling + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("d.json"));
  EXPECT_THAT(r.err, HasSubstr("nodes[0].inputs[0]"));
  // A missing file.
  r = Run("validate '" + dir_ + "/missing.json'");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("missing.json"));
}

// Flow attributes in the graph file reach the plan; --queue-depth sets the
// rest; bad values exit 2 naming the field; the graph runs.
TEST_F(CliValidateTest, FlowAttributesShowInThePlan) {
  std::string g = Write("fa.json", R"({"name": "g", "inputs": ["a"],
      "flow_attr": {"depth": 6},
      "nodes": [
        {"name": "n1", "inputs": ["a"], "outputs": 1, "function": "_BuiltIn_Identity",
         "input_flow_attrs": {"0": {"depth": 3, "enqueue_policy": "OVERWRITE"}}},
        {"name": "n2", "inputs": ["n1"], "outputs": 1, "function": "_BuiltIn_Identity"}],
      "outputs": ["n2:0"]})");
  testing::CliResult r = Run("validate '" + g + "' --devices 2,3");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("queue n1.in0 depth 3 OVERWRITE <- a"));
  EXPECT_THAT(r.out, HasSubstr("queue n2.in0 depth 6 <- n1:0"));
  r = Run("run '" + g + "' --devices 2,3 --input a=int64:5");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("5"));
  std::string plain = Write("p.json", R"({"name": "g", "inputs": ["a"],
      "nodes": [{"name": "n", "inputs": ["a"], "outputs": 1, "function": "_BuiltIn_Identity"}],
      "outputs": ["n:0"]})");
  r = Run("validate '" + plain + "' --devices 2 --queue-depth 9");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("queue n.in0 depth 9 <- a"));
  r = Run("validate '" + plain + "' --devices 2 --queue-depth 1");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--queue-depth 1: must be at least 2"));
  std::string bad = Write("bad.json", R"({"name": "g", "inputs": ["a"],
      "nodes": [{"name": "n", "inputs": ["a"], "outputs": 1, "function": "_BuiltIn_Identity",
                 "flow_attr": {"enqueue_policy": "LIFO"}}],
      "outputs": ["n:0"]})");
  r = Run("validate '" + bad + "' --devices 2");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("nodes[0].flow_attr.enqueue_policy: unknown "
                               "enqueue policy 'LIFO'; expected FIFO or "
                               "OVERWRITE"));
}

}  // namespace
}  // namespace hflow
