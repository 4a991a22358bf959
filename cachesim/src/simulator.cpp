#include "cltrace/cachesim/simulator.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <cmath>
#include <stdexcept>
#include <system_error>
#include <memory>
#include <unordered_map>

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

// Held warps by warp key. fresh() asks for every step whether its warp is held and replay()
// for every retry, so the usual lookups skip the hash map (whose bucket index costs a
// division): a direct-mapped index over the keys, and a map only for the keys it could not take,
// looked up only when it is not empty. The Held records are reused, with their storage.
// An indexed warp whose step stalled on a read also notes that read in its slot, so that a
// retry that stalls again is decided without touching the held step (see Run::retryStalls).
class HeldWarps {
 public:
  // The read a held warp's step stalled on: its line and its instruction's number (where its
  // statistics are in SmState::ins).
  struct StalledRead {
    uint64_t line = 0;
    uint32_t instruction = 0;
    bool noted = false;
  };

  bool empty() const { return held_ == 0; }
  Held* find(uint64_t key) {
    const Slot& s = index_[key & (kSlots - 1)];
    if (s.held != nullptr && s.key == key) return s.held;
    if (map_.empty()) return nullptr;
    auto it = map_.find(key);
    return it == map_.end() ? nullptr : it->second;
  }
  // An empty Held for `key`, which is not held. Released ones are reused (with their storage).
  Held& add(uint64_t key) {
    if (spare_.empty()) {
      all_.push_back(std::make_unique<Held>());
      spare_.push_back(all_.back().get());
    }
    Held* h = spare_.back();
    spare_.pop_back();
    Slot& s = index_[key & (kSlots - 1)];
    if (s.held == nullptr)
      s = Slot{key, h, {}};
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
  // The stalled read noted for held warp `key`, or null (not indexed, or none noted).
  StalledRead* stalledRead(uint64_t key) {
    Slot& s = index_[key & (kSlots - 1)];
    return s.held != nullptr && s.key == key && s.stalled.noted ? &s.stalled : nullptr;
  }
  // Notes (`noted`) or forgets the read held warp `key` stalled on; ignored when not indexed.
  void noteStalledRead(uint64_t key, const StalledRead& r) {
    Slot& s = index_[key & (kSlots - 1)];
    if (s.held != nullptr && s.key == key) s.stalled = r;
  }

 private:
  static constexpr size_t kSlots = 4096;  // warp keys are dense: resident warps rarely collide
  struct Slot {
    uint64_t key = 0;
    Held* held = nullptr;
    StalledRead stalled;
  };
  std::unordered_map<uint64_t, Held*> map_;  // held warps not in the index
  std::vector<Slot> index_ = std::vector<Slot>(kSlots);
  std::vector<std::unique_ptr<Held>> all_;  // every Held made, held or spare
  std::vector<Held*> spare_;                // the ones not held
  size_t held_ = 0;
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
        callback_(callback ? &callback : nullptr),
        replays_(config.smCount) {}

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
        replays_.pop();
        replay(r, source, have ? &buf : nullptr, have);
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
      // (coalesceLanes) takes the rest.
      if (isMemoryAccess(st.kind)) {
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

  void delay(sched::StepSource& source, uint64_t warpKey, uint64_t cycle, uint64_t readyCycle) {
    if (timing_ && readyCycle > cycle + 1) source.delayWarp(warpKey, readyCycle);
  }

  void queue(uint64_t cycle, uint32_t sm, uint64_t warpKey) { replays_.push(cycle, sm, warpKey); }

  void fresh(sched::WarpStep& st, sched::StepSource& source) {
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
    noteStall(h.steps.front(), h.progress);
    queue(until, h.steps.front().sm, h.steps.front().warpKey);
    source.delayWarp(h.steps.front().warpKey, until + 1);
  }

  // Process stopped `st` (`p`) on a read: notes that read for retryStalls.
  void noteStall(const sched::WarpStep& st, const Progress& p) {
    held_.noteStalledRead(st.warpKey, HeldWarps::StalledRead{p.lines[p.next], instructions_.of(st.instruction), true});
  }

  // A retry that stalls again because the SM's MSHRs are all taken (as most do while many warps
  // wait for one fill: spmv makes about 14 per request) costs no look at the held step: the
  // stalled read noted for the warp decides it, with the counts and the calls process() would
  // make. Returns false, having done nothing process() would not do first, otherwise.
  // The retries queued after it for the same cycle and SM (the rest of the warps waiting for that
  // fill) are taken here too, as long as they stall again: the SM's state is unchanged by a
  // stall, so each needs only its tag check, and they are requeued in their order.
  bool retryStalls(const ReplayQueue::Entry& r, sched::StepSource& source) {
    if (callback_) return false;  // the request event needs the step
    HeldWarps::StalledRead* read = held_.stalledRead(r.warpKey);
    if (read == nullptr) return false;
    SmState& s = state(r.sm);  // the held step's SM (entries carry it)
    uint64_t until = 0;
    if (!s.model->stallsOnFullMshrs(read->line, r.cycle, &s.ins[read->instruction], until)) return false;
    queue(until, r.sm, r.warpKey);
    source.delayWarp(r.warpKey, until + 1);
    while (!replays_.empty()) {
      const ReplayQueue::Entry& next = replays_.top();
      if (next.cycle != r.cycle || next.sm != r.sm) break;
      const uint64_t key = next.warpKey;
      HeldWarps::StalledRead* nextRead = held_.stalledRead(key);
      if (nextRead == nullptr || !s.model->stallsAgainOnFullMshrs(nextRead->line, &s.ins[nextRead->instruction]))
        break;
      replays_.requeueTop(until);
      source.delayWarp(key, until + 1);
    }
    return true;
  }

  void replay(const ReplayQueue::Entry& r, sched::StepSource& source, sched::WarpStep* peeked, bool& have) {
    if (retryStalls(r, source)) return;
    Held* held = held_.find(r.warpKey);
    if (held == nullptr) return;
    Held& h = *held;
    sched::WarpStep& st = h.steps.front();
    SmState& s = state(st.sm);
    uint64_t until = 0;
    if (!process(s, st, r.cycle, h.progress, until)) {
      noteStall(st, h.progress);
      queue(until, st.sm, r.warpKey);
      source.delayWarp(r.warpKey, until + 1);
      return;
    }
    held_.noteStalledRead(r.warpKey, {});  // the step is done
    h.steps.pop();
    h.progress.reset();
    uint64_t next = std::max(until, r.cycle + 1);
    if (!h.steps.empty()) {
      queue(next, h.steps.front().sm, r.warpKey);
      delay(source, r.warpKey, r.cycle, next + 1);
      return;
    }
    held_.erase(r.warpKey);
    delay(source, r.warpKey, r.cycle, until);
    // The step the simulator already took from the source may belong to this warp and issue
    // before the warp is ready: hold it until then.
    if (peeked && peeked->warpKey == r.warpKey && peeked->cycle < next && simulated(peeked->sm)) {
      Held& nh = held_.add(r.warpKey);
      nh.steps.push(*peeked);
      queue(next, nh.steps.front().sm, r.warpKey);
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
  const RequestCallback* callback_;
  std::vector<SmState> sms_;
  InstructionNumbers instructions_;
  HeldWarps held_;
  ReplayQueue replays_;  // held warps' retries and next steps
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

Stats Simulator::run(sched::StepSource& source, uint64_t seed) { return runOne(source, seed, lastSm_); }

Stats Simulator::runOne(sched::StepSource& source, uint64_t seed, uint32_t& sm) const {
  switch (config_.sm.kind) {
    case SmSelection::Kind::Index: sm = config_.sm.index; break;
    case SmSelection::Kind::All: sm = kAllSms; break;
    case SmSelection::Kind::Random:
      // Uniform over the SMs that receive work (an idle SM's L1 sees nothing).
      sm = static_cast<uint32_t>(Rng(mixSeed(seed, 0x736du))
                                     .below(std::max<uint32_t>(1, std::min(config_.smCount, source.busySms()))));
      break;
  }
  Run run(config_, seed, sm, callback_);
  return run.execute(source);
}

void summarize(const std::vector<double>& values, double& median, double& rsd) {
  median = 0.0;
  rsd = 0.0;
  if (values.empty()) return;
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  median = (n % 2 == 1) ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  double mean = 0.0;
  for (double v : values) mean += v;
  mean /= double(n);
  double var = 0.0;
  for (double v : values) var += (v - mean) * (v - mean);
  var /= double(n);
  rsd = median == 0.0 ? 0.0 : 100.0 * std::sqrt(var) / median;
}

Report Simulator::runMany(const StepSourceFactory& factory) {
  Report report;
  report.config = config_;
  const uint32_t n = config_.runs;
  std::vector<Stats> all(n);
  std::vector<uint32_t> sms(n, 0);
  std::atomic<uint32_t> busySms{UINT32_MAX};  // as the sources report it (the same for every run)
  std::vector<std::exception_ptr> errors(n);
  std::atomic<uint32_t> nextRun{0};
  std::atomic<bool> failed{false};
  // Takes runs in order until none is left or one has failed.
  auto worker = [&] {
    for (uint32_t i; !failed.load() && (i = nextRun.fetch_add(1)) < n;) {
      try {
        const uint64_t seed = config_.seed + i;
        std::unique_ptr<sched::StepSource> source = factory(seed);
        if (!source) throw std::runtime_error("cachesim: the step source factory returned no source");
        busySms = source->busySms();
        all[i] = runOne(*source, seed, sms[i]);
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
  if (config_.sm.kind == SmSelection::Kind::Index && config_.sm.index >= busySms.load())
    report.warnings.push_back("SM " + std::to_string(config_.sm.index) + " receives no workgroups (the launch keeps " +
                              (busySms == 1 ? std::string("only SM 0") : "SMs 0.." + std::to_string(busySms - 1)) +
                              " busy), so every count is 0; choose one of those SMs, all, or random");

  RunSummary& rs = report.runs;
  rs.count = n;
  for (uint32_t i = 0; i < n; ++i) {
    rs.values.push_back(all[i].missRate());
    rs.seeds.push_back(config_.seed + i);
    rs.sms.push_back(sms[i] == kAllSms ? std::string("all") : std::to_string(sms[i]));
  }
  summarize(rs.values, rs.median, rs.rsd);
  double best = -1.0;
  for (uint32_t i = 0; i < rs.values.size(); ++i) {
    double d = std::fabs(rs.values[i] - rs.median);
    if (best < 0.0 || d < best) {
      best = d;
      rs.representative = i;
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
