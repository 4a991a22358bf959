// A small in-memory scheduler for the cache simulator's tests.
//
// Each warp has a fixed SM and a list of steps in program order. Every SM issues at most one
// step per cycle. A warp is eligible when its ready cycle <= the SM's cycle; among eligible
// warps the SM picks round-robin in ascending warpKey order, starting after the warp it issued
// last. After issuing, a warp is ready the next cycle unless delayWarp() moves it later.
// next() returns steps in ascending (cycle, sm) order, like the real scheduler.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "cltrace/scheduler/warp_step.h"

namespace cltrace::cachesim::testing {

using sched::LaneAccess;
using sched::WarpStep;

// A step whose lanes (local threads 0, 1, ...) access `addresses` with `size` bytes each.
inline WarpStep makeStep(AccessKind kind, uint32_t instruction, const std::vector<uint64_t>& addresses,
                         uint32_t size = 4) {
  WarpStep s;
  s.kind = kind;
  s.instruction = instruction;
  for (size_t i = 0; i < addresses.size(); ++i)
    s.lanes.push_back(LaneAccess{static_cast<uint32_t>(i), size, addresses[i]});
  return s;
}

inline WarpStep load(uint32_t instruction, const std::vector<uint64_t>& addresses, uint32_t size = 4) {
  return makeStep(AccessKind::Load, instruction, addresses, size);
}

inline WarpStep store(uint32_t instruction, const std::vector<uint64_t>& addresses, uint32_t size = 4) {
  return makeStep(AccessKind::Store, instruction, addresses, size);
}

// `count` lanes reading base, base + stride, base + 2 * stride, ...
inline std::vector<uint64_t> strided(uint64_t base, uint64_t stride, uint32_t count) {
  std::vector<uint64_t> a;
  for (uint32_t i = 0; i < count; ++i) a.push_back(base + i * stride);
  return a;
}

// The lines of a step by the definition (coalescer.h), for checking the coalescer: every line
// any lane's bytes touch (an access of size 0 touches one byte), each once, in first-touch order.
inline std::vector<uint64_t> linesByDefinition(const WarpStep& st, uint32_t lineShift) {
  std::vector<uint64_t> out;
  for (const LaneAccess& l : st.lanes) {
    const uint64_t end = l.address + (l.size ? l.size - 1 : 0);
    for (uint64_t line = l.address >> lineShift; line <= end >> lineShift; ++line)
      if (std::find(out.begin(), out.end(), line) == out.end()) out.push_back(line);
  }
  return out;
}

// The line requests of a step by the definition (coalescer.h): with `wideAccessSplit`, a load
// or store whose largest lane access is over 4 bytes is requested in parts of the warp (over 8
// bytes: quarters, else halves, of `warpSize` lanes, by localThread % warpSize), each part's
// lines by linesByDefinition, part after part; otherwise the whole step's. Lanes over 16 bytes
// go as 16-byte words, one word after the other, each requested as above: word w is bytes
// [16w, 16w + 16) of each lane longer than 16w (word 0: every lane).
inline std::vector<uint64_t> requestsByDefinition(const WarpStep& st, uint32_t lineShift, uint32_t warpSize,
                                                  bool wideAccessSplit) {
  uint32_t largest = 0;
  for (const LaneAccess& l : st.lanes) largest = std::max(largest, l.size);
  const bool memory = st.kind == AccessKind::Load || st.kind == AccessKind::Store;
  if (!wideAccessSplit || !memory || largest <= 4) return linesByDefinition(st, lineShift);
  if (largest > 16) {
    std::vector<uint64_t> out;
    for (uint64_t w = 0; 16 * w < largest; ++w) {
      WarpStep word = st;
      word.lanes.clear();
      for (const LaneAccess& l : st.lanes)
        if (w == 0 || l.size > 16 * w)
          word.lanes.push_back(LaneAccess{l.localThread, static_cast<uint32_t>(std::min<uint64_t>(16, l.size - 16 * w)),
                                          l.address + 16 * w});
      for (uint64_t line : requestsByDefinition(word, lineShift, warpSize, true)) out.push_back(line);
    }
    return out;
  }
  const uint32_t part = std::max(largest > 8 ? warpSize / 4 : warpSize / 2, 1u);
  std::vector<uint64_t> out;
  std::vector<uint32_t> parts;  // in the order they first come
  for (const LaneAccess& l : st.lanes)
    if (std::find(parts.begin(), parts.end(), (l.localThread % warpSize) / part) == parts.end())
      parts.push_back((l.localThread % warpSize) / part);
  for (uint32_t which : parts) {
    WarpStep piece = st;
    piece.lanes.clear();
    for (const LaneAccess& l : st.lanes)
      if ((l.localThread % warpSize) / part == which) piece.lanes.push_back(l);
    for (uint64_t line : linesByDefinition(piece, lineShift)) out.push_back(line);
  }
  return out;
}

class FakeStepSource : public sched::StepSource {
 public:
  struct Issue {
    uint64_t warpKey;
    uint64_t cycle;
  };

  void addWarp(uint32_t sm, uint64_t warpKey, std::vector<WarpStep> steps, uint64_t workgroup = 0,
               uint32_t warp = 0) {
    Warp w;
    w.sm = sm;
    w.key = warpKey;
    for (size_t i = 0; i < steps.size(); ++i) {
      steps[i].sm = sm;
      steps[i].warpKey = warpKey;
      steps[i].workgroup = workgroup;
      steps[i].warp = warp;
      steps[i].step = i;
    }
    w.steps = std::move(steps);
    warps_[warpKey] = std::move(w);
  }

  bool next(WarpStep& out) override { return nextBefore(out, ~uint64_t(0), ~uint32_t(0)) == sched::NextStep::Issued; }

  // Like the real scheduler, issues nothing at or after (limitCycle, limitSm).
  sched::NextStep nextBefore(WarpStep& out, uint64_t limitCycle, uint32_t limitSm) override {
    // Earliest issue cycle of every SM.
    std::map<uint32_t, uint64_t> smCycle;
    for (auto& [key, w] : warps_) {
      if (w.next == w.steps.size()) continue;
      uint64_t c = std::max(w.ready, clock_[w.sm]);
      auto it = smCycle.find(w.sm);
      if (it == smCycle.end() || c < it->second) smCycle[w.sm] = c;
    }
    if (smCycle.empty()) return sched::NextStep::Finished;
    uint32_t sm = 0;
    uint64_t cycle = ~uint64_t(0);
    for (auto& [s, c] : smCycle)
      if (c < cycle) {
        cycle = c;
        sm = s;
      }
    if (!sched::issuesBefore(cycle, sm, limitCycle, limitSm)) return sched::NextStep::NotBefore;
    // Round robin among the eligible warps of that SM.
    Warp* pick = nullptr;
    Warp* first = nullptr;
    for (auto& [key, w] : warps_) {
      if (w.sm != sm || w.next == w.steps.size() || w.ready > cycle) continue;
      if (!first) first = &w;
      if (!pick && (!hasLast_[sm] || key > last_[sm])) pick = &w;
    }
    if (!pick) pick = first;
    out = pick->steps[pick->next++];
    out.cycle = cycle;
    pick->ready = cycle + 1;
    clock_[sm] = cycle + 1;
    last_[sm] = pick->key;
    hasLast_[sm] = true;
    issued.push_back(Issue{pick->key, cycle});
    return sched::NextStep::Issued;
  }

  void delayWarp(uint64_t warpKey, uint64_t readyCycle) override {
    delays.emplace_back(warpKey, readyCycle);
    auto it = warps_.find(warpKey);
    if (it != warps_.end()) it->second.ready = std::max(it->second.ready, readyCycle);
  }

  std::vector<std::pair<uint64_t, uint64_t>> delays;  // every delayWarp call
  std::vector<Issue> issued;                          // every step returned, in order

 private:
  struct Warp {
    uint32_t sm = 0;
    uint64_t key = 0;
    std::vector<WarpStep> steps;
    size_t next = 0;
    uint64_t ready = 0;
  };
  std::map<uint64_t, Warp> warps_;
  std::map<uint32_t, uint64_t> clock_;
  std::map<uint32_t, uint64_t> last_;
  std::map<uint32_t, bool> hasLast_;
};

// The steps of `inner` through a source that cannot hold a step back (StepSource's own
// nextBefore, as for a recorded order): the simulator then takes a warp's next step before a
// retry that delays that warp.
class CannotHoldBack : public sched::StepSource {
 public:
  explicit CannotHoldBack(FakeStepSource& inner) : inner_(inner) {}
  bool next(WarpStep& out) override { return inner_.next(out); }
  void delayWarp(uint64_t warpKey, uint64_t readyCycle) override { inner_.delayWarp(warpKey, readyCycle); }

 private:
  FakeStepSource& inner_;
};

}  // namespace cltrace::cachesim::testing
