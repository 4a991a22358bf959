#include "cltrace/cachesim/sm_model.h"

#include <algorithm>
#include <cmath>

namespace cltrace::cachesim {

const char* toString(Outcome o) {
  switch (o) {
    case Outcome::Hit: return "hit";
    case Outcome::Miss: return "miss";
    case Outcome::ColdMiss: return "cold";
    case Outcome::CapacityMiss: return "capacity";
    case Outcome::ConflictMiss: return "conflict";
    case Outcome::LatencyMiss: return "latency";
    case Outcome::MshrStall: return "mshr";
    case Outcome::WriteHit: return "write-hit";
    case Outcome::WriteMiss: return "write-miss";
    case Outcome::Bypass: return "bypass";
  }
  return "?";
}

SmModel::SmModel(const Config& config, uint64_t seed)
    : timing_(config.timing),
      classify_(config.classify),
      writeAllocate_(config.writePolicy == WritePolicy::WriteBackAllocate),
      mshrs_(config.mshrs),
      mshrsPerWarp_(config.mshrsPerWarp),
      minLatency_(config.minLatency),
      hitLatency_(config.hitLatency),
      lines_(config.lines()),
      index_(config.setIndex, config.sets()),
      tags_(config.sets(), config.associativity, config.replacement, mixSeed(seed, 0x7265706cu)),
      latencyRng_(mixSeed(seed, 0x6c6174u)),
      jitter_(config.latencySigma) {}

uint32_t SmModel::mshrsInUse(uint64_t warpKey) const { return warpMshrs_.get(warpKey); }

void SmModel::retireFilled() {
  while (!inflight_.empty() && inflight_.front().fill <= now_) {
    const FillQueue::Entry& f = inflight_.front();
    tags_.fill(f.set, f.way);
    warpMshrs_.decrementAt(f.warpSlot);
    inflight_.popFront();
  }
  nextFill_ = inflight_.empty() ? ~uint64_t(0) : inflight_.front().fill;
}

uint64_t SmModel::earliestFillOfWarp(uint64_t warpKey) const {
  for (size_t i = 0; i < inflight_.size(); ++i)  // in fill order: the first match is the earliest
    if (inflight_[i].warpKey == warpKey) return inflight_[i].fill;
  return ~uint64_t(0);
}

RequestResult SmModel::read(uint64_t line, uint64_t cycle, uint64_t warpKey, InstructionStats* ins) {
  if (classify_) tracker_.prefetch(line);
  advanceTo(cycle);
  cycle = now_;
  RequestResult r;
  r.set = index_(line);
  int way = tags_.find(r.set, line);
  if (way >= 0) {
    tags_.touch(r.set, way);
    r.reuseDistance = track(line);
    ++stats_.reads;
    ++stats_.requests;
    if (ins) {
      ++ins->reads;
      ++ins->requests;
    }
    if (!tags_.pending(r.set, way)) {
      r.outcome = Outcome::Hit;
      r.readyCycle = cycle + hitLatency_;
      ++stats_.readHits;
      if (ins) ++ins->readHits;
    } else {
      r.outcome = Outcome::LatencyMiss;
      r.readyCycle = tags_.fillCycle(r.set, way);
      ++stats_.misses.latency;
      if (ins) ++ins->misses.latency;
    }
    return r;
  }

  // Miss: make sure it can be accepted before anything changes. The warp's counter slot found
  // here is the one the miss takes below (nothing in between changes warpMshrs_).
  size_t warpSlot = 0;
  if (timing_) {
    if (mshrsTaken()) return stall(inflight_.front().fill, cycle, ins);
    warpSlot = warpMshrs_.lookup(warpKey);
    if (mshrsPerWarp_ != 0 && warpMshrs_.countAt(warpSlot) >= mshrsPerWarp_)
      return stall(earliestFillOfWarp(warpKey), cycle, ins);
  }
  way = tags_.victim(r.set);
  if (way < 0) return stall(tags_.earliestFill(r.set), cycle, ins);

  r.reuseDistance = track(line);
  if (!classify_) {
    r.outcome = Outcome::Miss;  // no split without reuse distances
  } else if (r.reuseDistance == ReuseDistanceTracker::kInfinite) {
    r.outcome = Outcome::ColdMiss;
  } else if (r.reuseDistance >= lines_) {
    r.outcome = Outcome::CapacityMiss;
  } else {
    r.outcome = Outcome::ConflictMiss;
  }
  ++stats_.reads;
  ++stats_.requests;
  ++stats_.readMisses;
  if (ins) {
    ++ins->reads;
    ++ins->requests;
    ++ins->readMisses;
  }
  if (classify_) {
    uint64_t* counter = r.outcome == Outcome::ColdMiss       ? &stats_.misses.cold
                        : r.outcome == Outcome::CapacityMiss ? &stats_.misses.capacity
                                                             : &stats_.misses.conflict;
    ++*counter;
    if (ins) {
      uint64_t* c = r.outcome == Outcome::ColdMiss       ? &ins->misses.cold
                    : r.outcome == Outcome::CapacityMiss ? &ins->misses.capacity
                                                         : &ins->misses.conflict;
      ++*c;
    }
  }

  CacheTags::Evicted ev = tags_.install(r.set, way, line, timing_, false);
  if (ev.dirty) ++stats_.writeBacks;
  if (timing_) {
    noteInstall(line);
    uint64_t fill = cycle + sampleLatency();
    tags_.setFillCycle(r.set, way, fill);
    if (fill <= cycle) {
      tags_.fill(r.set, way);  // zero latency: the data is there at once
    } else {
      const uint64_t rebuilds = warpMshrs_.rebuilds();
      warpSlot = warpMshrs_.incrementAt(warpSlot, warpKey);
      if (warpMshrs_.rebuilds() != rebuilds)  // the table moved: re-find the slots in flight
        for (size_t i = 0; i < inflight_.size(); ++i)
          inflight_.at(i).warpSlot = static_cast<uint32_t>(warpMshrs_.lookup(inflight_.at(i).warpKey));
      inflight_.insert(FillQueue::Entry{fill, warpKey, r.set, way, static_cast<uint32_t>(warpSlot)});
      nextFill_ = inflight_.front().fill;
    }
    r.readyCycle = fill;
  } else {
    r.readyCycle = cycle;
  }
  return r;
}

RequestResult SmModel::write(uint64_t line, uint64_t cycle, InstructionStats* ins) {
  if (classify_ && writeAllocate_) tracker_.prefetch(line);
  advanceTo(cycle);
  cycle = now_;
  RequestResult r;
  r.set = index_(line);
  r.readyCycle = cycle;
  ++stats_.writes;
  ++stats_.requests;
  if (ins) {
    ++ins->writes;
    ++ins->requests;
  }
  int way = tags_.find(r.set, line);
  if (way >= 0) {
    r.outcome = Outcome::WriteHit;
    ++stats_.writeHits;
    if (writeAllocate_) {
      r.reuseDistance = track(line);
      tags_.touch(r.set, way);
      tags_.setDirty(r.set, way);
    }
    // Write-through no-allocate: the line stays valid (its bytes are updated in place) and the
    // store does not count as a use for replacement.
    return r;
  }
  r.outcome = Outcome::WriteMiss;
  ++stats_.writeMisses;
  if (ins) ++ins->writeMisses;
  if (writeAllocate_) {
    // Allocate at once, dirty (no fetch is modelled). If every way is in flight the store
    // goes around the cache: it touches no L1 state, so its reuse distance is not tracked.
    int v = tags_.victim(r.set);
    if (v >= 0) {
      r.reuseDistance = track(line);
      CacheTags::Evicted ev = tags_.install(r.set, v, line, false, true);
      noteInstall(line);
      if (ev.dirty) ++stats_.writeBacks;
    }
  }
  return r;
}

bool SmModel::inFlight(uint64_t line) const {
  uint32_t set = index_(line);
  int way = tags_.find(set, line);
  return way >= 0 && tags_.pending(set, way);
}

}  // namespace cltrace::cachesim
