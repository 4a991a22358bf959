// cltrace instrument KERNEL.cl --kernel NAME [-D ...] [-I ...] [--build-options "..."] -o DIR
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cltrace/passes/instrumenter.h"
#include "commands.h"
#include "cltrace/wrapper/standalone.h"

namespace fs = std::filesystem;
using namespace cltrace;

namespace {

struct InstrumentOptions {
  std::string source;
  std::string kernel;
  std::vector<std::string> defines, includes;
  std::string buildOptions;
  std::string outDir = ".";
  bool spirv = false;
  bool emitLl = false;
};

void writeBytes(const fs::path& p, const std::string& data) {
  std::ofstream out(p, std::ios::binary);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  if (!out) throw cli::UserError("cannot write " + p.string());
}

nlohmann::json manifestOf(const passes::InstrumentedKernel& k) {
  nlohmann::json args = nlohmann::json::array();
  for (const auto& a : k.args) {
    args.push_back({{"name", a.name}, {"type", a.type}, {"pointer", a.isPointer},
                    {"address_space", a.addressSpace}});
    if (a.handle != passes::KernelArg::Handle::None)
      args.back()["handle"] = a.handle == passes::KernelArg::Handle::Image ? "image" : "sampler";
  }
  nlohmann::json accesses = nlohmann::json::array();
  for (const auto& a : k.report.accesses)
    accesses.push_back({{"id", a.id}, {"kind", accessKindName(a.kind)}, {"size", a.size},
                        {"loop_depth", a.depth}, {"instruction", a.text}});
  return {{"kernel", k.kernel},
          {"record_format_version", kRecordFormatVersion},
          {"source_hash", fmt::format("{:016x}", k.sourceHash)},
          {"args", args},
          {"loops", k.report.loops},
          {"max_loop_depth", k.report.maxDepth},
          {"count_run_writes_buffers", k.report.countRunWritesBuffers},
          {"waits_for_group", k.report.waitsForGroup},
          {"atomics_steering_branches", k.report.atomicsSteeringBranches},
          {"atomics_steering_addresses", k.report.atomicsSteeringAddresses},
          {"accesses", accesses},
          {"warnings", k.report.warnings}};
}

void run(const InstrumentOptions& o) {
  std::string source;
  try {
    source = wrapper::readKernelSource(o.source);
  } catch (const std::invalid_argument& e) {
    throw cli::UserError(e.what());
  }
  std::vector<std::string> options = passes::splitOptions(o.buildOptions);
  for (const auto& d : o.defines) options.push_back("-D" + d);
  for (const auto& i : o.includes) options.push_back("-I" + i);
  passes::InstrumentedKernel k;
  try {
    k = passes::instrumentSource(source, o.kernel, passes::withSourceDirectory(o.source, options), {}, o.source);
  } catch (const passes::InstrumentError& e) {
    throw cli::UserError(o.source + ": " + e.what());
  }
  fs::path dir(o.outDir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw cli::UserError("cannot create " + dir.string() + ": " + ec.message());
  writeBytes(dir / "count.bc", k.countBitcode);
  writeBytes(dir / "trace.bc", k.traceBitcode);
  writeBytes(dir / "manifest.json", manifestOf(k).dump(2) + "\n");
  if (o.emitLl) {
    writeBytes(dir / "count.ll", passes::bitcodeToText(k.countBitcode));
    writeBytes(dir / "trace.ll", passes::bitcodeToText(k.traceBitcode));
  }
  if (o.spirv) {
    for (const char* stem : {"count", "trace"}) {
      std::string cmd = fmt::format("llvm-spirv-15 '{}' -o '{}'", (dir / (std::string(stem) + ".bc")).string(),
                                    (dir / (std::string(stem) + ".spv")).string());
      if (std::system(cmd.c_str()) != 0)
        throw cli::UserError(fmt::format("llvm-spirv-15 failed on {}.bc (is llvm-spirv-15 installed?)", stem));
    }
  }

  // Summary: what was instrumented.
  fmt::print("{}", passes::formatReport(k.report));
  size_t perKind[kAccessKindCount] = {};
  for (const auto& a : k.report.accesses) perKind[static_cast<size_t>(a.kind)]++;
  for (uint8_t i = 0; i < kAccessKindCount; ++i)
    if (perKind[i]) fmt::print("  {:<14} {}\n", accessKindName(static_cast<AccessKind>(i)), perKind[i]);
  fmt::print("wrote {}/count.bc, trace.bc, manifest.json{}{}\n", dir.string(),
             o.emitLl ? ", count.ll, trace.ll" : "", o.spirv ? ", count.spv, trace.spv" : "");
}

cli::CommandRegistration registration("instrument", [](CLI::App& app) {
  auto o = std::make_shared<InstrumentOptions>();
  CLI::App* sub = app.add_subcommand("instrument", "Instrument one kernel: write count.bc and trace.bc");
  sub->add_option("source", o->source, "OpenCL C source file")->required();
  sub->add_option("-k,--kernel", o->kernel, "kernel to instrument")->required()->type_name("NAME");
  cli::addRepeatable(*sub, "-D", o->defines, "preprocessor definition NAME[=VALUE] (repeatable)")
      ->check(cli::nonEmpty())
      ->type_name("NAME[=VALUE]");
  cli::addRepeatable(*sub, "-I", o->includes, "include directory (repeatable)")
      ->check(cli::nonEmpty())
      ->type_name("DIR");
  sub->add_option("--build-options", o->buildOptions, "further clBuildProgram-style options");
  sub->add_option("-o,--out", o->outDir, "output directory")
      ->capture_default_str()
      ->check(cli::nonEmpty())
      ->type_name("DIR");
  sub->add_flag("--spirv", o->spirv, "also write count.spv and trace.spv (llvm-spirv-15)");
  sub->add_flag("--emit-ll", o->emitLl, "also write readable count.ll and trace.ll");
  sub->callback([o] { run(*o); });
});

}  // namespace
