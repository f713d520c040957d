#pragma once

// The web dashboard's files (web/), built into the binary: meson runs
// scripts/embed_assets.py, which writes their bytes into a generated
// source (docs/operations.md § Web dashboard).

#include <string_view>

namespace weir::web {

/// One file of web/.
struct asset {
  std::string_view path;         ///< relative to web/, e.g. "app.js"
  std::string_view content_type; ///< from its extension
  std::string_view etag;         ///< quoted hash of its bytes
  std::string_view body;         ///< its bytes
};

/// The file at `path` (relative to web/), or nullptr.
const asset* find_asset(std::string_view path);

} // namespace weir::web
