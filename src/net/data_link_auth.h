// The data links' handshake proofs: each side proves it holds the session
// key without sending it, over nonces both sides chose (HMAC-SHA256 from
// OpenSSL), so neither a listener impersonating a daemon nor a replayed
// hello learns or reuses anything.
//
//   client -> kHello     credits, nonce_c
//   server -> kChallenge nonce_s, HMAC(key, "hflow-data-server" nonce_c
//   nonce_s) client -> kProof     HMAC(key, "hflow-data-client" nonce_s
//   nonce_c) server -> kWelcome   credits            (or kRefuse)
//
// Thread-safety: reentrant.
#ifndef HFLOW_NET_DATA_LINK_AUTH_H_
#define HFLOW_NET_DATA_LINK_AUTH_H_

#include <array>
#include <string>
#include <string_view>

#include "hflow/status.h"

namespace hflow::net {

inline constexpr size_t kNonceBytes = 16;
inline constexpr size_t kProofBytes = 32;
// Shorter keys are refused: a key is a secret, not a password.
inline constexpr size_t kMinKeyBytes = 16;

using Nonce = std::array<unsigned char, kNonceBytes>;
using Proof = std::array<unsigned char, kProofBytes>;

Status MakeNonce(Nonce* out);

// HMAC-SHA256(key, role || first || second); false when OpenSSL fails (the
// handshake then fails: no proof is ever made up).
bool MakeProof(std::string_view key, std::string_view role, const Nonce& first,
               const Nonce& second, Proof* out);

inline constexpr char kServerRole[] = "hflow-data-server";
inline constexpr char kClientRole[] = "hflow-data-client";

}  // namespace hflow::net

#endif  // HFLOW_NET_DATA_LINK_AUTH_H_
