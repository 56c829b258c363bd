// The cluster config's multi-host fields: each node's ipaddr and port
// (GE's) and hflow's "credentials".
#include <gtest/gtest.h>

#include "hflow/cluster.h"

namespace hflow {
namespace {

// Multi-host fields: each node's ipaddr and port (GE's), hflow's
// "credentials" with paths taken from the cluster file's folder.
TEST(ClusterConfigHostsTest, AddressesAndCredentials) {
  ClusterConfig cfg;
  ASSERT_TRUE(ParseClusterConfig(R"({"cluster":[{"cluster_nodes":[
      {"node_id":0,"is_local":true,"item_list":[{"device_id":0}]},
      {"node_id":1,"ipaddr":"10.0.0.2","port":7000,
       "item_list":[{"device_id":2},{"device_id":3}]}]}],
      "credentials":{"token_file":"token","tls_ca":"/pki/ca.pem"}})",
                                 "/etc/hflow/cluster.json", &cfg)
                  .ok());
  ASSERT_EQ(cfg.RemoteNodes().size(), 1u);
  EXPECT_EQ(cfg.RemoteNodes()[0]->node_id, 1);
  EXPECT_EQ(cfg.RemoteNodes()[0]->ipaddr, "10.0.0.2");
  EXPECT_EQ(cfg.RemoteNodes()[0]->port, 7000);
  EXPECT_EQ(cfg.LocalNode().port, 0);
  EXPECT_EQ(cfg.credentials.token_file, "/etc/hflow/token");
  EXPECT_EQ(cfg.credentials.tls_ca, "/pki/ca.pem");
  EXPECT_TRUE(cfg.credentials.tls_cert.empty());
  // The compact form takes credentials too (a driver with one local host
  // has no use for them, but one file can serve both).
  ASSERT_TRUE(ParseClusterConfig(R"({"devices":[2],
      "credentials":{"token_file":"/t"}})",
                                 "c.json", &cfg)
                  .ok());
  EXPECT_EQ(cfg.credentials.token_file, "/t");
}

TEST(ClusterConfigHostsTest, RejectsBadAddressesNamingTheField) {
  ClusterConfig cfg;
  auto parse = [&](const std::string& node1) {
    return ParseClusterConfig(
        R"({"cluster":[{"cluster_nodes":[{"node_id":0,"is_local":true,
        "ipaddr":"10.0.0.1","port":7000,"item_list":[{"device_id":0}]},)" +
            node1 + "]}]}",
        "cluster.json", &cfg);
  };
  Status s =
      parse(R"({"node_id":1,"port":70000,"item_list":[{"device_id":0}]})");
  EXPECT_NE(s.message().find("cluster[0].cluster_nodes[1].port"),
            std::string::npos)
      << s.message();
  s = parse(R"({"node_id":1,"ipaddr":7,"item_list":[{"device_id":0}]})");
  EXPECT_NE(s.message().find("cluster[0].cluster_nodes[1].ipaddr"),
            std::string::npos)
      << s.message();
  s = parse(R"({"node_id":1,"ipaddr":"10.0.0.1","port":7000,
               "item_list":[{"device_id":0}]})");
  EXPECT_NE(s.message().find("cluster[0].cluster_nodes[1].port: node 1 has "
                             "the address of node 0 (10.0.0.1:7000)"),
            std::string::npos)
      << s.message();
  s = ParseClusterConfig(R"({"devices":[2],"credentials":{"token":"x"}})",
                         "c.json", &cfg);
  EXPECT_NE(s.message().find("credentials"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("token"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace hflow
