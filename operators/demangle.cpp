#include "operators/demangle.hpp"

#include <cstdlib>
#include <exception>
#include <memory>
#include <typeinfo>

#include <cxxabi.h>

namespace weir::ops {

namespace {

bool symbol_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
         || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '$';
}

} // namespace

std::string demangle(const std::string& mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> text{
    abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status),
    std::free};
  return status == 0 && text ? std::string{text.get()} : mangled;
}

std::string demangle_symbols(std::string_view text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    bool word_start = i == 0 || !symbol_char(text[i - 1]);
    if (!word_start || text.compare(i, 2, "_Z") != 0) {
      out += text[i++];
      continue;
    }
    auto end = i;
    while (end < text.size() && symbol_char(text[end]))
      ++end;
    out += demangle(std::string{text.substr(i, end - i)});
    i = end;
  }
  return out;
}

std::string describe_current_exception() {
  auto* type = abi::__cxa_current_exception_type();
  auto name = type != nullptr ? demangle(type->name())
                              : std::string{"an unknown exception"};
  try {
    throw;
  } catch (const std::exception& e) {
    return name + ": " + e.what();
  } catch (...) {
    return name;
  }
}

} // namespace weir::ops
