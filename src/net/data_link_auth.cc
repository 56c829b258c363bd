// Handshake proofs of the data links (net/data_link_auth.h).
//
// Thread-safety: reentrant (getrandom, OpenSSL's one-shot MAC).
#include "net/data_link_auth.h"

#include <openssl/evp.h>
#include <sys/random.h>

#include <cstring>
#include <string>

namespace hflow::net {

Status MakeNonce(Nonce* out) {
  size_t got = 0;
  while (got < out->size()) {
    const ssize_t n = getrandom(out->data() + got, out->size() - got, 0);
    if (n < 0) return Status::Internal("getrandom failed");
    got += static_cast<size_t>(n);
  }
  return Status::OK();
}

bool MakeProof(std::string_view key, std::string_view role, const Nonce& first,
               const Nonce& second, Proof* out) {
  std::string msg(role);
  msg.append(reinterpret_cast<const char*>(first.data()), first.size());
  msg.append(reinterpret_cast<const char*>(second.data()), second.size());
  size_t len = 0;
  return EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr, key.data(),
                   key.size(),
                   reinterpret_cast<const unsigned char*>(msg.data()),
                   msg.size(), out->data(), out->size(), &len) != nullptr &&
         len == out->size();
}

}  // namespace hflow::net
