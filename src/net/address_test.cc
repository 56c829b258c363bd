#include "net/address.h"

#include <gtest/gtest.h>

namespace hflow::net {
namespace {

TEST(AddressTest, ParsesIpv4NamesAndBracketedIpv6) {
  HostAddress a;
  ASSERT_TRUE(ParseHostAddress("127.0.0.2:7000", false, "x", &a).ok());
  EXPECT_EQ(a.host, "127.0.0.2");
  EXPECT_EQ(a.port, 7000);
  EXPECT_EQ(a.ToString(), "127.0.0.2:7000");
  ASSERT_TRUE(ParseHostAddress("node-1.example:65535", false, "x", &a).ok());
  EXPECT_EQ(a.host, "node-1.example");
  ASSERT_TRUE(ParseHostAddress("[::1]:7001", false, "x", &a).ok());
  EXPECT_EQ(a.host, "::1");
  EXPECT_EQ(a.ToString(), "[::1]:7001");
  ASSERT_TRUE(ParseHostAddress("127.0.0.2:0", true, "--listen", &a).ok());
  EXPECT_EQ(a.port, 0);
}

TEST(AddressTest, RefusesWhatIsNotAnAddressNamingTheArgument) {
  HostAddress a;
  for (const char* bad :
       {"127.0.0.2", "127.0.0.2:", "127.0.0.2:x", "127.0.0.2:70000", ":7000",
        "::1:7000", "[::1]7000", "a b:7000", "127.0.0.2:123456"}) {
    Status s = ParseHostAddress(bad, true, "--listen", &a);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(s.message().rfind("--listen: ", 0), 0u) << s.message();
  }
  // Port 0 only where the system may pick one.
  Status s = ParseHostAddress("127.0.0.2:0", false, "ipaddr", &a);
  EXPECT_NE(s.message().find("port 0 is out of range; use 1 to 65535"),
            std::string::npos)
      << s.message();
  EXPECT_FALSE(MakeHostAddress("10.0.0.1", 65536, "port", &a).ok());
  EXPECT_TRUE(MakeHostAddress("10.0.0.1", 1, "port", &a).ok());
}

}  // namespace
}  // namespace hflow::net
