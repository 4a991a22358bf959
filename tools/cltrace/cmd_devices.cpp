// `cltrace devices`: the OpenCL devices, numbered for --device, with the program format through
// which each can take instrumented kernels.
#include <fmt/core.h>

#include "cltrace/wrapper/opencl.h"
#include "commands.h"

static cltrace::cli::CommandRegistration reg("devices", [](CLI::App& app) {
  auto* sub = app.add_subcommand("devices", "List the OpenCL devices and whether cltrace can trace on each");
  sub->callback([] {
    using namespace cltrace::wrapper;
    std::vector<DeviceEntry> devices = listDevices();
    if (devices.empty()) throw cltrace::cli::UserError("no OpenCL device found on any platform");
    cl_device_id chosen = selectDevice("");
    for (const DeviceEntry& d : devices) {
      ProgramFormat format = programFormatOf(d.id);
      std::string il = ilVersionOf(d.id);
      fmt::print("{}{}:{}  {}\n      takes {}{}\n", d.id == chosen ? "* " : "  ", d.platform, d.index, d.name,
                 describeProgramFormat(format), il.empty() ? "" : "; IL version " + il);
    }
    fmt::print("* the device cltrace run and predict use without --device\n");
  });
});
