#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "messages/binary_codec.hpp"
#include "operators/operator.hpp"

namespace weir::ops {

/// A record's value (not its key or time) as keyed-state bytes: 'i' and 8
/// bytes, or 't' and the text; a reduce's accumulator (window and
/// rolling). decode_record_value throws operator_error on other bytes.
std::string encode_record_value(const record& r);
record decode_record_value(const std::string& bytes);

/// Writes an operator's checkpointed state (weir's binary codec).
class state_writer {
public:
  void int64(int64_t x) { append_int64(out_, x); }
  void text(std::string_view s) { append_text(out_, s); }
  std::string take() { return std::move(out_); }

private:
  std::string out_;
};

/// Reads what a state_writer wrote; a short or malformed input throws
/// operator_error naming `what`.
class state_reader {
public:
  state_reader(const std::string& in, std::string what)
    : reader_{in}, what_(std::move(what)) {
  }
  int64_t int64() { return checked(reader_.int64()); }
  std::string text() { return checked(reader_.text()); }
  bool done() const { return reader_.done(); }

private:
  template <class T>
  T checked(T x) {
    if (!reader_.ok)
      throw operator_error("cannot restore the state of " + what_
                           + ": it is truncated or malformed");
    return x;
  }

  binary_reader reader_;
  std::string what_;
};

} // namespace weir::ops
