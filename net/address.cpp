#include "net/address.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <strings.h>

namespace weir::net {

bool is_loopback_address(const std::string& address) {
  if (::strcasecmp(address.c_str(), "localhost") == 0)
    return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, address.c_str(), &v4) == 1)
    return (ntohl(v4.s_addr) >> 24) == 127; // 127.0.0.0/8
  in6_addr v6{};
  return ::inet_pton(AF_INET6, address.c_str(), &v6) == 1
         && IN6_IS_ADDR_LOOPBACK(&v6);
}

} // namespace weir::net
