#include "cltrace/cachesim/simulator.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <system_error>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "cltrace/cachesim/coalescer.h"
#include "cltrace/cachesim/replay_queue.h"

namespace cltrace::cachesim {

namespace {

// State of one step being processed (possibly over several retries).
struct Progress {
  std::vector<uint64_t> lines;
  size_t next = 0;       // first line not yet accepted
  uint64_t ready = 0;    // when the warp has the data of the lines accepted so far
  bool started = false;  // counted and coalesced

  void reset() {
    lines.clear();
    next = 0;
    ready = 0;
    started = false;
  }
};

// The run's static instructions in the order they first appear, numbered 0, 1, ...: every SM
// keeps its per-instruction statistics at these numbers, so one lookup per step serves all SMs.
class InstructionNumbers {
 public:
  static constexpr uint32_t kDirectIds = 1u << 16;  // ids below this are found by indexing

  // Warps interleave their instructions, so the previous id rarely repeats: a lookup per step.
  uint32_t of(uint32_t id) {
    if (id < direct_.size() && direct_[id] != 0) [[likely]]
      return direct_[id] - 1;
    return add(id);
  }
  uint32_t id(uint32_t number) const { return ids_[number]; }

 private:
  [[gnu::noinline]] uint32_t add(uint32_t id) {
    uint32_t* slot;
    if (id < kDirectIds) {
      if (id >= direct_.size()) direct_.resize(std::max<size_t>(size_t(id) + 1, direct_.size() * 2));
      slot = &direct_[id];
    } else {
      slot = &far_[id];
    }
    if (*slot == 0) {
      ids_.push_back(id);
      *slot = static_cast<uint32_t>(ids_.size());
    }
    return *slot - 1;
  }
  std::vector<uint32_t> direct_;                // id -> number + 1 (0: not seen yet)
  std::unordered_map<uint32_t, uint32_t> far_;  // larger ids (trace files have dense ids)
  std::vector<uint32_t> ids_;                   // number -> id
};

// One simulated SM: its L1 and per-instruction statistics.
struct SmState {
  std::unique_ptr<SmModel> model;
  // By the run's instruction number (InstructionNumbers); an instruction this SM has not run
  // has steps == 0.
  std::vector<InstructionStats> ins;

  InstructionStats& instruction(uint32_t number) {
    if (number < ins.size()) [[likely]]
      return ins[number];
    return grow(number);
  }
  [[gnu::noinline]] InstructionStats& grow(uint32_t number) {
    ins.resize(std::max<size_t>(size_t(number) + 1, ins.size() * 2));
    return ins[number];
  }
};

// A held warp's steps, first in first out, in a ring of power-of-two size. Warps that miss are
// held often (mv: most steps wait for MSHRs), so storage is reused: a step comes in by swapping
// with the caller's, lanes included, and a slot keeps its lanes' storage for the next step it
// takes. (A warp whose retries stall again can collect many steps: the scheduler issues the
// warp's next step before the retry that delays it further.)
class HeldSteps {
 public:
  bool empty() const { return count_ == 0; }
  sched::WarpStep& front() { return ring_[head_]; }
  // Takes `st`; `st` gets spare storage in exchange (its fields are stale: the caller refills it).
  void push(sched::WarpStep& st) {
    if (count_ == ring_.size()) grow();
    std::swap(ring_[(head_ + count_) & (ring_.size() - 1)], st);
    ++count_;
  }
  void pop() {
    head_ = (head_ + 1) & (ring_.size() - 1);
    --count_;
  }

 private:
  void grow() {  // doubles the ring (a power of two), the queue first
    std::vector<sched::WarpStep> bigger(std::max<size_t>(2, ring_.size() * 2));
    for (size_t i = 0; i < count_; ++i) std::swap(bigger[i], ring_[(head_ + i) & (ring_.size() - 1)]);
    ring_.swap(bigger);
    head_ = 0;
  }
  std::vector<sched::WarpStep> ring_;
  size_t head_ = 0, count_ = 0;
};

struct Held {
  HeldSteps steps;  // front: the step in progress
  Progress progress;
};

// Held warps by warp key. fresh() asks for every step whether its warp is held and every retry
// taken the full way finds its warp's held step, so the usual lookups skip the hash map (whose
// bucket index costs a division): a direct-mapped index over the keys, and a map only for the
// keys it could not take, looked up only when it is not empty. The Held records are reused,
// with their storage.
class HeldWarps {
 public:
  bool empty() const { return held_ == 0; }
  Held* find(uint64_t key) {
    const Slot& s = index_[key & (kSlots - 1)];
    if (s.held != nullptr && s.key == key) return s.held;
    if (map_.empty()) return nullptr;
    auto it = map_.find(key);
    return it == map_.end() ? nullptr : it->second;
  }
  // An empty Held for `key`, which is not held. Released ones are reused (with their storage).
  // Throws std::invalid_argument for a key of 2^63 or more (the retry queue marks herds so).
  Held& add(uint64_t key) {
    if (key >> 63 != 0)
      throw std::invalid_argument("cachesim: warp key " + std::to_string(key) +
                                  " is too large: a step source's warp keys must be below 2^63");
    if (spare_.empty()) {
      all_.push_back(std::make_unique<Held>());
      spare_.push_back(all_.back().get());
    }
    Held* h = spare_.back();
    spare_.pop_back();
    Slot& s = index_[key & (kSlots - 1)];
    if (s.held == nullptr)
      s = Slot{key, h};
    else
      map_.emplace(key, h);
    ++held_;
    return *h;
  }
  void erase(uint64_t key) {  // `key` is held, its steps done and its progress reset
    Slot& s = index_[key & (kSlots - 1)];
    Held* h;
    if (s.held != nullptr && s.key == key) {
      h = s.held;
      s.held = nullptr;
    } else {
      auto it = map_.find(key);
      h = it->second;
      map_.erase(it);
    }
    spare_.push_back(h);
    --held_;
  }

 private:
  static constexpr size_t kSlots = 4096;  // warp keys are dense: resident warps rarely collide
  struct Slot {
    uint64_t key = 0;
    Held* held = nullptr;
  };
  std::unordered_map<uint64_t, Held*> map_;  // held warps not in the index
  std::vector<Slot> index_ = std::vector<Slot>(kSlots);
  std::vector<std::unique_ptr<Held>> all_;  // every Held made, held or spare
  std::vector<Held*> spare_;                // the ones not held
  size_t held_ = 0;
};

// Held warps whose step stalled on a read, queued as one entry of the ReplayQueue: a run of
// what would be consecutive entries of one (cycle, SM) list, in their order. With timing on,
// warps that find an SM's MSHRs taken all retry at its next fill, and all but the first stall
// again (spmv_csr: about 14 stalls per request): a herd takes such a round as one step, for the
// members whose line is still absent, which the SM's install log settles without a tag lookup.
// Each member's stalls are counted per instruction when it leaves the herd: rounds - joined.
struct Herd {
  struct Member {
    uint64_t line;         // the line it stalled on
    uint64_t joined;       // `rounds` when it joined
    uint32_t instruction;  // its instruction's number (InstructionNumbers)
  };
  std::vector<uint64_t> keys;  // warp keys, in queue order (delayWarps takes them as they are)
  std::vector<Member> members;
  size_t head = 0;             // members before it have left
  uint64_t rounds = 0;         // stall rounds of the whole herd
  uint64_t checkedAt = 0;      // SM install count when no member's line was held
  uint64_t lineBits[2] = {0, 0};  // a bit per member's line (lineBit): lines with no bit are no member's

  size_t end() const { return keys.size(); }
  static std::pair<size_t, uint64_t> lineBit(uint64_t line) {
    const uint64_t h = (line * 0x9E3779B97F4A7C15ull) >> 57;  // 7 bits
    return {static_cast<size_t>(h >> 6), uint64_t(1) << (h & 63)};
  }
  bool mayHold(uint64_t line) const {
    const auto [word, bit] = lineBit(line);
    return (lineBits[word] & bit) != 0;
  }
  void mark(uint64_t line) {
    const auto [word, bit] = lineBit(line);
    lineBits[word] |= bit;
  }
  void add(uint64_t key, uint64_t line, uint32_t instruction) {
    keys.push_back(key);
    members.push_back(Member{line, rounds, instruction});
    mark(line);
  }
  // A herd may never empty (on spmv_csr one lived for 22 000 rounds, members leaving at its
  // head as others joined at its end): once the members that left are half of its storage they
  // are dropped, and the filter is rebuilt from the members left, so the storage follows the
  // members present, not every warp that ever waited.
  void dropLeft() {
    if (head < kDropAfter || head * 2 < keys.size()) return;
    keys.erase(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(head));
    members.erase(members.begin(), members.begin() + static_cast<std::ptrdiff_t>(head));
    head = 0;
    lineBits[0] = lineBits[1] = 0;
    for (const Member& m : members) mark(m.line);
  }
  void clear() {
    keys.clear();
    members.clear();
    head = 0;
    rounds = 0;
    lineBits[0] = lineBits[1] = 0;
  }
  static constexpr size_t kDropAfter = 16;
};

uint32_t log2u(uint32_t v) {
  uint32_t s = 0;
  while ((1u << s) < v) ++s;
  return s;
}

class Run {
 public:
  Run(const Config& config, uint64_t seed, uint32_t sm, const RequestCallback& callback)
      : config_(config),
        seed_(seed),
        sm_(sm),
        lineShift_(log2u(config.lineSize)),
        timing_(config.timing),
        wideAccessSplit_(config.wideAccessSplit),
        warpSize_(config.warpSize),
        callback_(callback ? &callback : nullptr),
        replays_(config.smCount),
        loading_(config.smCount, 0) {}

  // The SMs whose steps included a load in the last execute(), ascending: every SM's steps pass
  // through here, simulated or not.
  std::vector<uint32_t> loadingSms() const {
    std::vector<uint32_t> sms;
    for (uint32_t s = 0; s < loading_.size(); ++s)
      if (loading_[s]) sms.push_back(s);
    return sms;
  }

  Stats execute(sched::StepSource& source) {
    sched::WarpStep buf;
    bool have = false;
    bool exhausted = false;
    for (;;) {
      if (!have && !exhausted) {
        buf.hasBounds = false;  // a source that does not note bounds leaves them unset
        if (replays_.empty()) {
          have = source.next(buf);
          exhausted = !have;
        } else {
          // Only a step that issues before the first retry: the retry may delay warps, and
          // a warp whose retry stalls again must not issue its next step meanwhile.
          const ReplayQueue::Entry& r = replays_.top();
          const sched::NextStep n = source.nextBefore(buf, r.cycle, r.sm);
          have = n == sched::NextStep::Issued;
          exhausted = n == sched::NextStep::Finished;
        }
      }
      // Retries due at or before the source's next step go first.
      bool took = false;
      while (!replays_.empty()) {
        const ReplayQueue::Entry r = replays_.top();
        if (have && sched::issuesBefore(buf.cycle, buf.sm, r.cycle, r.sm)) break;
        if (r.warpKey & kHerdKey) {
          retryHerd(r, source, have ? &buf : nullptr, have);
        } else {
          replays_.pop();
          replay(r.cycle, r.warpKey, source, have ? &buf : nullptr, have);
        }
        if (!have && !exhausted) {  // no step before it, or the peeked step was held: ask the source again
          took = true;
          break;
        }
      }
      if (took) continue;
      if (!have) break;  // source exhausted and no retries left
      fresh(buf, source);
      have = false;
    }
    return collect();
  }

 private:
  // The SM(s) whose statistics are reported.
  bool reported(uint32_t sm) const { return sm_ == Simulator::kAllSms || sm == sm_; }
  // With timing on every SM is modelled, so that latencies slow every SM alike: otherwise
  // the unmodelled SMs would finish early and take every waiting workgroup (dynamic refill).
  bool simulated(uint32_t sm) const { return timing_ || reported(sm); }

  SmState& state(uint32_t sm) {
    if (sm < sms_.size() && sms_[sm].model) [[likely]]
      return sms_[sm];
    return createState(sm);
  }

  // The first step of an SM: its L1 model.
  [[gnu::noinline]] SmState& createState(uint32_t sm) {
    if (sm >= sms_.size()) sms_.resize(size_t(sm) + 1);
    SmState& s = sms_[sm];
    if (!s.model) {
      // Unreported SMs need no reuse-distance classification.
      Config c = config_;
      if (!reported(sm)) c.classify = false;
      s.model = std::make_unique<SmModel>(c, mixSeed(seed_, sm));
    }
    return s;
  }

  // Out of line: only runs with a callback, and inlined it would make every caller's frame large.
  [[gnu::noinline]] void emit(const sched::WarpStep& st, uint64_t cycle, uint64_t line, const RequestResult& r) {
    RequestEvent e;
    e.cycle = cycle;
    e.sm = st.sm;
    e.workgroup = st.workgroup;
    e.warp = st.warp;
    e.warpKey = st.warpKey;
    e.step = st.step;
    e.instruction = st.instruction;
    e.kind = st.kind;
    e.line = line;
    e.set = r.set;
    e.outcome = r.outcome;
    e.reuseDistance = r.reuseDistance;
    (*callback_)(e);
  }

  // One read request of step `st`. Returns false on a stall (`until` = the retry cycle);
  // otherwise `ready` becomes at least the cycle the line's data is there.
  bool readLine(SmModel& m, const sched::WarpStep& st, InstructionStats& ins, uint64_t cycle, uint64_t line,
                uint64_t& ready, uint64_t& until) {
    RequestResult r = m.read(line, cycle, st.warpKey, &ins);
    if (callback_) emit(st, cycle, line, r);
    if (r.outcome == Outcome::MshrStall) {
      until = r.readyCycle;
      return false;
    }
    ready = std::max(ready, r.readyCycle);
    return true;
  }

  // Processes `st` at `cycle` from where `p` stands. Returns true when the step is complete
  // (`until` = cycle from which the warp may go on) and false on a stall (`until` = retry cycle).
  bool process(SmState& s, const sched::WarpStep& st, uint64_t cycle, Progress& p, uint64_t& until) {
    SmModel& m = *s.model;
    Stats& stats = m.stats();
    const uint32_t number = instructions_.of(st.instruction);
    InstructionStats& ins = s.instruction(number);
    if (!p.started) {
      p.started = true;
      p.next = 0;
      p.ready = cycle;
      ++stats.steps;
      ++ins.steps;
      if (st.kind == AccessKind::Load || st.kind == AccessKind::Store) {
        stats.requestsBeforeCoalescing += st.lanes.size();
        ins.requestsBeforeCoalescing += st.lanes.size();
      }
      // Coalescing: the lane bounds settle most steps (one line, or two); the exact path
      // (coalesceLanes) takes the rest. Loads and stores wider than 4 bytes a lane go in parts
      // of the warp (coalesceWideAccess).
      if (isMemoryAccess(st.kind)) {
        if (wideAccessSplit_ && (st.kind == AccessKind::Load || st.kind == AccessKind::Store) && wide(st)) {
          p.lines.clear();
          coalesceWideAccess(st, lineShift_, warpSize_, p.lines);
        } else {
          uint64_t known[2];
          const int n = linesFromBounds(st, lineShift_, known);
          if (n != 0 && st.kind == AccessKind::Load) {
            // Most loads: one line or two, read at once without building the list of lines
            // (which only a stall needs, to retry from).
            for (int i = 0; i < n; ++i)
              if (!readLine(m, st, ins, cycle, known[i], p.ready, until)) {
                p.lines.assign(known, known + n);
                p.next = static_cast<size_t>(i);
                return false;
              }
            until = p.ready;
            return true;
          }
          p.lines.assign(known, known + n);
          if (n == 0) coalesceLanes(st, lineShift_, p.lines);
        }
      }
    }
    switch (st.kind) {
      case AccessKind::Load:
        for (; p.next < p.lines.size(); ++p.next)
          if (!readLine(m, st, ins, cycle, p.lines[p.next], p.ready, until)) return false;
        until = p.ready;
        return true;
      case AccessKind::Store:
        for (uint64_t line : p.lines) {
          RequestResult r = m.write(line, cycle, &ins);
          if (callback_) emit(st, cycle, line, r);
        }
        break;
      case AccessKind::Atomic:
      case AccessKind::ConstantLoad: {
        uint64_t n = p.lines.size();
        if (st.kind == AccessKind::Atomic) {
          stats.atomics += n;
          ins.atomics += n;
        } else {
          stats.constantLoads += n;
          ins.constantLoads += n;
        }
        if (callback_) {
          RequestResult r;
          r.outcome = Outcome::Bypass;
          for (uint64_t line : p.lines) emit(st, cycle, line, r);
        }
        break;
      }
      case AccessKind::Barrier: ++stats.barriers; break;
      case AccessKind::Fence: ++stats.fences; break;
    }
    until = cycle;
    return true;
  }

  // Some lane may access more than 4 bytes: the OR of the sizes is over 4 then (5, 6 and 7 byte
  // lanes too), and also for lanes of 4 and 1 bytes, which coalesceWideAccess takes as one part.
  static bool wide(const sched::WarpStep& st) {
    return (st.hasBounds ? st.bounds : laneBounds(st.lanes)).sizeOr > 4;
  }

  void delay(sched::StepSource& source, uint64_t warpKey, uint64_t cycle, uint64_t readyCycle) {
    if (timing_ && readyCycle > cycle + 1) source.delayWarp(warpKey, readyCycle);
  }

  void queue(uint64_t cycle, uint32_t sm, uint64_t warpKey) { replays_.push(cycle, sm, warpKey); }

  void fresh(sched::WarpStep& st, sched::StepSource& source) {
    if (st.kind == AccessKind::Load && st.sm < loading_.size()) loading_[st.sm] = 1;
    // A lane over the access limit is an error whichever SM is simulated (it was one only where
    // the coalescer met it); the bounds' OR of the sizes tells in one compare that none is.
    if (st.hasBounds && st.bounds.sizeOr > kMaxLaneAccessBytes) [[unlikely]]
      for (const sched::LaneAccess& lane : st.lanes)
        if (lane.size > kMaxLaneAccessBytes) throw laneTooLarge(st, lane);
    if (!simulated(st.sm)) return;
    if (!held_.empty()) {
      if (Held* h = held_.find(st.warpKey)) {
        h->steps.push(st);
        return;
      }
    }
    SmState& s = state(st.sm);
    scratch_.reset();
    uint64_t until = 0;
    if (process(s, st, st.cycle, scratch_, until)) {
      delay(source, st.warpKey, st.cycle, until);
      return;
    }
    Held& h = held_.add(st.warpKey);
    std::swap(h.progress, scratch_);  // scratch_ takes the spare's storage
    h.steps.push(st);
    queueStall(until, h.steps.front(), h.progress, *s.model);
    source.delayWarp(h.steps.front().warpKey, until + 1);
  }

  // Held step `st` stalled on a read (`p`): its retry at `until`. A stall on the SM's full
  // MSHRs joins a herd, unless a request callback needs every retry to take the full way.
  // Other stalls (the warp's own MSHRs, a set whose ways are all in flight) get an entry of
  // their own: their retry usually finds what was missing.
  void queueStall(uint64_t until, const sched::WarpStep& st, const Progress& p, const SmModel& m) {
    if (callback_ || !m.mshrsFull()) {
      queue(until, st.sm, st.warpKey);
      return;
    }
    joinHerd(until, st.sm, st.warpKey, p.lines[p.next], instructions_.of(st.instruction), m);
  }

  // Queues the retry at `until` of held warp `key`, whose read of `line` (instruction `number`)
  // found it absent from SM `m` and stalled: at the end of the herd queued last at (until, sm)
  // (the same place an entry of its own would take), or as a new herd.
  void joinHerd(uint64_t until, uint32_t sm, uint64_t key, uint64_t line, uint32_t number, const SmModel& m) {
    if (uint64_t* last = replays_.lastKeyAt(until, sm); last != nullptr && (*last & kHerdKey) != 0) {
      herds_[*last & ~kHerdKey]->add(key, line, number);  // its check predates this one: still true
      return;
    }
    const uint64_t id = newHerd();
    Herd& h = *herds_[id];
    h.checkedAt = m.installs();
    h.add(key, line, number);
    queue(until, sm, kHerdKey | id);
  }

  uint64_t newHerd() {
    if (spareHerds_.empty()) {
      herds_.push_back(std::make_unique<Herd>());
      return herds_.size() - 1;
    }
    const uint64_t id = spareHerds_.back();
    spareHerds_.pop_back();
    return id;
  }

  // The first member of `h` from its head on whose line the SM holds now (valid or in
  // flight), or h.end(). No member's line was held at h.checkedAt, so only the lines installed
  // since need a look, when the SM's log still has them.
  static size_t firstHolding(const Herd& h, const SmModel& m) {
    const uint64_t installs = m.installs();
    size_t first = h.end();
    if (installs - h.checkedAt <= SmModel::kInstallLog) {
      for (uint64_t k = h.checkedAt; k < installs; ++k) {
        const uint64_t line = m.installedLine(k);
        if (!h.mayHold(line) || !m.contains(line)) continue;  // no member's, or evicted again
        for (size_t i = h.head; i < first; ++i)
          if (h.members[i].line == line) {
            first = i;
            break;
          }
      }
      return first;
    }
    for (size_t i = h.head; i < h.end(); ++i)
      if (m.contains(h.members[i].line)) return i;
    return first;
  }

  // The herd at the top of the queue, due at (r.cycle, r.sm). On a full SM the members whose
  // line is absent stall again, changing nothing in the SM, up to the first whose line is there:
  // when that is none, the herd moves to the SM's next fill whole; otherwise those before it
  // join the herd there. Else (an MSHR is free, or the first member's line is there) the first
  // member's step is retried the full way. Each call does what the retries of those members as
  // entries of their own would do, in their order, up to where the execute loop would ask the
  // source for steps again.
  void retryHerd(const ReplayQueue::Entry& r, sched::StepSource& source, sched::WarpStep* peeked, bool& have) {
    const uint64_t id = r.warpKey & ~kHerdKey;
    Herd& h = *herds_[id];
    SmState& s = state(r.sm);
    SmModel& m = *s.model;
    if (m.mshrsFullAt(r.cycle)) {
      const size_t j = firstHolding(h, m);
      if (j != h.head) {
        const uint64_t until = m.fullRetryCycle();
        const size_t n = j - h.head;
        m.countStalls(n);
        source.delayWarps(&h.keys[h.head], n, until + 1);
        if (j == h.end()) {
          ++h.rounds;
          h.checkedAt = m.installs();
          replays_.requeueTop(until);
          return;
        }
        for (size_t i = h.head; i < j; ++i) {  // they join the herd at the next fill
          const Herd::Member& member = h.members[i];
          s.instruction(member.instruction).misses.mshr += h.rounds - member.joined + 1;
          joinHerd(until, r.sm, h.keys[i], member.line, member.instruction, m);
        }
        h.head = j;
        h.dropLeft();
        return;
      }
    }
    const size_t i = h.head++;
    const uint64_t key = h.keys[i];
    s.instruction(h.members[i].instruction).misses.mshr += h.rounds - h.members[i].joined;
    if (h.head == h.end()) {
      replays_.pop();
      h.clear();
      spareHerds_.push_back(id);
    } else {
      h.dropLeft();
    }
    replay(r.cycle, key, source, peeked, have);
  }

  // The retry of held warp `key` at `cycle`: its first held step, the full way.
  void replay(uint64_t cycle, uint64_t key, sched::StepSource& source, sched::WarpStep* peeked, bool& have) {
    Held* held = held_.find(key);
    if (held == nullptr) return;
    Held& h = *held;
    sched::WarpStep& st = h.steps.front();
    SmState& s = state(st.sm);
    uint64_t until = 0;
    if (!process(s, st, cycle, h.progress, until)) {
      queueStall(until, st, h.progress, *s.model);
      source.delayWarp(key, until + 1);
      return;
    }
    h.steps.pop();
    h.progress.reset();
    uint64_t next = std::max(until, cycle + 1);
    if (!h.steps.empty()) {
      queue(next, h.steps.front().sm, key);
      delay(source, key, cycle, next + 1);
      return;
    }
    held_.erase(key);
    delay(source, key, cycle, until);
    // The step the simulator already took from the source may belong to this warp and issue
    // before the warp is ready: hold it until then.
    if (peeked && peeked->warpKey == key && peeked->cycle < next && simulated(peeked->sm)) {
      Held& nh = held_.add(key);
      nh.steps.push(*peeked);
      queue(next, nh.steps.front().sm, key);
      have = false;
    }
  }

  Stats collect() {
    Stats total;
    for (uint32_t sm = 0; sm < sms_.size(); ++sm) {
      SmState& s = sms_[sm];
      if (!s.model || !reported(sm)) continue;
      Stats st = s.model->stats();
      for (uint32_t k = 0; k < s.ins.size(); ++k) {
        if (s.ins[k].steps == 0) continue;  // not run on this SM
        st.perInstruction.push_back(s.ins[k]);
        st.perInstruction.back().instruction = instructions_.id(k);
      }
      std::sort(st.perInstruction.begin(), st.perInstruction.end(),
                [](const InstructionStats& a, const InstructionStats& b) { return a.instruction < b.instruction; });
      total.merge(st);
    }
    return total;
  }

  const Config& config_;
  uint64_t seed_;
  uint32_t sm_;
  uint32_t lineShift_;
  bool timing_;
  bool wideAccessSplit_;
  uint32_t warpSize_;
  const RequestCallback* callback_;
  std::vector<SmState> sms_;
  InstructionNumbers instructions_;
  HeldWarps held_;
  // Held warps' retries and next steps; an entry whose key has kHerdKey set is herd
  // `key & ~kHerdKey` (warp keys stay far below: a launch has fewer than 2^63 warps).
  ReplayQueue replays_;
  std::vector<uint8_t> loading_;  // per SM: a load step passed (loadingSms)
  static constexpr uint64_t kHerdKey = uint64_t(1) << 63;
  std::vector<std::unique_ptr<Herd>> herds_;  // by id; each herd's storage is reused
  std::vector<uint64_t> spareHerds_;
  Progress scratch_;
};

}  // namespace

void Stats::merge(const Stats& o) {
  steps += o.steps;
  requestsBeforeCoalescing += o.requestsBeforeCoalescing;
  requests += o.requests;
  reads += o.reads;
  readHits += o.readHits;
  readMisses += o.readMisses;
  writes += o.writes;
  writeHits += o.writeHits;
  writeMisses += o.writeMisses;
  writeBacks += o.writeBacks;
  atomics += o.atomics;
  constantLoads += o.constantLoads;
  barriers += o.barriers;
  fences += o.fences;
  cycles = std::max(cycles, o.cycles);
  misses.merge(o.misses);
  reuse.merge(o.reuse);
  // Merge two lists sorted by instruction id.
  std::vector<InstructionStats> merged;
  merged.reserve(perInstruction.size() + o.perInstruction.size());
  size_t i = 0, j = 0;
  while (i < perInstruction.size() || j < o.perInstruction.size()) {
    if (j == o.perInstruction.size() ||
        (i < perInstruction.size() && perInstruction[i].instruction < o.perInstruction[j].instruction)) {
      merged.push_back(perInstruction[i++]);
    } else if (i == perInstruction.size() || o.perInstruction[j].instruction < perInstruction[i].instruction) {
      merged.push_back(o.perInstruction[j++]);
    } else {
      merged.push_back(perInstruction[i++]);
      merged.back().merge(o.perInstruction[j++]);
    }
  }
  perInstruction = std::move(merged);
}

Simulator::Simulator(Config config) : config_(std::move(config)) { config_.validate(); }

namespace {

// The SMs sm=random draws among: those whose workgroups load, as only their L1s have a read miss
// rate, or those with any access when no SM loads (a kernel that only stores).
std::optional<std::vector<uint32_t>> randomSmCandidates(const sched::StepSource& source) {
  std::optional<std::vector<uint32_t>> reading = source.readingSms();
  if (reading && reading->empty()) return source.busySms();
  return reading;
}

}  // namespace

Stats Simulator::run(sched::StepSource& source, uint64_t seed) {
  BusySms busy;
  if (config_.sm.kind == SmSelection::Kind::Random) busy = randomSmCandidates(source);
  return runOne(source, seed, busy, lastSm_);
}

Stats Simulator::runOne(sched::StepSource& source, uint64_t seed, const BusySms& busy, uint32_t& sm,
                        std::vector<uint32_t>* loadingSms) const {
  switch (config_.sm.kind) {
    case SmSelection::Kind::Index: sm = config_.sm.index; break;
    case SmSelection::Kind::All: sm = kAllSms; break;
    case SmSelection::Kind::Random: {
      // Uniform over the SMs that receive work (an idle SM's L1 sees nothing), loading work
      // where some SM has it (randomSmCandidates).
      Rng rng(mixSeed(seed, 0x736du));
      if (!busy)
        sm = static_cast<uint32_t>(rng.below(config_.smCount));
      else
        sm = busy->empty() ? 0 : (*busy)[rng.below(busy->size())];
      break;
    }
  }
  Run run(config_, seed, sm, callback_);
  Stats stats = run.execute(source);
  if (loadingSms) *loadingSms = run.loadingSms();
  return stats;
}

namespace {

// "SM 3", "SMs 0..4", "SMs 0..4, 8, 10..11": ascending SM indices, runs of consecutive ones
// shortened.
std::string smListText(const std::vector<uint32_t>& sms) {
  std::string text = sms.size() == 1 ? "SM " : "SMs ";
  for (size_t i = 0; i < sms.size();) {
    size_t j = i;
    while (j + 1 < sms.size() && sms[j + 1] == sms[j] + 1) ++j;
    if (i > 0) text += ", ";
    text += std::to_string(sms[i]);
    if (j > i) text += (j == i + 1 ? ", " : "..") + std::to_string(sms[j]);
    i = j + 1;
  }
  return text;
}

}  // namespace

std::string Simulator::idleSmWarning(const BusySms& busy) const {
  const std::string sm = "SM " + std::to_string(config_.sm.index);
  if (busy && busy->empty())
    return sm + " sees no step: no workgroup of the launch makes an access, so every count is 0";
  std::string text = sm + " receives no workgroup that makes an access";
  if (busy) text += " (the launch keeps " + std::string(busy->size() == 1 ? "only " : "") + smListText(*busy) + " busy)";
  return text + ", so every count is 0; choose " + (busy ? "one of those SMs" : "another SM") + ", all, or random";
}

void summarize(const std::vector<double>& values, double& median, std::optional<double>& rsd) {
  median = 0.0;
  rsd = 0.0;
  if (values.empty()) return;
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  median = (n % 2 == 1) ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  // Equal values have no spread: 0 exactly (their mean, a rounded sum over n, need not equal
  // them, and would give a spread of about 1e-14%).
  if (sorted.front() == sorted.back()) return;
  double mean = 0.0;
  for (double v : values) mean += v;
  mean /= double(n);
  double var = 0.0;
  for (double v : values) var += (v - mean) * (v - mean);
  var /= double(n);
  // Relative to a median of 0 a spread has no size (write-allocate stores can make most runs'
  // reads hit): none.
  if (median != 0.0)
    rsd = 100.0 * std::sqrt(var) / median;
  else
    rsd = std::nullopt;
}

Report Simulator::runMany(const StepSourceFactory& factory) {
  Report report;
  report.config = config_;
  const uint32_t n = config_.runs;
  std::vector<Stats> all(n);
  std::vector<uint32_t> sms(n, 0);
  // sm=random draws among the busy SMs, the same for every run, and an idle sm=N is told them:
  // asked of one source only, as a scheduled file finds them in a pass of its own.
  BusySms busy;
  std::once_flag busyFound;
  std::vector<std::exception_ptr> errors(n);
  std::atomic<uint32_t> nextRun{0};
  std::atomic<bool> failed{false};
  auto sourceFor = [&](uint64_t seed) {
    std::unique_ptr<sched::StepSource> source = factory(seed);
    if (!source) throw std::runtime_error("cachesim: the step source factory returned no source");
    return source;
  };
  // Takes runs in order until none is left or one has failed.
  auto worker = [&] {
    for (uint32_t i; !failed.load() && (i = nextRun.fetch_add(1)) < n;) {
      try {
        const uint64_t seed = config_.seed + i;
        std::unique_ptr<sched::StepSource> source = sourceFor(seed);
        const auto findBusy = [&] { busy = source->busySms(); };
        const auto findCandidates = [&] { busy = randomSmCandidates(*source); };
        if (config_.sm.kind == SmSelection::Kind::Random) std::call_once(busyFound, findCandidates);
        std::vector<uint32_t> loading;
        all[i] = runOne(*source, seed, busy, sms[i], &loading);
        if (config_.sm.kind == SmSelection::Kind::Random && all[i].reads == 0 && !loading.empty()) {
          // The drawn SM saw no read, though others did (their loads came with workgroups dealt
          // later): run the seed again on one of those. The issue order does not depend on which SM
          // is reported, so that SM sees its loads again.
          Rng rng(mixSeed(seed, 0x6c6f6164u));
          const BusySms again = std::vector<uint32_t>{loading[rng.below(loading.size())]};
          all[i] = runOne(*sourceFor(seed), seed, again, sms[i]);
        }
        if (config_.sm.kind == SmSelection::Kind::Index && all[i].steps == 0) std::call_once(busyFound, findBusy);
      } catch (...) {
        errors[i] = std::current_exception();
        failed = true;
      }
    }
  };
  const uint32_t threads = callback_ ? 1 : std::min(threads_, n);
  if (threads <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (uint32_t t = 0; t < threads; ++t) {
      try {
        pool.emplace_back(worker);
      } catch (const std::system_error&) {
        break;  // the system gives no more threads: those started take every run
      }
    }
    if (pool.empty()) worker();
    for (std::thread& t : pool) t.join();
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  if (n > 0) lastSm_ = sms[n - 1];
  if (config_.sm.kind == SmSelection::Kind::Index && n > 0 && all[0].steps == 0)
    report.warnings.push_back(idleSmWarning(busy));

  RunSummary& rs = report.runs;
  rs.count = n;
  std::vector<double> rates;  // of the runs with reads
  for (uint32_t i = 0; i < n; ++i) {
    rs.values.push_back(all[i].reads == 0 ? std::nullopt : std::optional<double>(all[i].missRate()));
    if (rs.values.back()) rates.push_back(*rs.values.back());
    rs.seeds.push_back(config_.seed + i);
    rs.sms.push_back(sms[i] == kAllSms ? std::string("all") : std::to_string(sms[i]));
  }
  rs.withReads = uint32_t(rates.size());
  if (!rates.empty()) {
    double median = 0.0;
    summarize(rates, median, rs.rsd);
    rs.median = median;
    double best = -1.0;
    for (uint32_t i = 0; i < n; ++i) {
      if (!rs.values[i]) continue;
      double d = std::fabs(*rs.values[i] - median);
      if (best < 0.0 || d < best) {
        best = d;
        rs.representative = i;
      }
    }
  }
  if (!all.empty()) {
    report.stats = std::move(all[rs.representative]);
    report.sm = rs.sms[rs.representative];
  }
  return report;
}

Report simulate(const Config& config, const StepSourceFactory& factory, RequestCallback callback,
                uint32_t threads) {
  Simulator sim(config);
  sim.setRequestCallback(std::move(callback));
  sim.setThreads(threads);
  return sim.runMany(factory);
}

}  // namespace cltrace::cachesim
