// Says which run the OpenCL driver was in when it crashes the process (a driver that
// segfaults ends cltrace in a signal, with nothing of its own said otherwise).
#pragma once

namespace cltrace::cli {

// On SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT while a kernel's count or trace run is in
// flight (wrapper::DeviceActivity), writes "cltrace: error: the OpenCL driver crashed (...)"
// to standard error, removes the run's unfinished trace file and exits with status 1. On any
// of them, removes the ScratchDirectory; outside a run the process then ends in the signal as
// it would have.
void installCrashReport();

// Whether a process that ends in `signal` crashed (one of those above), rather than being
// ended from outside (SIGTERM, SIGINT, the OOM killer's SIGKILL).
bool isCrashSignal(int signal);

}  // namespace cltrace::cli
