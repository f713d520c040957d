#include "messages/ids.hpp"

#include <random>

namespace weir {

namespace {

std::mt19937_64& id_engine() {
  thread_local std::mt19937_64 engine{[] {
    std::random_device rd;
    return (uint64_t{rd()} << 32) ^ rd();
  }()};
  return engine;
}

uint64_t random_word() {
  return id_engine()();
}

int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

} // namespace

void seed_random_ids(uint64_t seed) {
  id_engine().seed(seed);
}

template <class Tag>
uuid_id<Tag> uuid_id<Tag>::random() {
  uuid_id result;
  do {
    result.hi = random_word();
    result.lo = random_word();
  } while (!result.valid());
  return result;
}

template <class Tag>
std::optional<uuid_id<Tag>> uuid_id<Tag>::parse(std::string_view text) {
  if (text.size() != 32)
    return std::nullopt;
  uuid_id result;
  for (size_t i = 0; i < 32; ++i) {
    auto v = hex_value(text[i]);
    if (v < 0)
      return std::nullopt;
    auto& word = i < 16 ? result.hi : result.lo;
    word = (word << 4) | static_cast<uint64_t>(v);
  }
  return result;
}

template <class Tag>
std::string uuid_id<Tag>::to_string() const {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out(32, '0');
  for (int i = 0; i < 16; ++i) {
    out[15 - i] = digits[(hi >> (4 * i)) & 0xf];
    out[31 - i] = digits[(lo >> (4 * i)) & 0xf];
  }
  return out;
}

template struct uuid_id<job_id_tag>;
template struct uuid_id<allocation_id_tag>;
template struct uuid_id<attempt_id_tag>;
template struct uuid_id<job_master_id_tag>;
template struct uuid_id<resource_manager_id_tag>;

} // namespace weir
