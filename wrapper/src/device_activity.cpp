#include "cltrace/wrapper/device_activity.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <utility>
#include <vector>

namespace cltrace::wrapper {

namespace {

std::atomic<const DeviceActivityNote*> gLatest{nullptr};
static_assert(std::atomic<const DeviceActivityNote*>::is_always_lock_free, "read from a signal handler");

std::mutex gMutex;
std::vector<const DeviceActivityNote*> gSet;  // in the order set (gMutex)
std::string gMirror;                          // (gMutex)

// Makes the latest note the one given and mirrored (gMutex held).
void publish() {
  const DeviceActivityNote* latest = gSet.empty() ? nullptr : gSet.back();
  gLatest.store(latest);
  if (gMirror.empty()) return;
  if (!latest) {
    std::remove(gMirror.c_str());
    return;
  }
  // Its text, a newline, the partial file or nothing, a newline (readMirroredActivity).
  std::ofstream(gMirror, std::ios::trunc) << latest->text << '\n'
                                          << (latest->partialFile ? latest->partialFile : "") << '\n';
}

}  // namespace

const DeviceActivityNote* deviceActivity() { return gLatest.load(); }

std::optional<MirroredActivity> readMirroredActivity(const std::string& path) {
  std::ifstream in(path);
  MirroredActivity a;
  if (!std::getline(in, a.text) || a.text.empty()) return std::nullopt;
  std::getline(in, a.partialFile);
  return a;
}

void mirrorDeviceActivityTo(const std::string& path) {
  std::lock_guard<std::mutex> lock(gMutex);
  gMirror = path;
  publish();
}

DeviceActivity::DeviceActivity(std::string text, std::string partialFile)
    : text_(std::move(text)),
      partialFile_(std::move(partialFile)),
      note_{text_.c_str(), partialFile_.empty() ? nullptr : partialFile_.c_str()} {
  std::lock_guard<std::mutex> lock(gMutex);
  gSet.push_back(&note_);
  publish();
}

DeviceActivity::~DeviceActivity() {
  std::lock_guard<std::mutex> lock(gMutex);
  gSet.erase(std::find(gSet.begin(), gSet.end(), &note_));
  publish();
}

}  // namespace cltrace::wrapper
