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

} // namespace weir
