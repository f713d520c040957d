#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <caf/meta/type_name.hpp>

#include "messages/ids.hpp"

namespace weir {

/// Where a taskmanager's data port is (taskmanager.host,
/// taskmanager.data.port): announced when it registers, handed to the
/// subtasks that exchange with its subtasks. A port of 0: it has none (an
/// embedded taskmanager), and its batches travel as messages.
struct data_endpoint {
  resource_id tm;
  std::string host;
  uint16_t port = 0;

  bool valid() const { return port != 0; }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, data_endpoint& x) {
  return f(caf::meta::type_name("data_endpoint"), x.tm, x.host, x.port);
}

inline bool operator==(const data_endpoint& a, const data_endpoint& b) {
  return a.tm == b.tm && a.host == b.host && a.port == b.port;
}

/// What a frame on a data connection carries
/// (docs/architecture.md § Data plane).
enum class frame_kind : uint8_t {
  /// First frame of each side: the protocol and the sender's taskmanager.
  hello = 1,
  /// A row batch for a consumer (payload: the batch's wire form).
  batch = 2,
  /// A checkpoint barrier (value: its id; detail: its kind).
  barrier = 3,
  /// The channel ended after `value` numbered events.
  end = 4,
  /// `value` credits for a producer's output `port`, from consumer subtask
  /// `channel`.
  credit = 5,
  /// `value` events of the channel wait for credit at the producer.
  backlog = 6,
  /// A watermark (value: its event time; detail: 1 when the channel idles).
  watermark = 7,
};

/// A frame's fixed header, 64 bytes little-endian on the wire, followed by
/// `length` payload bytes. Batches, barriers and ends go `to` a consumer
/// attempt `from` a producer one, on the consumer's input `channel`, sent
/// through the producer's output `port`, numbered `seq`; a credit goes `to`
/// the producer.
struct frame_header {
  static constexpr size_t size = 64;

  frame_kind kind = frame_kind::hello;
  uint8_t detail = 0;
  uint32_t length = 0;
  execution_attempt_id to;
  execution_attempt_id from;
  int32_t channel = 0;
  int32_t port = 0;
  int64_t seq = 0;
  int64_t value = 0;

  /// Writes the 64 header bytes to `out`.
  void write(char* out) const;
  /// Reads 64 header bytes; nothing when the kind is unknown or the
  /// reserved bytes are not zero (bytes from the network are not trusted).
  static std::optional<frame_header> read(const char* in);
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, frame_header& x) {
  return f(caf::meta::type_name("frame_header"), x.kind, x.detail, x.length,
           x.to, x.from, x.channel, x.port, x.seq, x.value);
}

/// The hello's payload: the protocol's name and version, then the sender's
/// taskmanager id.
std::string hello_payload(const resource_id& tm);

/// The taskmanager a hello names; nothing when it is not a hello of this
/// protocol version (or names no taskmanager).
std::optional<resource_id> read_hello(std::string_view payload);

/// A hello's payload is at most this long.
inline constexpr size_t max_hello_size = 512;

} // namespace weir
