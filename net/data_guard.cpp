#include "net/data_guard.hpp"

#include <string_view>

#include <fmt/format.h>

#include "messages/errors.hpp"

namespace weir::net {

namespace {

caf::error violation(std::string what) {
  return make_error(errc::protocol_violation, std::move(what));
}

} // namespace

caf::error data_guard::check(const char* data, size_t size) {
  if (expected_ > 0) { // the payload the last header announced
    if (size != expected_)
      return violation(fmt::format("read {} bytes of a {}-byte payload",
                                   size, expected_));
    expected_ = 0;
    if (last_->kind == frame_kind::hello) {
      auto who = read_hello(std::string_view{data, size});
      if (!who)
        return violation("its hello is not one of weir-data/1");
      peer_ = std::move(who);
    }
    return caf::none;
  }
  if (size != frame_header::size)
    return violation(fmt::format("read {} bytes where a {}-byte frame header "
                                 "was due",
                                 size, frame_header::size));
  auto h = frame_header::read(data);
  if (!h)
    return violation("a frame of an unknown kind, or with reserved bytes set");
  bool hello = h->kind == frame_kind::hello;
  if (hello != !peer_.has_value())
    return violation(hello ? "a second hello" : "a frame before its hello");
  if (hello && (h->length == 0 || h->length > max_hello_size))
    return violation(fmt::format("a hello of {} bytes", h->length));
  bool header_only = h->kind == frame_kind::end
                     || h->kind == frame_kind::credit
                     || h->kind == frame_kind::backlog
                     || h->kind == frame_kind::watermark;
  if (header_only && h->length != 0)
    return violation("an end, credit, backlog or watermark frame with a "
                     "payload");
  if (h->kind == frame_kind::watermark && h->detail > 1)
    return violation(fmt::format("a watermark frame with detail {}",
                                 h->detail));
  if ((h->kind == frame_kind::credit || h->kind == frame_kind::backlog)
      && (h->value <= 0 || h->value > INT32_MAX))
    return violation(fmt::format("a credit or backlog of {}", h->value));
  if (h->kind == frame_kind::batch && h->length == 0)
    return violation("a batch frame without a batch");
  if (h->length > max_payload_)
    return violation(fmt::format("a frame of {} bytes, over the limit of {} "
                                 "(rpc.max-message-size)",
                                 h->length, max_payload_));
  expected_ = h->length;
  last_ = h;
  return caf::none;
}

} // namespace weir::net
