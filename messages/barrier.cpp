#include "messages/barrier.hpp"

namespace weir {

std::string to_string(checkpoint_kind x) {
  switch (x) {
    case checkpoint_kind::checkpoint:
      return "checkpoint";
    case checkpoint_kind::full_checkpoint:
      return "full_checkpoint";
    case checkpoint_kind::savepoint:
      return "savepoint";
  }
  return "checkpoint_kind(" + std::to_string(static_cast<int>(x)) + ")";
}

std::string to_string(savepoint_mode x) {
  switch (x) {
    case savepoint_mode::keep_running:
      return "keep_running";
    case savepoint_mode::stop:
      return "stop";
    case savepoint_mode::stop_and_drain:
      return "stop_and_drain";
  }
  return "savepoint_mode(" + std::to_string(static_cast<int>(x)) + ")";
}

} // namespace weir
