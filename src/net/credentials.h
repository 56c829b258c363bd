// Credentials of a multi-host cluster: what hflowd demands of every call and
// what the driver presents. Two kinds, usable together:
//   - a shared token in a file both sides read (sent as call metadata; on a
//     network that is not trusted use it under TLS, which encrypts it);
//   - mutual TLS: a CA both trust, and each side's certificate and key (the
//     daemon's certificate names the address the driver dials).
// Files are read once, here, so a daemon never serves with half of them.
//
// Thread-safety: plain values; the functions are reentrant.
#ifndef HFLOW_NET_CREDENTIALS_H_
#define HFLOW_NET_CREDENTIALS_H_

#include <string>
#include <string_view>

#include "hflow/status.h"

namespace hflow::net {

struct CredentialFiles {
  std::string token_file;
  std::string tls_ca;    // PEM: the CA that signed both sides' certificates
  std::string tls_cert;  // PEM: this side's certificate
  std::string tls_key;   // PEM: this side's private key

  bool Empty() const {
    return token_file.empty() && tls_ca.empty() && tls_cert.empty() &&
           tls_key.empty();
  }
};

struct Credentials {
  std::string token;                      // empty: no token
  std::string ca_pem, cert_pem, key_pem;  // all empty: no TLS
  CredentialFiles files;                  // where they came from (messages)

  bool HasToken() const { return !token.empty(); }
  bool HasTls() const { return !ca_pem.empty(); }
  bool Empty() const { return !HasToken() && !HasTls(); }
  // "token file /etc/hflow/token and TLS (ca.pem)": for logs and errors.
  std::string Describe() const;
};

// Reads the files `files` names. Errors name the file and say what to do:
// a missing or empty file; a token or TLS key file that group or others
// may read (chmod 600, as ssh demands of its keys); TLS files given only in
// part (all three are needed).
Status LoadCredentials(const CredentialFiles& files, Credentials* out);

// Compares two tokens in time independent of where they differ.
bool TokensEqual(std::string_view a, std::string_view b);

// The metadata key the token travels under.
inline constexpr char kTokenMetadataKey[] = "x-hflow-token";

}  // namespace hflow::net

#endif  // HFLOW_NET_CREDENTIALS_H_
