#include "net/credentials.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

namespace hflow::net {
namespace {

class CredentialsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "hflow_creds_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    (void)std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  std::string Write(const std::string& name, const std::string& text,
                    mode_t mode) {
    const std::string p = dir_ + "/" + name;
    std::ofstream(p) << text;
    ::chmod(p.c_str(), mode);
    return p;
  }
  std::string dir_;
};

TEST_F(CredentialsTest, ReadsATokenWithoutItsNewline) {
  CredentialFiles f;
  f.token_file = Write("t", "  0123456789abcdef0123\n", 0600);
  Credentials c;
  ASSERT_TRUE(LoadCredentials(f, &c).ok());
  EXPECT_EQ(c.token, "0123456789abcdef0123");
  EXPECT_TRUE(c.HasToken());
  EXPECT_FALSE(c.HasTls());
  EXPECT_EQ(c.Describe(), "token file " + f.token_file);
}

TEST_F(CredentialsTest, RefusesTokenFilesOthersMayReadShortOrMissing) {
  Credentials c;
  CredentialFiles f;
  f.token_file = Write("open", "0123456789abcdef0123", 0640);
  Status s = LoadCredentials(f, &c);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("chmod 600 " + f.token_file), std::string::npos);
  f.token_file = Write("short", "abc", 0600);
  s = LoadCredentials(f, &c);
  EXPECT_NE(s.message().find("the token has 3 characters; use at least 16"),
            std::string::npos)
      << s.message();
  f.token_file = Write("two", "0123456789abcdef\n0123456789abcdef", 0600);
  EXPECT_NE(LoadCredentials(f, &c).message().find("must be one line"),
            std::string::npos);
  f.token_file = Write("empty", "", 0600);
  EXPECT_NE(LoadCredentials(f, &c).message().find("the file is empty"),
            std::string::npos);
  f.token_file = dir_ + "/missing";
  s = LoadCredentials(f, &c);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find(f.token_file), std::string::npos);
}

TEST_F(CredentialsTest, TlsNeedsAllThreeFiles) {
  Credentials c;
  CredentialFiles f;
  f.tls_ca = Write("ca.pem", "CA", 0644);
  f.tls_key = Write("k.pem", "KEY", 0600);
  Status s = LoadCredentials(f, &c);
  EXPECT_NE(s.message().find("TLS needs three files"), std::string::npos);
  EXPECT_NE(s.message().find("got the CA the key only"), std::string::npos)
      << s.message();
  f.tls_cert = Write("c.pem", "CERT", 0644);
  // A private key others may read is refused, as a token file is.
  CredentialFiles open = f;
  open.tls_key = Write("open.key", "KEY", 0644);
  s = LoadCredentials(open, &c);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("chmod 600 " + open.tls_key), std::string::npos);
  ASSERT_TRUE(LoadCredentials(f, &c).ok());
  EXPECT_EQ(c.ca_pem, "CA");
  EXPECT_EQ(c.cert_pem, "CERT");
  EXPECT_EQ(c.key_pem, "KEY");
  EXPECT_TRUE(c.HasTls());
}

TEST(TokensEqualTest, ComparesWholeTokens) {
  EXPECT_TRUE(TokensEqual("abcdef", "abcdef"));
  EXPECT_FALSE(TokensEqual("abcdef", "abcdeg"));
  EXPECT_FALSE(TokensEqual("abcdef", "abcde"));
  EXPECT_FALSE(TokensEqual("abcde", "abcdef"));
  EXPECT_FALSE(TokensEqual("", "a"));
  EXPECT_TRUE(TokensEqual("", ""));
}

}  // namespace
}  // namespace hflow::net
