#include "crash_report.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <atomic>

#include "cltrace/wrapper/device_activity.h"
#include "scratch_directory.h"

namespace cltrace::cli {

namespace {

constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};

void say(const char* text) {
  size_t left = strlen(text);
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<size_t>(n);
  }
}

const char* nameOf(int signal) {
  switch (signal) {
    case SIGSEGV: return "SIGSEGV, a segmentation fault";
    case SIGBUS: return "SIGBUS, a bus error";
    case SIGILL: return "SIGILL, an illegal instruction";
    case SIGFPE: return "SIGFPE, an arithmetic exception";
    case SIGABRT: return "SIGABRT, an abort";
  }
  return "a fatal signal";
}

std::atomic<bool> gCrashing{false};
static_assert(std::atomic<bool>::is_always_lock_free, "used in a signal handler");

// System calls alone (a signal handler). Several of the driver's threads may crash at once: the
// first reports and ends the process, the others wait. A crash outside a run (not the driver's)
// ends in its signal, as it would have.
void onCrash(int signal) {
  if (gCrashing.exchange(true))
    for (;;) ::pause();
  if (const wrapper::DeviceActivityNote* activity = wrapper::deviceActivity()) {
    say("cltrace: error: the OpenCL driver crashed (");
    say(nameOf(signal));
    say(") in ");
    say(activity->text);
    say("\n");
    if (activity->partialFile) ::unlink(activity->partialFile);
    removeScratchDirectoryNow();
    ::_exit(1);  // an error cltrace names, as a run given up for hanging
  }
  removeScratchDirectoryNow();
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

void installHandlers() {
  struct sigaction action {};
  action.sa_handler = onCrash;
  action.sa_flags = SA_NODEFER;  // raise() in the handler then acts at once
  sigemptyset(&action.sa_mask);
  for (int s : kCrashSignals) ::sigaction(s, &action, nullptr);
}

}  // namespace

void installCrashReport() {
  installHandlers();
  // Again before each run: LLVM (loaded by the driver) replaces them with its own, which resets
  // a signal to its default as it arrives; when two of the driver's threads crashed at once, the
  // second ended the process in the signal before LLVM's handler put ours back (1 run in 10 of
  // e2e driver_crash).
  wrapper::setDeviceActivityStartHook(installHandlers);
}

bool isCrashSignal(int signal) {
  for (int s : kCrashSignals)
    if (s == signal) return true;
  return false;
}

}  // namespace cltrace::cli
