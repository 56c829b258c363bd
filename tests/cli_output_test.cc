// What `hflow run` writes, with built-in UDFs only (no UDF build): NaN and
// the infinities as JSON strings, --output FILE, --output-npy DIR, --fetch
// (which outputs, in which order; bad indexes exit 2), exit 2
// and no transaction summary after a config error, built-in arity and
// device memory refused before deployment (run and validate), and the
// message before deployment.
//
// Thread-safety: single-threaded; each test writes into its own temp dir.
#include <gmock/gmock.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "tools/npy_file.h"

namespace hflow {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kIdentityGraph[] =
    R"({"name":"ident","inputs":["x"],"nodes":[{"name":"id","inputs":["x"],)"
    R"("outputs":1,"function":"_BuiltIn_Identity"}],"outputs":["id:0"]})";
constexpr char kTwoOutputs[] =
    R"({"name":"two","inputs":["x"],"nodes":[)"
    R"({"name":"a","inputs":["x"],"outputs":1,"function":"_BuiltIn_Identity"},)"
    R"({"name":"b","inputs":["x"],"outputs":1,"function":"_BuiltIn_Identity"}],)"
    R"("outputs":["a:0","b:0"]})";
constexpr char kOneInputAdd[] =
    R"({"name":"bad","inputs":["a"],"nodes":[{"name":"sum","inputs":["a"],)"
    R"("outputs":1,"function":"_BuiltIn_Add"}],"outputs":["sum:0"]})";

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class CliOutputTest : public testing::CliTest {};

TEST_F(CliOutputTest, NanAndInfinitiesAreJsonStrings) {
  std::string g = Write("g.json", kIdentityGraph);
  testing::CliResult r =
      Run("run '" + g + "' --devices 3,6,7 --input x=float32:nan,inf,-inf,2");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, R"({"output":0,"trans_id":1,"ret_code":0,"dtype":"float32",)"
                   R"("shape":[4],"data":["NaN","Infinity","-Infinity",2]})"
                   "\n");
}

TEST_F(CliOutputTest, OutputFileGetsTheLinesInsteadOfStdout) {
  std::string g = Write("g.json", kIdentityGraph);
  std::string file = dir_ + "/out.jsonl";
  testing::CliResult r =
      Run("run '" + g + "' --devices 2,3,4,5" +
          " --input x=int8:1 --repeat 3 --output '" + file + "'");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  std::vector<std::string> lines = Lines(Read(file));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2], R"({"output":0,"trans_id":3,"ret_code":0,)"
                      R"("dtype":"int8","shape":[1],"data":[1]})");
}

TEST_F(CliOutputTest, OutputNpyWritesEachTensor) {
  std::string g = Write("g.json", kIdentityGraph);
  std::string npy = dir_ + "/npy";
  testing::CliResult r =
      Run("run '" + g + "' --input 'x=float64[2,1]:0.5,-3' --repeat 2" +
          " --output-npy '" + npy + "'");
  EXPECT_EQ(r.code, 0) << r.err;
  for (int t : {1, 2}) {
    std::string path = npy + "/out0_t" + std::to_string(t) + ".npy";
    Tensor back;
    Status s = tools::LoadNpyFile(path, &back);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(back.dtype, DataType::kDouble);
    EXPECT_EQ(back.shape, (std::vector<int64_t>{2, 1}));
    EXPECT_EQ(back.As<double>(), (std::vector<double>{0.5, -3}));
    EXPECT_THAT(r.out, HasSubstr(R"("trans_id":)" + std::to_string(t) +
                                 R"(,"ret_code":0,"dtype":"float64",)"
                                 R"("shape":[2,1],"npy":")" +
                                 path + "\"}"));
  }
  EXPECT_THAT(r.out, Not(HasSubstr("\"data\"")));
}

TEST_F(CliOutputTest, FetchChoosesOutputsAndTheirOrder) {
  std::string g = Write("g.json", kTwoOutputs);
  testing::CliResult r =
      Run("run '" + g + "' --devices 3,6,7 --input x=int8:5 --fetch 1");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, R"({"output":1,"trans_id":1,"ret_code":0,"dtype":"int8",)"
                   R"("shape":[1],"data":[5]})"
                   "\n");
  r = Run("run '" + g + "' --devices 2,3,4,5 --input x=int8:5 --fetch 1,0");
  EXPECT_EQ(r.code, 0) << r.err;
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_THAT(lines[0], HasSubstr(R"({"output":1,"trans_id":1,)"));
  EXPECT_THAT(lines[1], HasSubstr(R"({"output":0,"trans_id":1,)"));
}

TEST_F(CliOutputTest, FetchOutOfRangeOrRepeatedExitsTwo) {
  std::string g = Write("g.json", kTwoOutputs);
  testing::CliResult r = Run("run '" + g + "' --input x=int8:5 --fetch 2");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--fetch 2: graph 'two' has 2 outputs (0..1)"));
  r = Run("run '" + g + "' --input x=int8:5 --fetch 0,0");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--fetch 0: named twice"));
  EXPECT_THAT(r.err, Not(HasSubstr("transactions ok")));
}

TEST_F(CliOutputTest, ConfigErrorsExitTwoWithoutASummary) {
  std::string g = Write("g.json", kIdentityGraph);
  testing::CliResult r = Run("run '" + g + "' --input x=int32:z");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("bad int32 value 'z'"));
  EXPECT_THAT(r.err, Not(HasSubstr("transactions ok")));
  r = Run("run '" + g + "' --input x=int32:1 --output '" + dir_ +
          "/no/such/dir/out.jsonl'");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--output " + dir_ + "/no/such/dir/out.jsonl"));
  EXPECT_THAT(r.err, Not(HasSubstr("transactions ok")));
}

TEST_F(CliOutputTest, SaysItIsDeploying) {
  std::string g = Write("g.json", kIdentityGraph);
  testing::CliResult r =
      Run("run '" + g + "' --devices 3,6,7 --input x=int8:1");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("hflow run: deploying graph 'ident' (1 "
                               "instances on devices 3) ..."));
}

TEST_F(CliOutputTest, BuiltinArityIsRefusedNamingTheNode) {
  std::string g = Write("bad.json", kOneInputAdd);
  testing::CliResult r = Run("run '" + g + "' --input a=int32:1");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("node 'sum': _BuiltIn_Add takes 2 inputs"));
  EXPECT_THAT(r.err, Not(HasSubstr("transactions ok")));
  r = Run("validate '" + g + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("node 'sum': _BuiltIn_Add takes 2 inputs"));
}

TEST_F(CliOutputTest, DeviceMemoryTooSmallForThePlan) {
  std::string g = Write("g.json", kIdentityGraph);
  std::string cluster =
      Write("cluster.json", R"({"devices":[2,3,4,5],"memory_bytes":"64MB"})");
  testing::CliResult r =
      Run("validate '" + g + "' --cluster '" + cluster + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("device 2 has 67108864 bytes of memory"));
  EXPECT_THAT(r.err, HasSubstr("the mbuf pool of 268435456 bytes "
                               "(Options::mbuf_pool_bytes, hflow run "
                               "--mbuf-pool-bytes) for the messages of "
                               "'id#0' needs more"));
  r = Run("run '" + g + "' --cluster '" + cluster + "' --input x=int8:1");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("device 2 has 67108864 bytes"));
}

}  // namespace
}  // namespace hflow
