#include "metrics/prometheus_text.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace weir {

namespace {

/// `text` with backslashes and newlines escaped, and double quotes too
/// when `quotes` (label values; HELP texts keep them).
std::string escaped(std::string_view text, bool quotes) {
  std::string out;
  for (char c : text) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else if (c == '"' && quotes)
      out += "\\\"";
    else
      out += c;
  }
  return out;
}

std::string format_double(double x) {
  if (std::isnan(x))
    return "NaN";
  if (std::isinf(x))
    return x > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", x);
}

} // namespace

std::string prometheus_text::escape_label(std::string_view value) {
  return escaped(value, true);
}

void prometheus_text::family(const std::string& name, kind k,
                             std::string_view help) {
  if (families_.count(name) > 0)
    return;
  order_.push_back(name);
  families_[name] = family_lines{k, escaped(help, false), {}};
}

void prometheus_text::add(const std::string& name, const metric_labels& labels,
                          double value) {
  add_text(name, labels, format_double(value));
}

void prometheus_text::add(const std::string& name, const metric_labels& labels,
                          int64_t value) {
  add_text(name, labels, std::to_string(value));
}

void prometheus_text::add_text(const std::string& name,
                               const metric_labels& labels,
                               const std::string& value) {
  auto i = families_.find(name);
  if (i == families_.end())
    throw std::logic_error("prometheus_text: undeclared family " + name);
  std::string line = name;
  if (!labels.empty()) {
    line += '{';
    for (size_t k = 0; k < labels.size(); ++k) {
      if (k > 0)
        line += ',';
      line += labels[k].first + "=\"" + escape_label(labels[k].second) + '"';
    }
    line += '}';
  }
  line += ' ' + value;
  i->second.samples.push_back(std::move(line));
}

std::string prometheus_text::str() const {
  std::string out;
  for (auto& name : order_) {
    auto& f = families_.at(name);
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, f.help, name,
                       f.type == kind::counter ? "counter" : "gauge");
    for (auto& s : f.samples)
      out += s + '\n';
  }
  return out;
}

} // namespace weir
