// Loading a cluster's credentials (net/credentials.h).
//
// Thread-safety: reentrant.
#include "net/credentials.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

namespace hflow::net {
namespace {

Status ReadFile(const std::string& path, std::string_view what,
                std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::NotFound(std::string(what) + " " + path +
                            ": cannot be read; check the path and that this "
                            "user may read it");
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  if (out->empty()) {
    return Status::InvalidArgument(std::string(what) + " " + path +
                                   ": the file is empty");
  }
  return Status::OK();
}

// A secret (token, private key): only its owner may read the file, as ssh
// demands of its keys.
Status ReadSecretFile(const std::string& path, std::string_view what,
                      std::string* out) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
    return Status::PermissionDenied(
        std::string(what) + " " + path +
        ": group or others may read it; only its owner may (chmod 600 " + path +
        ")");
  }
  return ReadFile(path, what, out);
}

Status ReadToken(const std::string& path, std::string* token) {
  HFLOW_RETURN_IF_ERROR(ReadSecretFile(path, "token file", token));
  // One line; surrounding whitespace (an editor's newline) is not part of it.
  const size_t b = token->find_first_not_of(" \t\r\n");
  const size_t e = token->find_last_not_of(" \t\r\n");
  *token = b == std::string::npos ? "" : token->substr(b, e - b + 1);
  if (token->size() < 16) {
    return Status::InvalidArgument(
        "token file " + path + ": the token has " +
        std::to_string(token->size()) +
        " characters; use at least 16 (e.g. head -c 32 /dev/urandom | "
        "base64 > " +
        path + ")");
  }
  if (token->find_first_of("\r\n") != std::string::npos) {
    return Status::InvalidArgument("token file " + path +
                                   ": the token must be one line");
  }
  return Status::OK();
}

}  // namespace

std::string Credentials::Describe() const {
  std::string s;
  if (HasToken()) s = "token file " + files.token_file;
  if (HasTls()) {
    s +=
        std::string(s.empty() ? "" : " and ") + "TLS (CA " + files.tls_ca + ")";
  }
  return s.empty() ? "no credentials" : s;
}

Status LoadCredentials(const CredentialFiles& files, Credentials* out) {
  Credentials c;
  c.files = files;
  if (!files.token_file.empty()) {
    HFLOW_RETURN_IF_ERROR(ReadToken(files.token_file, &c.token));
  }
  const int tls = int(!files.tls_ca.empty()) + int(!files.tls_cert.empty()) +
                  int(!files.tls_key.empty());
  if (tls != 0 && tls != 3) {
    return Status::InvalidArgument(
        "TLS needs three files, the CA, this side's certificate and its "
        "key; got " +
        std::string(files.tls_ca.empty() ? "" : "the CA ") +
        std::string(files.tls_cert.empty() ? "" : "the certificate ") +
        std::string(files.tls_key.empty() ? "" : "the key ") +
        "only: give all three");
  }
  if (tls == 3) {
    HFLOW_RETURN_IF_ERROR(ReadFile(files.tls_ca, "TLS CA file", &c.ca_pem));
    HFLOW_RETURN_IF_ERROR(
        ReadFile(files.tls_cert, "TLS certificate file", &c.cert_pem));
    HFLOW_RETURN_IF_ERROR(
        ReadSecretFile(files.tls_key, "TLS key file", &c.key_pem));
  }
  *out = std::move(c);
  return Status::OK();
}

bool TokensEqual(std::string_view a, std::string_view b) {
  // Length leaks (tokens have a public minimum); content does not.
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = a.size() < b.size() ? a.size() : b.size();
  for (size_t i = 0; i < n; ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return diff == 0;
}

}  // namespace hflow::net
