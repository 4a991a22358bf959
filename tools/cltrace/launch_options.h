// Launch flags shared by `cltrace run` and `cltrace predict`: kernel, NDRange, arguments, build
// options; the bundled kernels' manifests fill in whatever is not given.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "cltrace/wrapper/standalone.h"

namespace cltrace::cli {

struct LaunchFlags {
  std::string source;
  std::string kernel;
  // As given: one X[,Y[,Z]] list per flag (checked when parsed; sizesOf reads them).
  std::vector<std::string> global, local, offset;
  std::vector<std::string> args;
  std::vector<std::string> defines, includes;
  std::string buildOptions;
  uint64_t alignment = 256;
  uint64_t traceBufferMiB = 256;   // LaunchOptions::traceBufferBytes
  uint64_t traceTimeout = 0;       // LaunchOptions::runLimitSeconds (0: worked out)
  bool compress = true;
  std::string device;  // wrapper::selectDevice spec; empty: $CLTRACE_DEVICE or the default
};

void addLaunchFlags(CLI::App& sub, LaunchFlags& f);
// The sizes of --global/--local/--offset lists (X[,Y[,Z]], one list per flag), in order.
// Throws std::invalid_argument naming an empty item or one that is no unsigned number.
std::vector<uint64_t> sizesOf(const std::vector<std::string>& lists);
// Builds the run specification (manifest first, flags override). Throws UserError.
wrapper::RunSpec runSpecOf(const LaunchFlags& f);
wrapper::LaunchOptions launchOptionsOf(const LaunchFlags& f);

// Runs `spec` traced into `tracePath` (wrapper::runStandalone), turning bad input into
// UserError and printing the launch's warnings on stderr.
wrapper::RunOutput traceLaunch(const LaunchFlags& f, const wrapper::RunSpec& spec, const std::string& tracePath);
// UserError when `output` (given with `option`) is one of the launch's input files: the kernel
// source, its launch manifest or a file: initialiser's file.
void requireNotLaunchInput(const wrapper::RunSpec& spec, const std::string& output, const std::string& option);
// UserError when accesses fell outside every buffer (a buffer smaller than the kernel reads).
void requireAccessesInsideBuffers(const wrapper::RunOutput& out);

}  // namespace cltrace::cli
