#include "cltrace/wrapper/device_activity.h"

#include <atomic>
#include <utility>

namespace cltrace::wrapper {

namespace {

std::atomic<const DeviceActivityNote*> gActivity{nullptr};
static_assert(std::atomic<const DeviceActivityNote*>::is_always_lock_free, "read from a signal handler");

}  // namespace

const DeviceActivityNote* deviceActivity() { return gActivity.load(); }

DeviceActivity::DeviceActivity(std::string text, std::string partialFile)
    : text_(std::move(text)),
      partialFile_(std::move(partialFile)),
      note_{text_.c_str(), partialFile_.empty() ? nullptr : partialFile_.c_str()},
      previous_(gActivity.exchange(&note_)) {}

DeviceActivity::~DeviceActivity() { gActivity.store(previous_); }

}  // namespace cltrace::wrapper
