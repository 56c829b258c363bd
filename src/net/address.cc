// ADDR:PORT parsing for hflowd and the driver (net/address.h).
//
// Thread-safety: reentrant.
#include "net/address.h"

#include <cctype>

namespace hflow::net {
namespace {

bool ValidHost(std::string_view h, bool v6) {
  if (h.empty()) return false;
  for (char c : h) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' ||
                    c == '-' || (v6 && c == ':');
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string HostAddress::ToString() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Status MakeHostAddress(std::string_view host, int64_t port,
                       std::string_view what, HostAddress* out) {
  const bool v6 = host.find(':') != std::string_view::npos;
  if (!ValidHost(host, v6)) {
    return Status::InvalidArgument(
        std::string(what) + ": \"" + std::string(host) +
        "\" is not an address; write an IPv4 address, a host name or an "
        "IPv6 address");
  }
  if (port < 1 || port > 65535) {
    return Status::InvalidArgument(std::string(what) + ": port " +
                                   std::to_string(port) +
                                   " is out of range; use 1 to 65535");
  }
  out->host = std::string(host);
  out->port = static_cast<uint16_t>(port);
  return Status::OK();
}

Status ParseHostAddress(std::string_view text, bool allow_any_port,
                        std::string_view what, HostAddress* out) {
  const std::string form =
      "; write ADDR:PORT, e.g. 127.0.0.2:7000 (IPv6: [::1]:7000)";
  std::string_view host, port;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find("]:");
    if (close == std::string_view::npos) {
      return Status::InvalidArgument(std::string(what) + ": \"" +
                                     std::string(text) + "\"" + form);
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos ||
        text.find(':') != colon) {  // bare IPv6 is ambiguous
      return Status::InvalidArgument(std::string(what) + ": \"" +
                                     std::string(text) + "\"" + form);
    }
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  int64_t value = 0;
  if (port.empty() || port.size() > 5) value = -1;
  for (char c : port) {
    if (!std::isdigit(static_cast<unsigned char>(c))) value = -1;
    if (value >= 0) value = value * 10 + (c - '0');
  }
  if (value < 0) {
    return Status::InvalidArgument(
        std::string(what) + ": \"" + std::string(text) + "\": the port \"" +
        std::string(port) + "\" is not a number" + form);
  }
  if (value == 0 && allow_any_port) {
    HFLOW_RETURN_IF_ERROR(MakeHostAddress(host, 1, what, out));
    out->port = 0;
    return Status::OK();
  }
  return MakeHostAddress(host, value, what, out);
}

}  // namespace hflow::net
