// The built-in `weir.driver` source: runs a user library's driver function
// on the subtask's own thread; what the driver prints becomes its records.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "operators/builtin/builtins.hpp"
#include "operators/driver_services.hpp"
#include "operators/params.hpp"

namespace weir::ops {

namespace {

class context_impl : public plugin::driver_context {
public:
  context_impl(std::vector<std::string> args,
               const std::map<std::string, std::string>* files,
               driver_services& services)
    : args_(std::move(args)), files_(files), services_(services) {
  }

  const std::vector<std::string>& args() const override { return args_; }

  std::string file(const std::string& name) const override {
    if (files_ != nullptr)
      if (auto i = files_->find(name); i != files_->end())
        return i->second;
    throw std::runtime_error("no file '" + name
                             + "' is attached to the application (--file)");
  }

  std::string submit(const std::string& spec_json,
                     plugin::job_priority priority) override {
    return services_.submit(spec_json, priority);
  }

  job_result wait(const std::string& id) override {
    return services_.wait(id);
  }

  void print(const std::string& line) override { services_.print(line); }

private:
  std::vector<std::string> args_;
  const std::map<std::string, std::string>* files_;
  driver_services& services_;
};

class driver_source : public source {
public:
  explicit driver_source(params p) : params_(std::move(p)) {}

  void open(const operator_context& ctx) override {
    name_ = params_.at("class");
    if (ctx.driver == nullptr || ctx.operators == nullptr)
      throw operator_error(fmt::format(
        "operator '{}' runs only as a driver (weir run -D)",
        driver_operator_name));
    run_ = ctx.operators->find_driver(name_);
    if (run_ == nullptr) {
      auto known = ctx.operators->driver_names();
      throw operator_error(fmt::format(
        "no driver '{}' in the application's libraries (-c/--class; known: "
        "{})",
        name_, known.empty() ? "none" : fmt::format("{}", fmt::join(known, ", "))));
    }
    services_ = ctx.driver;
    files_ = ctx.files;
  }

  bool next(row_batch&, size_t) override {
    context_impl ctx{decode_driver_args(params_.count("args") > 0
                                          ? params_.at("args")
                                          : "[]"),
                     files_, *services_};
    int status = 0;
    try {
      status = (*run_)(ctx);
    } catch (const std::exception& e) {
      throw operator_error(fmt::format("driver '{}' failed: {}", name_,
                                       e.what()));
    }
    if (status != 0) {
      services_->returned(status);
      throw operator_error(fmt::format("driver '{}' returned {}", name_,
                                       status));
    }
    return false;
  }

  bool blocking_io() const override { return true; }

private:
  params params_;
  std::string name_;
  const plugin::driver_function* run_ = nullptr;
  driver_services* services_ = nullptr;
  const std::map<std::string, std::string>* files_ = nullptr;
};

} // namespace

std::string encode_driver_args(const std::vector<std::string>& args) {
  return nlohmann::json(args).dump();
}

std::vector<std::string> decode_driver_args(const std::string& text) {
  try {
    return nlohmann::json::parse(text).get<std::vector<std::string>>();
  } catch (const std::exception&) {
    throw operator_error("driver arguments are malformed: " + text);
  }
}

operator_factory driver_factory() {
  operator_factory f;
  f.name = driver_operator_name;
  f.make_source = [](const params& p) -> std::unique_ptr<source> {
    if (p.count("class") == 0)
      throw operator_error("parameter 'class' is missing");
    return std::make_unique<driver_source>(p);
  };
  f.validate = [](const params& p, role) -> std::string {
    if (p.count("class") == 0)
      return "parameter 'class' is missing";
    return {};
  };
  f.bounded = [](const params&) { return true; };
  return f;
}

} // namespace weir::ops
