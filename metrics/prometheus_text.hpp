#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace weir {

/// Label names and values of one sample, in the order they are written.
using metric_labels = std::vector<std::pair<std::string, std::string>>;

/// Prometheus' text exposition format (version 0.0.4): metric families with
/// their HELP and TYPE lines, each family's samples under them, label
/// values and help texts escaped. Samples may be added in any order; a
/// family is written where it was first declared. Plain class.
class prometheus_text {
public:
  enum class kind { gauge, counter };

  /// Declares family `name` (again: no change).
  void family(const std::string& name, kind k, std::string_view help);

  /// Adds a sample to family `name` (declared before).
  void add(const std::string& name, const metric_labels& labels, double value);
  void add(const std::string& name, const metric_labels& labels,
           int64_t value);

  /// The exposition, every line ending in "\n".
  std::string str() const;

  /// `value` escaped for a label value (backslash, double quote, newline).
  static std::string escape_label(std::string_view value);

private:
  struct family_lines {
    kind type = kind::gauge;
    std::string help;
    std::vector<std::string> samples;
  };

  void add_text(const std::string& name, const metric_labels& labels,
                const std::string& value);

  std::vector<std::string> order_;
  std::map<std::string, family_lines> families_;
};

} // namespace weir
