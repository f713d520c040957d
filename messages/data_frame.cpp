#include "messages/data_frame.hpp"

namespace weir {

namespace {

constexpr std::string_view hello_prefix = "weir-data/1 ";

void put(char*& out, uint64_t x, int bytes) {
  for (int i = 0; i < bytes; ++i)
    *out++ = static_cast<char>((x >> (8 * i)) & 0xff);
}

uint64_t get(const char*& in, int bytes) {
  uint64_t x = 0;
  for (int i = 0; i < bytes; ++i)
    x |= static_cast<uint64_t>(static_cast<unsigned char>(*in++)) << (8 * i);
  return x;
}

} // namespace

void frame_header::write(char* out) const {
  put(out, static_cast<uint8_t>(kind), 1);
  put(out, detail, 1);
  put(out, 0, 2);
  put(out, length, 4);
  put(out, to.hi, 8);
  put(out, to.lo, 8);
  put(out, from.hi, 8);
  put(out, from.lo, 8);
  put(out, static_cast<uint32_t>(channel), 4);
  put(out, static_cast<uint32_t>(port), 4);
  put(out, static_cast<uint64_t>(seq), 8);
  put(out, static_cast<uint64_t>(value), 8);
}

std::optional<frame_header> frame_header::read(const char* in) {
  frame_header h;
  auto kind = get(in, 1);
  if (kind < 1 || kind > 7)
    return std::nullopt;
  h.kind = static_cast<frame_kind>(kind);
  h.detail = static_cast<uint8_t>(get(in, 1));
  if (get(in, 2) != 0)
    return std::nullopt;
  h.length = static_cast<uint32_t>(get(in, 4));
  h.to.hi = get(in, 8);
  h.to.lo = get(in, 8);
  h.from.hi = get(in, 8);
  h.from.lo = get(in, 8);
  h.channel = static_cast<int32_t>(static_cast<uint32_t>(get(in, 4)));
  h.port = static_cast<int32_t>(static_cast<uint32_t>(get(in, 4)));
  h.seq = static_cast<int64_t>(get(in, 8));
  h.value = static_cast<int64_t>(get(in, 8));
  return h;
}

std::string hello_payload(const resource_id& tm) {
  return std::string{hello_prefix} + tm.value;
}

std::optional<resource_id> read_hello(std::string_view payload) {
  if (payload.size() > max_hello_size
      || payload.substr(0, hello_prefix.size()) != hello_prefix
      || payload.size() == hello_prefix.size())
    return std::nullopt;
  return resource_id{std::string{payload.substr(hello_prefix.size())}};
}

} // namespace weir
