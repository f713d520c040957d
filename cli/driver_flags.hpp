#pragma once

#include <string>
#include <vector>

namespace weir::cli {

/// The arguments of `weir run -D ...` split at the driver library.
struct driver_args {
  /// Flags with the seed's short driver options rewritten to long ones.
  std::vector<std::string> flags;
  /// The driver library (the first argument that is not a flag or a flag's
  /// value); empty when there is none.
  std::string library;
  /// Everything after it: the driver program's arguments, untouched.
  std::vector<std::string> program;
  /// Set when the flags cannot be read: one line saying what was expected.
  std::string error;
};

/// The seed's short forms of the driver's resources: "-Dhm", "-Ddm", "-Dc",
/// "-Dnm" (each the same as a long flag of driver mode).
std::vector<std::string> driver_resource_flags();

/// Whether `weir run` arguments ask for driver mode (-D or --driver before
/// the first positional argument; `value_flags` take the next argument as
/// their value, and so do -Dhm, -Ddm, -Dc, -Dnm and -c).
bool wants_driver_mode(const std::vector<std::string>& args,
                       const std::vector<std::string>& value_flags);

/// Reads the driver-mode forms of the seed's option table: `-D` alone is
/// --driver; `-Dhm`, `-Ddm`, `-Dc`, `-Dnm` followed by a value are
/// --driverheapmemory, --driverdirectmemory, --drivercpus,
/// --drivernativememory; `-Dkey=value` stays a configuration property.
/// `-Dhm=512` (which would read as the property "hm") and `-Dxyz` without
/// a value are errors that say which reading was expected. `value_flags`
/// take the next argument as their value.
driver_args split_driver_args(const std::vector<std::string>& args,
                              const std::vector<std::string>& value_flags);

/// The driver's arguments that look like a flag of `weir run` (`flags`,
/// as "-p" and "--libjars"): a flag's exact name, "--flag=value",
/// "-Dkey=value", or a driver resource flag (-Dhm...); not -h/--help,
/// which a driver may well have itself. Passed to the driver
/// all the same, as in Flink; the CLI warns about them.
std::vector<std::string>
weir_looking_args(const std::vector<std::string>& program,
                  const std::vector<std::string>& flags);

} // namespace weir::cli
