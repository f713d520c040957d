// A library built against another weir API version (its entry points say
// version 0).
namespace weir::plugin {
class registrar;
} // namespace weir::plugin

extern "C" int weir_plugin_api_version() {
  return 0;
}

extern "C" void weir_plugin_register(weir::plugin::registrar*) {
}
