#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "operators/operator.hpp"

namespace weir::ops {

/// Writes an operator's checkpointed state: little-endian 64-bit integers
/// and length-prefixed strings, appended to one byte string.
class state_writer {
public:
  void int64(int64_t x) {
    auto u = static_cast<uint64_t>(x);
    for (int i = 0; i < 8; ++i)
      out_.push_back(static_cast<char>((u >> (8 * i)) & 0xff));
  }
  void text(std::string_view s) {
    int64(static_cast<int64_t>(s.size()));
    out_.append(s.data(), s.size());
  }
  std::string take() { return std::move(out_); }

private:
  std::string out_;
};

/// Reads what a state_writer wrote; a short or malformed input throws
/// operator_error naming `what`.
class state_reader {
public:
  state_reader(const std::string& in, std::string what)
    : in_(in), what_(std::move(what)) {
  }
  int64_t int64() {
    need(8);
    uint64_t u = 0;
    for (int i = 0; i < 8; ++i)
      u |= static_cast<uint64_t>(static_cast<unsigned char>(in_[pos_ + i]))
           << (8 * i);
    pos_ += 8;
    return static_cast<int64_t>(u);
  }
  std::string text() {
    auto n = int64();
    if (n < 0)
      fail();
    need(static_cast<size_t>(n));
    auto s = in_.substr(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return s;
  }
  bool done() const { return pos_ == in_.size(); }

private:
  void need(size_t n) {
    if (in_.size() - pos_ < n)
      fail();
  }
  [[noreturn]] void fail() {
    throw operator_error("cannot restore the state of " + what_
                         + ": it is truncated or malformed");
  }

  const std::string& in_;
  std::string what_;
  size_t pos_ = 0;
};

} // namespace weir::ops
