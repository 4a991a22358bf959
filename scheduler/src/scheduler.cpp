// The scheduler. Definitions (program order, barriers, SM assignment, inter-warp orders,
// timing) are documented in docs/scheduler.md; the comments here describe the mechanics.
#include "cltrace/scheduler/scheduler.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <deque>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "iteration_table.h"
#include "loop_chains.h"

namespace cltrace::sched {

namespace {

// Per-thread state.
constexpr uint8_t kRunning = 0;  // its next record can be issued
constexpr uint8_t kBlocked = 1;  // issued a barrier; waits for its workgroup
constexpr uint8_t kDone = 2;     // no records left

// What the scheduler keeps of a Record: 16 bytes instead of 48. The iteration vector (depth
// included) and the static part (instruction, size, kind, flags) are interned per workgroup.
struct CompactRecord {
  uint64_t address;
  uint32_t op;    // index into the workgroup's ops
  uint32_t iter;  // id in the workgroup's IterationTable
};
static_assert(sizeof(CompactRecord) == 16);

// The op and iteration of a record as one number: two records are one instance of one op when
// these are equal.
inline uint64_t opAndIter(const CompactRecord& r) { return uint64_t(r.op) | uint64_t(r.iter) << 32; }

// The static part of a record. One per instruction id in practice; a record whose size,
// kind or flags differ from another record of the same instruction gets its own entry.
struct OpInfo {
  uint32_t instruction;
  uint32_t size;
  uint8_t kind;
  uint8_t flags;
  // The first op of this instruction, kind and flags: ops that differ only in size (a memcpy
  // whose length varies between lanes) are one SIMT instance, issued in one step.
  uint32_t instance = 0;
};

struct OpCacheEntry {
  OpInfo info;
  uint32_t op;
  bool valid;
};

// Evidence that instructions `a` and `b` (a < b) lie in different loops at nesting level
// `level`: a thread's level-`level` counter went down from a record of `a` to a later record
// of `b` while the outer counters stayed equal (a loop was left and a sibling loop entered).
struct Boundary {
  uint32_t level;
  uint32_t a;
  uint32_t b;
};
constexpr size_t kMaxBoundaries = 1024;

struct WarpInfo {
  uint64_t ready = 0;  // may not issue before this cycle
  uint64_t steps = 0;  // steps issued so far
  uint32_t lanes = 0;  // threads in the warp (partial at the end of a workgroup)
  uint32_t runnable = 0;
  uint32_t done = 0;
};

}  // namespace

// A workgroup as loaded for scheduling: its records in the scheduler's layout and what was
// interned. Nothing in it changes while the workgroup is scheduled, so runs may share one
// (PreparedTrace); what a run changes is in Workgroup.
struct LoadedWorkgroup {
  uint64_t id = 0;
  uint32_t threads = 0;
  uint64_t recordCount = 0;  // records without padding
  // Record j of thread t is records[base[t] + j * stride[t / warpSize]]. Under the warp
  // policy a warp's records are interleaved (stride = its lanes; base = the warp's region +
  // lane), so that the records one step reads lie side by side, unless that would pad the
  // warp's region to more than twice its records (lanes of very different lengths); otherwise
  // each thread's records are consecutive (stride 1).
  std::vector<CompactRecord> records;
  std::vector<uint64_t> base;    // per thread
  std::vector<uint32_t> stride;  // per warp
  std::vector<uint64_t> end;     // number of records per thread
  std::vector<uint64_t> shortest;  // per warp: the least `end` of its lanes
  detail::IterationTable iters;
  std::vector<OpInfo> ops;
  std::vector<Boundary> boundaries;
  // The first record (in thread order) whose loop counter stopped at kMaxIterationCounter: its
  // loop ran on past 2^32 - 2 iterations, which its later records no longer tell apart.
  struct Saturated {
    uint32_t thread;
    uint32_t instruction;
    uint32_t level;  // 0: the outermost loop
  };
  std::optional<Saturated> saturated;
  // The first instruction (in the order met) whose records are nested in more loops than they
  // keep counters for (kRecordDepthTruncated).
  std::optional<uint32_t> deepNest;

  size_t bytes() const {
    return sizeof(LoadedWorkgroup) + records.capacity() * sizeof(CompactRecord) +
           (base.capacity() + end.capacity() + shortest.capacity()) * sizeof(uint64_t) +
           stride.capacity() * sizeof(uint32_t) +
           iters.bytes() + ops.capacity() * sizeof(OpInfo) + boundaries.capacity() * sizeof(Boundary);
  }
};

namespace {

// One run's state of a workgroup it has taken.
struct Workgroup {
  const LoadedWorkgroup* in = nullptr;    // `own`, or a workgroup of a PreparedTrace
  std::unique_ptr<LoadedWorkgroup> own;  // loaded by this scheduler (kept for its capacity)
  uint64_t id = 0;
  uint32_t sm = 0;
  uint32_t threads = 0;
  uint32_t blocked = 0;
  uint32_t done = 0;
  bool resident = false;
  std::vector<uint64_t> cursor;  // position of the next record per thread
  std::vector<uint8_t> state;
  std::vector<WarpInfo> warps;

  const CompactRecord& at(uint32_t t, uint64_t j, uint32_t warpSize) const {
    return in->records[in->base[t] + j * in->stride[t / warpSize]];
  }
  const OpInfo& op(const CompactRecord& r) const { return in->ops[r.op]; }
  uint32_t instruction(const CompactRecord& r) const { return in->ops[r.op].instruction; }

  // The loaded part counts only when this run loaded it (a PreparedTrace's is counted there).
  size_t bytes() const {
    return sizeof(Workgroup) + (own ? own->bytes() : 0) + cursor.capacity() * sizeof(uint64_t) +
           state.capacity() + warps.capacity() * sizeof(WarpInfo);
  }
};

// Loads workgroups into the scheduler's layout for one NDRange, policy and warp size.
class WorkgroupLoader {
 public:
  WorkgroupLoader(const SchedulerConfig& config, const NDRange& range);
  // Throws std::runtime_error for a malformed workgroup.
  void load(LoadedWorkgroup& wg, const WorkgroupTrace& in);
  // Throws unless the source's next workgroup `id` is the `expected` one of `total`.
  static void checkId(uint64_t id, uint64_t expected, uint64_t total);
  // Throws unless a source that has ended gave all `total` workgroups.
  static void checkEnd(uint64_t given, uint64_t total);

 private:
  uint32_t internOp(LoadedWorkgroup& wg, const Record& r);
  // Notes `r` (of thread `t`) in wg.saturated when one of its loop counters stopped.
  static void noteSaturated(LoadedWorkgroup& wg, const Record& r, uint32_t depth, uint32_t t) {
    for (uint32_t k = 0; k < depth; ++k)
      if (r.iterations[k] == kMaxIterationCounter) {
        wg.saturated = LoadedWorkgroup::Saturated{t, r.instruction, k};
        return;
      }
  }

  bool warpPolicy;
  uint32_t warpSize;
  uint32_t wgSize;
  uint32_t warpsPerWg;
  std::array<OpCacheEntry, 256> opCache{};  // by instruction id, while loading
};

struct UnitRef {
  uint32_t slot = 0;
  uint32_t unit = 0;  // warp index (warp policy) or local thread (naive policies)
};

struct OrderEntry {
  uint64_t hi;
  uint64_t lo;
  UnitRef ref;
};

inline bool keyLess(uint64_t hi1, uint64_t lo1, uint64_t hi2, uint64_t lo2) {
  return hi1 < hi2 || (hi1 == hi2 && lo1 < lo2);
}

// splitmix64: small, fast and the same everywhere (std distributions are not).
struct Rng {
  uint64_t state = 0;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
};

struct Sm {
  uint64_t clock = 0;  // no step of this SM issues before this cycle
  uint32_t residentWorkgroups = 0;
  uint64_t residentThreads = 0;
  std::vector<OrderEntry> order;  // resident unfinished units sorted by key (not two-level)
  bool hasLast = false;           // some unit has issued (lastHi/lastLo valid)
  bool lastValid = false;         // `last` still names a resident unit
  uint64_t lastHi = 0;
  uint64_t lastLo = 0;
  UnitRef last;
  std::vector<UnitRef> active;  // two-level
  std::deque<UnitRef> pending;  // two-level
  std::vector<size_t> scratch;  // random policy
  Rng rng;
};

enum class Selection { RoundRobin, GreedyThenCyclic, GreedyThenOldest, Random, TwoLevel };

std::string vectorText(const uint32_t* v, uint32_t depth) {
  std::string s = "[";
  for (uint32_t i = 0; i < depth; ++i) {
    if (i) s += ", ";
    s += std::to_string(v[i]);
  }
  return s + "]";
}

}  // namespace

struct Scheduler::Impl {
  Impl(WorkgroupSource* src, std::shared_ptr<const PreparedTrace> trace, const SchedulerConfig& config);

  bool next(WarpStep& out) { return nextBefore(out, UINT64_MAX, UINT32_MAX) == NextStep::Issued; }
  NextStep nextBefore(WarpStep& out, uint64_t limitCycle, uint32_t limitSm);
  void delayWarp(uint64_t key, uint64_t readyCycle);
  void delayWarps(const uint64_t* keys, size_t count, uint64_t readyCycle);
  WarpInfo* warpInfo(uint64_t key);

  // --- units
  bool finished(const Workgroup& wg, uint32_t u) const {
    if (warpPolicy) return wg.warps[u].done == wg.warps[u].lanes;
    return wg.state[u] == kDone;
  }
  bool runnable(const Workgroup& wg, uint32_t u) const {
    if (warpPolicy) return wg.warps[u].runnable > 0;
    return wg.state[u] == kRunning;
  }
  uint64_t readyOf(const Workgroup& wg, uint32_t u) const {
    return wg.warps[warpPolicy ? u : u / warpSize].ready;
  }
  bool eligible(UnitRef r, uint64_t clock) const {
    const Workgroup& wg = *slots[r.slot];
    return runnable(wg, r.unit) && readyOf(wg, r.unit) <= clock;
  }
  std::pair<uint64_t, uint64_t> unitKey(const Workgroup& wg, uint32_t u) const {
    if (warpPolicy && cfg.interWarp == InterWarpOrder::LooseRoundRobin) return {u, wg.id};
    return {wg.id, u};
  }

  // --- workgroups
  void start();
  bool fits(const Sm& sm) const {
    return sm.residentWorkgroups < cfg.maxWorkgroupsPerSm &&
           sm.residentThreads + wgSize <= cfg.maxThreadsPerSm;
  }
  bool pullInto(uint32_t smIndex);
  void startRun(Workgroup& wg, const LoadedWorkgroup& in);  // this run's state of a taken workgroup
  void resume(Workgroup& wg, uint32_t t);  // thread t may go on: done at its end, else running
  void addToSm(uint32_t smIndex, uint32_t slot);
  void retire(uint32_t slot);
  void updateBytes(uint32_t slot);

  // --- issuing
  // 1: `pick` can issue at sm.clock; 0: nothing can, sm.clock moved to the earliest ready
  // cycle; -1: the SM holds no unit.
  int select(Sm& sm, UnitRef& pick);
  int selectTwoLevel(Sm& sm, UnitRef& pick);
  bool advanceClock(Sm& sm);
  void popTop();
  void rekeyTop(uint64_t clock);
  void issue(uint32_t smIndex, UnitRef pick, WarpStep& out);
  void issueWarp(Workgroup& wg, uint32_t w, WarpStep& out);
  bool issueLockstep(Workgroup& wg, uint32_t w, WarpStep& out);
  // A warp step of `op` with `n` lanes, to be filled.
  static LaneAccess* startStep(WarpStep& out, const OpInfo& op, uint32_t n) {
    out.instruction = op.instruction;
    out.kind = static_cast<AccessKind>(op.kind);
    out.flags = op.flags;
    out.lanes.resize(n);
    return out.lanes.data();
  }
  void prefetchUnit(const Workgroup& wg, uint32_t u) const {
    if (!warpPolicy) {
      __builtin_prefetch(&wg.at(u, wg.cursor[u], warpSize));
      return;
    }
    const CompactRecord* records = wg.in->records.data();
    const uint32_t first = u * warpSize, last = first + wg.warps[u].lanes, stride = wg.in->stride[u];
    if (stride != 1) {  // interleaved: the step's records lie side by side
      const uint64_t position = wg.cursor[first];
      const CompactRecord* from = records + wg.in->base[first] + position * stride;
      for (uint32_t k = 0; k < stride; k += 4) __builtin_prefetch(from + k);
      return;
    }
    for (uint32_t t = first; t < last; ++t) __builtin_prefetch(records + wg.in->base[t] + wg.cursor[t]);
  }
  void prefetchNext(const Sm& sm) const;
  void advance(Workgroup& wg, uint32_t t);
  void passRecord(Workgroup& wg, uint32_t t, bool barrier);
  // Thread t has no records left.
  void endThread(Workgroup& wg, WarpInfo& warp, uint32_t t) {
    wg.state[t] = kDone;
    ++wg.done;
    --warp.runnable;
    ++warp.done;
  }
  void release(Workgroup& wg);
  void removeUnit(Sm& sm, const Workgroup& wg, uint32_t slot, uint32_t u);
  // Out of line: only called when the lanes of a warp diverge.
  __attribute__((noinline)) bool earlier(const Workgroup& wg, const CompactRecord& a,
                                         const CompactRecord& b) const;
  void diagnose(Diagnostic::Kind kind, uint64_t workgroup, uint32_t instruction,
                std::string message);

  WorkgroupSource* source;                        // null when scheduling a prepared trace
  std::shared_ptr<const PreparedTrace> prepared;  // null when reading a source
  SchedulerConfig cfg;
  ScheduleInfo info;
  SchedulerStats stats;
  std::vector<Diagnostic> diagnostics;
  uint64_t diagnosticCount = 0;
  bool deepNestSaid = false;  // DeepLoopNest is said once

  bool warpPolicy;
  Selection selection;
  uint32_t warpSize;
  uint32_t wgSize;
  uint32_t warpsPerWg;
  uint64_t totalWorkgroups;

  WorkgroupTrace staging;
  std::vector<uint32_t> laneScratch;        // warpSize entries
  std::vector<const CompactRecord*> recordScratch;  // warpSize entries: the records of laneScratch's lanes
  WorkgroupLoader loader;
  // The kernel's loops when the source knows them (trace files from the trace pass); without
  // them, the loops two instructions share are inferred (LoadedWorkgroup::boundaries).
  std::optional<detail::LoopChains> loops;
  std::vector<std::unique_ptr<Workgroup>> slots;
  std::vector<size_t> slotBytes;
  std::vector<uint32_t> freeSlots;
  std::unordered_map<uint64_t, uint32_t> slotOfWorkgroup;
  uint32_t lastSlot = 0;
  // delayWarp runs once per stalled request (many times per request when warps wait for
  // MSHRs), so it avoids divisions: a warp key's workgroup by shift when warpsPerWg is a power
  // of two, and its slot from a direct-mapped cache checked against the slot's workgroup.
  int warpsPerWgShift = -1;
  static constexpr uint32_t kSlotCacheSize = 256;
  std::vector<uint32_t> slotCache = std::vector<uint32_t>(kSlotCacheSize, 0);  // id % size -> slot
  std::vector<Sm> sms;
  std::vector<std::pair<uint64_t, uint32_t>> heap;  // (clock, sm), min-heap

  bool started = false;
  std::vector<uint32_t> busy;     // SMs that received a workgroup with records in the first dealing
  std::vector<uint32_t> reading;  // those of them that received one with a global load
  bool sourceDone = false;
  uint64_t nextWorkgroupId = 0;
  uint64_t heldBytes = 0;
  uint64_t residentRecords = 0;
};

namespace {

SchedulerConfig validated(SchedulerConfig config) {
  config.validate();
  return config;
}

// `range` when the scheduler can run it with `config`; throws std::invalid_argument otherwise.
const NDRange& schedulable(const NDRange& range, const SchedulerConfig& config) {
  validateRange(range);
  if (range.workgroupSize() > config.maxThreadsPerSm)
    throw std::invalid_argument(
        "scheduler: max_threads_per_sm (" + std::to_string(config.maxThreadsPerSm) +
        ") is smaller than the workgroup size (" + std::to_string(range.workgroupSize()) +
        "): no SM can hold a workgroup; raise max_threads_per_sm (cltrace schedule: --max-threads-per-sm)");
  return range;
}

}  // namespace

Scheduler::Impl::Impl(WorkgroupSource* src, std::shared_ptr<const PreparedTrace> trace, const SchedulerConfig& config)
    : source(src),
      prepared(std::move(trace)),
      cfg(validated(config)),
      loader(cfg, schedulable(src ? src->range() : prepared->range(), cfg)) {
  if (prepared && ((prepared->config().policy == Policy::Warp) != (cfg.policy == Policy::Warp) ||
                   prepared->config().warpSize != cfg.warpSize))
    throw std::invalid_argument("scheduler: the prepared trace was laid out for the " +
                                std::string(policyName(prepared->config().policy)) + " policy with warps of " +
                                std::to_string(prepared->config().warpSize) + ", not for " +
                                policyName(cfg.policy) + " with warps of " + std::to_string(cfg.warpSize));
  const NDRange& range = src ? src->range() : prepared->range();
  warpPolicy = cfg.policy == Policy::Warp;
  warpSize = cfg.warpSize;
  wgSize = static_cast<uint32_t>(range.workgroupSize());
  warpsPerWg = (wgSize + warpSize - 1) / warpSize;
  if (warpsPerWg != 0 && (warpsPerWg & (warpsPerWg - 1)) == 0) warpsPerWgShift = __builtin_ctz(warpsPerWg);
  totalWorkgroups = range.workgroups();
  switch (cfg.policy) {
    case Policy::Sequential:
      selection = Selection::GreedyThenCyclic;
      break;
    case Policy::RoundRobin:
      selection = Selection::RoundRobin;
      break;
    case Policy::Random:
      selection = Selection::Random;
      break;
    case Policy::Warp:
      switch (cfg.interWarp) {
        case InterWarpOrder::LooseRoundRobin:
          selection = Selection::RoundRobin;
          break;
        case InterWarpOrder::GreedyThenOldest:
          selection = Selection::GreedyThenOldest;
          break;
        case InterWarpOrder::TwoLevel:
          selection = Selection::TwoLevel;
          break;
      }
      break;
  }
  info.config = cfg;
  info.laneWidth = warpPolicy ? warpSize : 1;
  info.warpsPerWorkgroup = warpsPerWg;
  info.workgroupCount = totalWorkgroups;
  info.range = range;
  info.kernelName = source ? source->kernelName() : prepared->kernelName();
  if (const LoopNest* nest = source ? source->loopNest() : prepared->loopNest()) loops.emplace(*nest);
  laneScratch.resize(warpSize);
  recordScratch.resize(warpSize);
  sms.resize(cfg.smCount);
  for (uint32_t s = 0; s < cfg.smCount; ++s)
    sms[s].rng.state = cfg.seed ^ (0xD1B54A32D192ED03ull * (s + 1));
}

// ---------------------------------------------------------------------------------------
// Workgroups: loading, SM assignment, retirement.

void Scheduler::Impl::start() {
  started = true;
  // Deal workgroups round-robin over the SMs until every SM is full or the input ends.
  bool progress = true;
  while (progress && !sourceDone) {
    progress = false;
    for (uint32_t s = 0; s < cfg.smCount && !sourceDone; ++s)
      if (fits(sms[s]) && pullInto(s)) progress = true;
  }
  std::vector<bool> loads(cfg.smCount, false);
  for (const std::unique_ptr<Workgroup>& wg : slots)
    if (wg->resident)
      for (const OpInfo& op : wg->in->ops)
        if (op.kind == static_cast<uint8_t>(AccessKind::Load)) loads[wg->sm] = true;
  for (uint32_t s = 0; s < cfg.smCount; ++s)
    if (sms[s].residentWorkgroups > 0) {
      heap.emplace_back(0, s);
      busy.push_back(s);
      if (loads[s]) reading.push_back(s);
    }
  std::make_heap(heap.begin(), heap.end(), std::greater<>());
}

bool Scheduler::Impl::pullInto(uint32_t smIndex) {
  while (nextWorkgroupId < totalWorkgroups || (!prepared && !sourceDone)) {
    const LoadedWorkgroup* loaded;
    if (prepared) {
      loaded = &prepared->workgroup(nextWorkgroupId);
    } else {
      if (!source->nextWorkgroup(staging)) {
        sourceDone = true;
        loader.checkEnd(nextWorkgroupId, totalWorkgroups);
        return false;
      }
      loader.checkId(staging.id, nextWorkgroupId, totalWorkgroups);
      loaded = nullptr;
    }
    ++nextWorkgroupId;
    ++stats.workgroups;

    uint32_t slot;
    if (!freeSlots.empty()) {
      slot = freeSlots.back();
      freeSlots.pop_back();
    } else {
      slot = static_cast<uint32_t>(slots.size());
      slots.push_back(std::make_unique<Workgroup>());
      slotBytes.push_back(0);
    }
    Workgroup& wg = *slots[slot];
    if (!loaded) {
      if (!wg.own) wg.own = std::make_unique<LoadedWorkgroup>();
      loader.load(*wg.own, staging);
      loaded = wg.own.get();
    }
    startRun(wg, *loaded);
    updateBytes(slot);
    if (wg.done == wg.threads) {
      // Nothing to issue: the workgroup is dealt to this SM like any other (it takes this SM's
      // turn of the round-robin deal) and leaves at once.
      freeSlots.push_back(slot);
      return true;
    }
    addToSm(smIndex, slot);
    return true;
  }
  return false;
}

void Scheduler::Impl::updateBytes(uint32_t slot) {
  heldBytes -= slotBytes[slot];
  slotBytes[slot] = slots[slot]->bytes();
  heldBytes += slotBytes[slot];
  const uint64_t inputBytes =
      prepared ? prepared->bytes()
               : staging.records.capacity() * sizeof(Record) + staging.offsets.capacity() * sizeof(uint64_t);
  stats.peakResidentBytes = std::max(stats.peakResidentBytes, heldBytes + inputBytes);
}

void Scheduler::Impl::startRun(Workgroup& wg, const LoadedWorkgroup& in) {
  wg.in = &in;
  wg.id = in.id;
  wg.threads = in.threads;
  wg.blocked = 0;
  wg.done = 0;
  wg.cursor.assign(in.threads, 0);
  wg.state.resize(in.threads);
  wg.warps.assign(warpsPerWg, WarpInfo{});
  for (uint32_t w = 0; w < warpsPerWg; ++w) wg.warps[w].lanes = std::min(warpSize, in.threads - w * warpSize);
  for (uint32_t t = 0; t < in.threads; ++t) resume(wg, t);
  if (in.deepNest && !deepNestSaid) {  // every workgroup runs the same code: said once
    deepNestSaid = true;
    diagnose(Diagnostic::Kind::DeepLoopNest, in.id, *in.deepNest,
             "instruction " + std::to_string(*in.deepNest) + " is nested in more than " +
                 std::to_string(kMaxLoopDepth) + " loops: records keep the " + std::to_string(kMaxLoopDepth) +
                 " outermost counters, so the iterations of the deeper loops look alike and their lanes may "
                 "issue together");
  }
  if (in.saturated)
    diagnose(Diagnostic::Kind::SaturatedLoopCounter, in.id, in.saturated->instruction,
             "workgroup " + std::to_string(in.id) + ", work-item " + std::to_string(in.saturated->thread) +
                 ": a loop counter stopped at " + std::to_string(kMaxIterationCounter) +
                 " (instruction " + std::to_string(in.saturated->instruction) + ", loop level " +
                 std::to_string(in.saturated->level) +
                 "): later iterations of that loop look alike, so the order of its lanes past that "
                 "point is approximate");
}

void Scheduler::Impl::resume(Workgroup& wg, uint32_t t) {
  WarpInfo& warp = wg.warps[t / warpSize];
  if (wg.cursor[t] == wg.in->end[t]) {
    wg.state[t] = kDone;
    ++wg.done;
    ++warp.done;
  } else {
    wg.state[t] = kRunning;
    ++warp.runnable;
  }
}

WorkgroupLoader::WorkgroupLoader(const SchedulerConfig& config, const NDRange& range)
    : warpPolicy(config.policy == Policy::Warp),
      warpSize(config.warpSize),
      wgSize(static_cast<uint32_t>(range.workgroupSize())),
      warpsPerWg((wgSize + warpSize - 1) / warpSize) {}

void WorkgroupLoader::checkId(uint64_t id, uint64_t expected, uint64_t total) {
  if (id != expected || expected >= total)
    throw std::runtime_error("scheduler: workgroup source gave workgroup " + std::to_string(id) + ", expected " +
                             (expected >= total
                                  ? std::string("no more (the NDRange has ") + std::to_string(total) + ")"
                                  : std::to_string(expected)));
}

void WorkgroupLoader::checkEnd(uint64_t given, uint64_t total) {
  if (given != total)
    throw std::runtime_error("scheduler: workgroup source ended after " + std::to_string(given) + " of " +
                             std::to_string(total) + " workgroups");
}

void WorkgroupLoader::load(LoadedWorkgroup& wg, const WorkgroupTrace& in) {
  const std::string where = "scheduler: workgroup " + std::to_string(in.id);
  if (in.threadCount() != wgSize)
    throw std::runtime_error(where + " has " + std::to_string(in.threadCount()) +
                             " work-items, the NDRange says " + std::to_string(wgSize));
  if (in.offsets[0] != 0 || in.offsets[wgSize] != in.records.size())
    throw std::runtime_error(where + ": record offsets do not cover its records");

  wg.id = in.id;
  wg.threads = wgSize;
  wg.recordCount = in.records.size();
  wg.base.resize(wgSize);
  wg.stride.resize(warpsPerWg);
  wg.end.resize(wgSize);
  wg.shortest.resize(warpsPerWg);
  wg.iters.clear();
  wg.ops.clear();
  wg.boundaries.clear();
  wg.saturated.reset();
  wg.deepNest.reset();
  for (OpCacheEntry& e : opCache) e.valid = false;
  // The layout (see LoadedWorkgroup::records).
  uint64_t region = 0;
  for (uint32_t w = 0; w < warpsPerWg; ++w) {
    const uint32_t first = w * warpSize, lanes = std::min(warpSize, wgSize - first);
    uint64_t longest = 0, shortest = UINT64_MAX;
    for (uint32_t t = first; t < first + lanes; ++t) {
      if (in.offsets[t + 1] < in.offsets[t])
        throw std::runtime_error(where + ": record offsets of work-item " + std::to_string(t) + " decrease");
      longest = std::max<uint64_t>(longest, in.offsets[t + 1] - in.offsets[t]);
      shortest = std::min<uint64_t>(shortest, in.offsets[t + 1] - in.offsets[t]);
    }
    wg.shortest[w] = shortest;
    const uint64_t own = in.offsets[first + lanes] - in.offsets[first];
    const bool interleave = warpPolicy && lanes > 1 && longest * lanes <= 2 * own;
    wg.stride[w] = interleave ? lanes : 1;
    for (uint32_t t = first; t < first + lanes; ++t)
      wg.base[t] = interleave ? region + (t - first) : region + (in.offsets[t] - in.offsets[first]);
    region += interleave ? longest * lanes : own;
  }
  wg.records.resize(region);

  struct LevelLast {
    uint32_t instruction;
    uint32_t iter;
  };
  LevelLast lastAt[kMaxLoopDepth];
  const Record* records = in.records.data();
  CompactRecord* out = wg.records.data();
  for (uint32_t t = 0; t < wgSize; ++t) {
    const uint64_t begin = in.offsets[t], end = in.offsets[t + 1];
    wg.end[t] = end - begin;
    CompactRecord* const threadOut = out + wg.base[t];
    const uint64_t threadStride = wg.stride[t / warpSize];
    uint32_t known = 0;  // levels of lastAt that are valid
    const Record* prev = nullptr;
    uint32_t prevIter = 0, prevDepth = 0;
    for (uint64_t i = begin; i < end; ++i) {
      const Record& r = records[i];
      if (r.kind >= kAccessKindCount)
        throw std::runtime_error(where + ", work-item " + std::to_string(t) + ", record " +
                                 std::to_string(i - begin) + ": unknown access kind " +
                                 std::to_string(r.kind));
      const uint32_t depth = std::min<uint32_t>(r.depth, kMaxLoopDepth);
      uint32_t iter;
      if (prev && depth == prevDepth &&
          detail::sameCounters(r.iterations, prev->iterations, depth)) {
        iter = prevIter;
      } else {
        const size_t interned = wg.iters.size();
        iter = wg.iters.intern(r.iterations, depth, prev ? prevIter + 1 : 0);
        if (wg.iters.size() != interned && !wg.saturated) noteSaturated(wg, r, depth, t);
        for (uint32_t k = 0; k < depth && k < known; ++k) {
          const uint32_t* v = wg.iters.counters(lastAt[k].iter);
          if (r.iterations[k] < v[k] && detail::sameCounters(v, r.iterations, k) &&
              lastAt[k].instruction < r.instruction && wg.boundaries.size() < kMaxBoundaries) {
            const Boundary b{k, lastAt[k].instruction, r.instruction};
            bool seen = false;
            for (const Boundary& x : wg.boundaries)
              if (x.level == b.level && x.a == b.a && x.b == b.b) seen = true;
            if (!seen) wg.boundaries.push_back(b);
          }
        }
      }
      // lastAt[k]: the thread's latest record inside at least k + 1 loops. Records in
      // between that are shallower do not invalidate it: the outer counters are compared
      // before a boundary is concluded.
      for (uint32_t k = 0; k < depth; ++k) lastAt[k] = {r.instruction, iter};
      known = std::max(known, depth);
      threadOut[(i - begin) * threadStride] = CompactRecord{r.address, internOp(wg, r), iter};
      prev = &r;
      prevIter = iter;
      prevDepth = depth;
    }
  }
}

uint32_t WorkgroupLoader::internOp(LoadedWorkgroup& wg, const Record& r) {
  OpCacheEntry& e = opCache[r.instruction & (opCache.size() - 1)];
  auto same = [&r](const OpInfo& o) {
    return o.instruction == r.instruction && o.size == r.size && o.kind == r.kind &&
           o.flags == r.flags;
  };
  if (e.valid && same(e.info)) return e.op;
  uint32_t op = 0;
  while (op < wg.ops.size() && !same(wg.ops[op])) ++op;
  if (op == wg.ops.size()) {
    uint32_t instance = op;
    for (uint32_t o = 0; o < op && instance == op; ++o)
      if (wg.ops[o].instruction == r.instruction && wg.ops[o].kind == r.kind && wg.ops[o].flags == r.flags)
        instance = wg.ops[o].instance;
    wg.ops.push_back(OpInfo{r.instruction, r.size, r.kind, r.flags, instance});
    if ((r.flags & kRecordDepthTruncated) && !wg.deepNest) wg.deepNest = r.instruction;
  }
  e = OpCacheEntry{wg.ops[op], op, true};
  return op;
}

void Scheduler::Impl::addToSm(uint32_t smIndex, uint32_t slot) {
  Workgroup& wg = *slots[slot];
  Sm& sm = sms[smIndex];
  wg.sm = smIndex;
  wg.resident = true;
  ++sm.residentWorkgroups;
  sm.residentThreads += wg.threads;
  slotOfWorkgroup[wg.id] = slot;
  slotCache[wg.id % kSlotCacheSize] = slot;
  residentRecords += wg.in->recordCount;
  stats.peakResidentRecords = std::max(stats.peakResidentRecords, residentRecords);
  uint64_t residentWgs = slotOfWorkgroup.size();
  stats.peakResidentWorkgroups = std::max(stats.peakResidentWorkgroups, residentWgs);

  const uint32_t units = warpPolicy ? warpsPerWg : wg.threads;
  for (uint32_t w = 0; w < warpsPerWg; ++w) wg.warps[w].ready = 0;
  if (selection == Selection::TwoLevel) {
    for (uint32_t u = 0; u < units; ++u)
      if (!finished(wg, u)) sm.pending.push_back({slot, u});
    return;
  }
  const size_t mid = sm.order.size();
  for (uint32_t u = 0; u < units; ++u) {
    if (finished(wg, u)) continue;
    const auto [hi, lo] = unitKey(wg, u);
    sm.order.push_back({hi, lo, {slot, u}});
  }
  // New entries are sorted among themselves; merge them into the SM's order.
  std::inplace_merge(
      sm.order.begin(), sm.order.begin() + static_cast<ptrdiff_t>(mid), sm.order.end(),
      [](const OrderEntry& x, const OrderEntry& y) { return keyLess(x.hi, x.lo, y.hi, y.lo); });
}

void Scheduler::Impl::retire(uint32_t slot) {
  Workgroup& wg = *slots[slot];
  Sm& sm = sms[wg.sm];
  auto inSlot = [slot](const auto& x) {
    if constexpr (std::is_same_v<std::decay_t<decltype(x)>, OrderEntry>)
      return x.ref.slot == slot;
    else
      return x.slot == slot;
  };
  sm.order.erase(std::remove_if(sm.order.begin(), sm.order.end(), inSlot), sm.order.end());
  sm.active.erase(std::remove_if(sm.active.begin(), sm.active.end(), inSlot), sm.active.end());
  sm.pending.erase(std::remove_if(sm.pending.begin(), sm.pending.end(), inSlot), sm.pending.end());
  if (sm.lastValid && sm.last.slot == slot) sm.lastValid = false;
  --sm.residentWorkgroups;
  sm.residentThreads -= wg.threads;
  residentRecords -= wg.in->recordCount;
  slotOfWorkgroup.erase(wg.id);
  wg.resident = false;
  freeSlots.push_back(slot);
}

void Scheduler::Impl::removeUnit(Sm& sm, const Workgroup& wg, uint32_t slot, uint32_t u) {
  if (selection == Selection::TwoLevel) return;  // dropped lazily by selectTwoLevel
  const auto [hi, lo] = unitKey(wg, u);
  auto it = std::lower_bound(sm.order.begin(), sm.order.end(), std::make_pair(hi, lo),
                             [](const OrderEntry& e, const std::pair<uint64_t, uint64_t>& k) {
                               return keyLess(e.hi, e.lo, k.first, k.second);
                             });
  if (it != sm.order.end() && it->ref.slot == slot && it->ref.unit == u) sm.order.erase(it);
}

// ---------------------------------------------------------------------------------------
// Selection among the resident units of one SM.

bool Scheduler::Impl::advanceClock(Sm& sm) {
  // Nothing can issue at sm.clock: move the clock to the earliest ready cycle of a runnable
  // unit. Returns false when no unit is runnable at all.
  uint64_t earliest = UINT64_MAX;
  auto consider = [&](UnitRef r) {
    const Workgroup& wg = *slots[r.slot];
    if (runnable(wg, r.unit)) earliest = std::min(earliest, readyOf(wg, r.unit));
  };
  for (const OrderEntry& e : sm.order) consider(e.ref);
  for (UnitRef r : sm.active) consider(r);
  for (UnitRef r : sm.pending) consider(r);
  if (earliest == UINT64_MAX) return false;
  sm.clock = std::max(sm.clock + 1, earliest);
  return true;
}

int Scheduler::Impl::selectTwoLevel(Sm& sm, UnitRef& pick) {
  const uint64_t clock = sm.clock;
  // Demote active units that cannot issue now; drop finished ones.
  size_t keep = 0;
  for (UnitRef r : sm.active) {
    const Workgroup& wg = *slots[r.slot];
    if (finished(wg, r.unit)) continue;
    if (eligible(r, clock))
      sm.active[keep++] = r;
    else
      sm.pending.push_back(r);
  }
  sm.active.resize(keep);
  // Promote ready pending units, oldest first, until the active set is full.
  for (auto it = sm.pending.begin();
       it != sm.pending.end() && sm.active.size() < cfg.twoLevelActiveWarps;) {
    const Workgroup& wg = *slots[it->slot];
    if (finished(wg, it->unit)) {
      it = sm.pending.erase(it);
    } else if (eligible(*it, clock)) {
      sm.active.push_back(*it);
      it = sm.pending.erase(it);
    } else {
      ++it;
    }
  }
  if (sm.active.empty()) {
    if (sm.pending.empty()) return -1;
    if (!advanceClock(sm))
      throw std::logic_error("scheduler: internal error: no runnable warp on an SM");
    return 0;
  }
  // Round-robin inside the active set: issue the front, rotate it to the back.
  pick = sm.active.front();
  sm.active.erase(sm.active.begin());
  sm.active.push_back(pick);
  return 1;
}

int Scheduler::Impl::select(Sm& sm, UnitRef& pick) {
  if (selection == Selection::TwoLevel) return selectTwoLevel(sm, pick);
  const std::vector<OrderEntry>& order = sm.order;
  const size_t n = order.size();
  if (n == 0) return -1;
  const uint64_t clock = sm.clock;

  if ((selection == Selection::GreedyThenCyclic || selection == Selection::GreedyThenOldest) &&
      sm.lastValid && eligible(sm.last, clock)) {
    pick = sm.last;
    return 1;
  }
  if (selection == Selection::Random) {
    for (int attempt = 0; attempt < 8; ++attempt) {
      const size_t i = static_cast<size_t>(sm.rng.below(n));
      if (eligible(order[i].ref, clock)) {
        pick = order[i].ref;
        return 1;
      }
    }
    sm.scratch.clear();
    for (size_t i = 0; i < n; ++i)
      if (eligible(order[i].ref, clock)) sm.scratch.push_back(i);
    if (!sm.scratch.empty()) {
      pick = order[sm.scratch[static_cast<size_t>(sm.rng.below(sm.scratch.size()))]].ref;
      return 1;
    }
  } else {
    size_t start = 0;
    if (selection != Selection::GreedyThenOldest && sm.hasLast) {
      const uint64_t hi = sm.lastHi, lo = sm.lastLo;
      start = static_cast<size_t>(
          std::upper_bound(order.begin(), order.end(), std::make_pair(hi, lo),
                           [](const std::pair<uint64_t, uint64_t>& k, const OrderEntry& e) {
                             return keyLess(k.first, k.second, e.hi, e.lo);
                           }) -
          order.begin());
      if (start == n) start = 0;
    }
    for (size_t i = 0, idx = start; i < n; ++i, idx = (idx + 1 == n ? 0 : idx + 1)) {
      if (eligible(order[idx].ref, clock)) {
        pick = order[idx].ref;
        return 1;
      }
    }
  }
  if (!advanceClock(sm))
    throw std::logic_error("scheduler: internal error: no runnable warp on an SM");
  return 0;
}

// Records are stored thread by thread, so a warp's lanes read from as many cache lines as it
// has threads, and with many resident warps those lines rarely survive until the warp's next
// step. Loading the lines of the warp this SM will most likely issue next, while the other
// SMs issue theirs, hides most of that latency.
void Scheduler::Impl::prefetchNext(const Sm& sm) const {
  if (selection == Selection::TwoLevel) {
    if (!sm.active.empty()) prefetchUnit(*slots[sm.active.front().slot], sm.active.front().unit);
    return;
  }
  const size_t n = sm.order.size();
  if (n == 0 || selection == Selection::Random) return;
  if (selection != Selection::RoundRobin && sm.lastValid) {
    prefetchUnit(*slots[sm.last.slot], sm.last.unit);  // greedy: probably the same unit
    return;
  }
  size_t next = static_cast<size_t>(
      std::upper_bound(sm.order.begin(), sm.order.end(), std::make_pair(sm.lastHi, sm.lastLo),
                       [](const std::pair<uint64_t, uint64_t>& k, const OrderEntry& e) {
                         return keyLess(k.first, k.second, e.hi, e.lo);
                       }) -
      sm.order.begin());
  if (next == n) next = 0;
  prefetchUnit(*slots[sm.order[next].ref.slot], sm.order[next].ref.unit);
}

// ---------------------------------------------------------------------------------------
// Program order of two instruction instances of one workgroup.
//
// a comes before b when, over the loops that enclose both (their shared loop prefix), a's
// iteration counters are lexicographically smaller; with equal shared counters, when a's
// instruction id is smaller. The shared prefix is min(depth a, depth b) levels, cut short at
// the first level where the workgroup's records prove the two instructions lie in different
// (sibling) loops; with the kernel's loop nest, the loops that enclose both are known. The
// remaining ties (only possible for malformed input) are broken by depth and intern id so that
// the order is total and deterministic.
bool Scheduler::Impl::earlier(const Workgroup& wg, const CompactRecord& a,
                              const CompactRecord& b) const {
  const uint32_t da = wg.in->iters.depth(a.iter), db = wg.in->iters.depth(b.iter);
  const uint32_t* va = wg.in->iters.counters(a.iter);
  const uint32_t* vb = wg.in->iters.counters(b.iter);
  uint32_t shared = std::min(da, db);
  const uint32_t ia = wg.instruction(a), ib = wg.instruction(b);
  if (ia == ib) {
    // One instruction: the same loops.
  } else if (loops && loops->covers(ia, ib)) {
    shared = loops->shared(ia, ib, shared);
  } else if (!wg.in->boundaries.empty()) {
    const uint32_t lo = std::min(ia, ib);
    const uint32_t hi = std::max(ia, ib);
    for (const Boundary& x : wg.in->boundaries)
      if (x.level < shared && lo <= x.a && x.b <= hi) shared = x.level;
  }
  for (uint32_t k = 0; k < shared; ++k)
    if (va[k] != vb[k]) return va[k] < vb[k];
  if (ia != ib) return ia < ib;
  if (da != db) return da < db;
  if (a.iter != b.iter) return a.iter < b.iter;
  return a.op < b.op;
}

// ---------------------------------------------------------------------------------------
// Issuing.

void Scheduler::Impl::advance(Workgroup& wg, uint32_t t) {
  passRecord(wg, t, wg.op(wg.at(t, wg.cursor[t], warpSize)).kind == static_cast<uint8_t>(AccessKind::Barrier));
}

// Thread t goes past its current record, which is a barrier's when `barrier`.
void Scheduler::Impl::passRecord(Workgroup& wg, uint32_t t, bool barrier) {
  ++wg.cursor[t];
  WarpInfo& warp = wg.warps[t / warpSize];
  if (barrier) {
    wg.state[t] = kBlocked;
    ++wg.blocked;
    --warp.runnable;
  } else if (wg.cursor[t] == wg.in->end[t]) [[unlikely]] {
    endThread(wg, warp, t);
  }
}

void Scheduler::Impl::issueWarp(Workgroup& wg, uint32_t w, WarpStep& out) {
  const uint32_t first = w * warpSize;
  const uint32_t last = first + wg.warps[w].lanes;
  const CompactRecord* records = wg.in->records.data();
  const uint64_t* cursor = wg.cursor.data();
  const uint64_t* base = wg.in->base.data();
  const uint64_t stride = wg.in->stride[w];
  const uint8_t* state = wg.state.data();
  uint32_t* chosen = laneScratch.data();
  const CompactRecord** chosenRecord = recordScratch.data();
  uint32_t n = 0;
  prefetchUnit(wg, w);  // the lanes' records lie in different cache lines: load them together
  if (stride == last - first && wg.warps[w].runnable == last - first && issueLockstep(wg, w, out)) return;
  const CompactRecord* best = nullptr;
  for (uint32_t t = first; t < last; ++t) {
    if (state[t] != kRunning) continue;
    const CompactRecord* r = records + base[t] + cursor[t] * stride;
    if (best && (r->iter != best->iter || (r->op != best->op && wg.op(*r).instance != wg.op(*best).instance))) {
      if (!earlier(wg, *r, *best)) continue;
      n = 0;  // an earlier instance: start the group again
    }
    best = r;
    chosenRecord[n] = r;
    chosen[n++] = t;
  }
  const OpInfo& op = wg.op(*best);
  LaneAccess* lanes = startStep(out, op, n);
  LaneBounds bounds;  // noted while the lanes are filled (a local, so it stays in registers)
  const uint32_t size = op.size;
  for (uint32_t i = 0; i < n; ++i) {
    const uint64_t address = chosenRecord[i]->address;
    const uint32_t laneSize = chosenRecord[i]->op == best->op ? size : wg.op(*chosenRecord[i]).size;
    lanes[i] = LaneAccess{chosen[i], laneSize, address};
    bounds.add(address, laneSize);
  }
  out.bounds = bounds;
  out.hasBounds = true;
  // The records just issued are one instance (of ops that differ at most in size): its kind is
  // looked up once.
  const bool barrier = op.kind == static_cast<uint8_t>(AccessKind::Barrier);
  for (uint32_t i = 0; i < n; ++i) passRecord(wg, chosen[i], barrier);
}

// The common case of an interleaved warp: every lane runs, at one position, and the records
// there are one instance of one op, so the step takes them all, side by side. The choosing
// pass of issueWarp would pick the same lanes in the same order; this one reads no lane twice.
// Returns false, having changed nothing, when the lanes are not in step.
bool Scheduler::Impl::issueLockstep(Workgroup& wg, uint32_t w, WarpStep& out) {
  const uint32_t first = w * warpSize;
  const uint32_t n = wg.warps[w].lanes;
  uint64_t* cursor = wg.cursor.data() + first;
  const uint64_t position = cursor[0];
  // Within the warp's region whatever the other lanes' positions (position < its length).
  const CompactRecord* row = wg.in->records.data() + wg.in->base[first] + position * n;
  const uint64_t instance = opAndIter(row[0]);
  uint64_t differ = 0;
  for (uint32_t i = 1; i < n; ++i) differ |= (cursor[i] ^ position) | (opAndIter(row[i]) ^ instance);
  if (differ != 0) return false;

  const OpInfo& op = wg.op(row[0]);
  LaneAccess* lanes = startStep(out, op, n);
  LaneBounds bounds;
  const uint32_t size = op.size;
  for (uint32_t i = 0; i < n; ++i) {
    lanes[i] = LaneAccess{first + i, size, row[i].address};
    bounds.add(row[i].address, size);
  }
  out.bounds = bounds;
  out.hasBounds = true;

  WarpInfo& warp = wg.warps[w];
  uint8_t* state = wg.state.data() + first;
  const uint64_t next = position + 1;
  for (uint32_t i = 0; i < n; ++i) cursor[i] = next;
  // The warp's next step most likely reads the next row (when no lane ends here): start
  // loading it into the host's L2 now, long before it issues.
  const bool ending = next >= wg.in->shortest[w];
  if (!ending)
    for (uint32_t k = 0; k < n; k += 4) __builtin_prefetch(row + n + k, 0, 2);
  if (op.kind == static_cast<uint8_t>(AccessKind::Barrier)) {
    for (uint32_t i = 0; i < n; ++i) state[i] = kBlocked;
    wg.blocked += n;
    warp.runnable -= n;
    return true;
  }
  if (ending) [[unlikely]] {  // some lane reached its end
    const uint64_t* end = wg.in->end.data() + first;
    for (uint32_t i = 0; i < n; ++i)
      if (end[i] == next) endThread(wg, warp, first + i);
  }
  return true;
}

void Scheduler::Impl::issue(uint32_t smIndex, UnitRef pick, WarpStep& out) {
  Sm& sm = sms[smIndex];
  Workgroup& wg = *slots[pick.slot];
  const uint32_t w = warpPolicy ? pick.unit : pick.unit / warpSize;
  WarpInfo& warp = wg.warps[w];
  out.sm = smIndex;
  out.workgroup = wg.id;
  out.warp = w;
  out.step = warp.steps++;
  out.warpKey = wg.id * warpsPerWg + w;
  out.cycle = sm.clock;
  if (warpPolicy) {
    issueWarp(wg, w, out);
  } else {
    const uint32_t t = pick.unit;
    const CompactRecord& r = wg.at(t, wg.cursor[t], warpSize);
    out.lanes.clear();
    const OpInfo& op = wg.op(r);
    out.lanes.push_back(LaneAccess{t, op.size, r.address});
    out.bounds = LaneBounds{r.address, r.address, r.address, r.address, op.size};
    out.hasBounds = true;
    out.instruction = op.instruction;
    out.kind = static_cast<AccessKind>(op.kind);
    out.flags = op.flags;
    advance(wg, t);
  }
  warp.ready = sm.clock + 1;
  ++stats.steps;
  stats.lanes += out.lanes.size();
  lastSlot = pick.slot;

  const auto [hi, lo] = unitKey(wg, pick.unit);
  sm.hasLast = true;
  sm.lastValid = true;
  sm.lastHi = hi;
  sm.lastLo = lo;
  sm.last = pick;

  bool released = false;
  if (wg.blocked > 0 && wg.blocked + wg.done == wg.threads) {
    release(wg);
    released = true;
  }
  if (wg.done == wg.threads) {
    retire(pick.slot);
    while (fits(sm) && pullInto(smIndex)) {
    }
    return;
  }
  if (released) {
    const uint32_t units = warpPolicy ? warpsPerWg : wg.threads;
    for (uint32_t u = 0; u < units; ++u)
      if (finished(wg, u)) removeUnit(sm, wg, pick.slot, u);
  } else if (finished(wg, pick.unit)) {
    removeUnit(sm, wg, pick.slot, pick.unit);
  }
}

void Scheduler::Impl::release(Workgroup& wg) {
  ++stats.barrierReleases;
  const CompactRecord* first = nullptr;
  const CompactRecord* other = nullptr;
  for (uint32_t t = 0; t < wg.threads; ++t) {
    if (wg.state[t] != kBlocked) continue;
    const CompactRecord& r = wg.at(t, wg.cursor[t] - 1, warpSize);
    if (!first)
      first = &r;
    else if (!other && (wg.instruction(r) != wg.instruction(*first) || r.iter != first->iter))
      other = &r;
  }
  auto instance = [&](const CompactRecord& r) {
    return "instruction " + std::to_string(wg.instruction(r)) + ", iteration " +
           vectorText(wg.in->iters.counters(r.iter), wg.in->iters.depth(r.iter));
  };
  if (wg.done > 0)
    diagnose(Diagnostic::Kind::PartialBarrier, wg.id, wg.instruction(*first),
             "workgroup " + std::to_string(wg.id) + ": barrier (" + instance(*first) +
                 ") reached by " + std::to_string(wg.blocked) + " of " +
                 std::to_string(wg.threads) + " work-items, the other " + std::to_string(wg.done) +
                 " had finished (this would deadlock on a GPU); released");
  if (other)
    diagnose(Diagnostic::Kind::MismatchedBarrier, wg.id, wg.instruction(*first),
             "workgroup " + std::to_string(wg.id) + ": work-items wait at different barriers (" +
                 instance(*first) + " and " + instance(*other) + "); released together");
  for (uint32_t t = 0; t < wg.threads; ++t)
    if (wg.state[t] == kBlocked) resume(wg, t);
  wg.blocked = 0;
}

void Scheduler::Impl::diagnose(Diagnostic::Kind kind, uint64_t workgroup, uint32_t instruction,
                               std::string message) {
  ++diagnosticCount;
  if (diagnostics.size() < cfg.maxDiagnostics)
    diagnostics.push_back(Diagnostic{kind, workgroup, instruction, std::move(message)});
}

NextStep Scheduler::Impl::nextBefore(WarpStep& out, uint64_t limitCycle, uint32_t limitSm) {
  if (!started) start();
  while (!heap.empty()) {
    // The SM stays at the top while it is chosen and only its key changes, so it is
    // re-keyed in place (one sift-down) rather than popped and pushed again. Keys are
    // distinct (one entry per SM), so the order of the SMs does not depend on the heap's
    // layout.
    const uint32_t s = heap.front().second;
    // The top SM's clock is the earliest any step can issue: nothing issues at or after the
    // limit (select() is not called, since choosing a warp changes its state). An SM whose
    // clock moved on with no warp ready only waited: the clock stays a valid bound whatever
    // delays come.
    const uint64_t clock = heap.front().first;
    if (!issuesBefore(clock, s, limitCycle, limitSm)) return NextStep::NotBefore;
    Sm& sm = sms[s];
    UnitRef pick;
    const int found = select(sm, pick);
    if (found == 1) {
      issue(s, pick, out);
      prefetchNext(sm);
      ++sm.clock;
      if (sm.residentWorkgroups > 0)
        rekeyTop(sm.clock);
      else
        popTop();
      return NextStep::Issued;
    }
    if (found == 0)
      rekeyTop(sm.clock);
    else
      popTop();
  }
  return NextStep::Finished;
}

void Scheduler::Impl::popTop() {
  std::pop_heap(heap.begin(), heap.end(), std::greater<>());
  heap.pop_back();
}

// Gives the top of the min-heap the larger key `clock` and restores the heap property.
void Scheduler::Impl::rekeyTop(uint64_t clock) {
  const std::pair<uint64_t, uint32_t> entry(clock, heap.front().second);
  const size_t n = heap.size();
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && heap[c + 1] < heap[c]) ++c;
    if (!(heap[c] < entry)) break;
    heap[i] = heap[c];
    i = c;
  }
  heap[i] = entry;
}

// The warp `key` names, or null when its workgroup has finished.
WarpInfo* Scheduler::Impl::warpInfo(uint64_t key) {
  const uint64_t id = warpsPerWgShift >= 0 ? key >> warpsPerWgShift : key / warpsPerWg;
  const uint32_t w = static_cast<uint32_t>(key - id * warpsPerWg);
  if (id >= nextWorkgroupId)
    throw std::invalid_argument("scheduler: delayWarp: warp key " + std::to_string(key) +
                                " was never issued");
  Workgroup* wg = nullptr;
  auto holds = [&](uint32_t slot) { return slot < slots.size() && slots[slot]->resident && slots[slot]->id == id; };
  if (holds(lastSlot)) {
    wg = slots[lastSlot].get();
  } else if (const uint32_t cached = slotCache[id % kSlotCacheSize]; holds(cached)) {
    wg = slots[cached].get();
  } else {
    auto it = slotOfWorkgroup.find(id);
    if (it == slotOfWorkgroup.end()) return nullptr;  // finished
    wg = slots[it->second].get();
  }
  return &wg->warps[w];
}

void Scheduler::Impl::delayWarp(uint64_t key, uint64_t readyCycle) {
  if (WarpInfo* warp = warpInfo(key)) warp->ready = std::max(warp->ready, readyCycle);
}

// A herd of warps waiting for a full SM (many per request on gathers) lies in many workgroups:
// all of a batch are found first, their entries prefetched, and then updated, so that their
// cache misses overlap instead of following one another.
void Scheduler::Impl::delayWarps(const uint64_t* keys, size_t count, uint64_t readyCycle) {
  constexpr size_t kBatch = 16;
  WarpInfo* found[kBatch];
  for (size_t i = 0; i < count; i += kBatch) {
    const size_t n = std::min(kBatch, count - i);
    for (size_t j = 0; j < n; ++j) {
      found[j] = warpInfo(keys[i + j]);
      if (found[j]) __builtin_prefetch(found[j], 1);
    }
    for (size_t j = 0; j < n; ++j)
      if (found[j]) found[j]->ready = std::max(found[j]->ready, readyCycle);
  }
}

// ---------------------------------------------------------------------------------------

Scheduler::Scheduler(WorkgroupSource& source, const SchedulerConfig& config)
    : impl_(std::make_unique<Impl>(&source, nullptr, config)) {}
Scheduler::Scheduler(std::shared_ptr<const PreparedTrace> trace, const SchedulerConfig& config)
    : impl_(std::make_unique<Impl>(nullptr,
                                   trace ? std::move(trace)
                                         : throw std::invalid_argument("scheduler: no prepared trace"),
                                   config)) {}

std::shared_ptr<const PreparedTrace> PreparedTrace::load(WorkgroupSource& source, const SchedulerConfig& config,
                                                         uint64_t maxBytes) {
  const SchedulerConfig cfg = validated(config);
  std::shared_ptr<PreparedTrace> trace(new PreparedTrace());
  trace->range_ = schedulable(source.range(), cfg);
  trace->kernelName_ = source.kernelName();
  if (const LoopNest* nest = source.loopNest()) trace->loopNest_ = *nest;
  trace->config_ = cfg;
  WorkgroupLoader loader(cfg, trace->range_);
  const uint64_t total = trace->range_.workgroups();
  // The count comes from the trace's header: a file that claims 2^32 workgroups and holds a
  // few must not reserve gigabytes first.
  trace->workgroups_.reserve(std::min<uint64_t>(total, 1u << 16));
  WorkgroupTrace staging;
  while (source.nextWorkgroup(staging)) {
    WorkgroupLoader::checkId(staging.id, trace->workgroups_.size(), total);
    auto wg = std::make_unique<LoadedWorkgroup>();
    loader.load(*wg, staging);
    wg->records.shrink_to_fit();
    trace->bytes_ += wg->bytes();
    if (trace->bytes_ > maxBytes) return nullptr;
    trace->workgroups_.push_back(std::move(wg));
  }
  WorkgroupLoader::checkEnd(trace->workgroups_.size(), total);
  trace->bytes_ += trace->workgroups_.capacity() * sizeof(trace->workgroups_[0]);
  return trace;
}

PreparedTrace::~PreparedTrace() = default;
Scheduler::~Scheduler() = default;
bool Scheduler::next(WarpStep& out) { return impl_->next(out); }
NextStep Scheduler::nextBefore(WarpStep& out, uint64_t cycle, uint32_t sm) { return impl_->nextBefore(out, cycle, sm); }
void Scheduler::delayWarp(uint64_t warpKey, uint64_t readyCycle) {
  impl_->delayWarp(warpKey, readyCycle);
}
void Scheduler::delayWarps(const uint64_t* warpKeys, size_t count, uint64_t readyCycle) {
  impl_->delayWarps(warpKeys, count, readyCycle);
}
const ScheduleInfo& Scheduler::info() const { return impl_->info; }
const std::vector<Diagnostic>& Scheduler::diagnostics() const { return impl_->diagnostics; }
uint64_t Scheduler::diagnosticCount() const { return impl_->diagnosticCount; }
const SchedulerStats& Scheduler::stats() const { return impl_->stats; }

}  // namespace cltrace::sched

namespace cltrace::sched {

std::optional<std::vector<uint32_t>> Scheduler::busySms() const {
  if (!impl_->started) impl_->start();  // deals the first workgroups; next() carries on from there
  return impl_->busy;
}

std::optional<std::vector<uint32_t>> Scheduler::readingSms() const {
  if (!impl_->started) impl_->start();
  return impl_->reading;
}

}  // namespace cltrace::sched
