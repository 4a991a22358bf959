// Throughput and memory of the cache simulator on synthetic input (prints figures; not a test).
//
//   bench_cachesim [--quick] [--only PATTERN] [--section N]   (PATTERN: matmul or mixed; N: 1 or 2)
//
// Two synthetic line streams over a 64 Ki-line (8 MiB) footprint:
//   matmul  48 resident warps of a naive 1024x1024 float matrix multiply (C = A * B), each warp
//           one row of C and 32 columns: per k it reads A[row][k] (one line, broadcast) and
//           B[k][32 columns] (one coalesced line). A GPU-like stream: short reuse distances.
//           Rows wrap after 48 so that the footprint (33.5 Ki lines) is reached early and is the
//           same at both trace lengths.
//   mixed   1/2 streaming walk, 3/8 re-reads of one of the last 256 lines, 1/8 uniformly random
//           over the footprint: a worst case with mostly long reuse distances (~85% misses).
// Sections:
//   1. line requests straight into one SM's L1 model (SmModel::read), classification on; the
//      pattern's own time, measured alone on the same requests, is printed too, with the
//      model's rate without it;
//   2. the whole Simulator driven by a synthetic scheduler (warp steps of 32 lanes; strict
//      round-robin over 48 warps, honouring delayWarp). The source's own time, measured alone on
//      the same steps, is printed too, with the rate of the simulator (coalescing included)
//      without it.
// Rates are given per second of wall time and per second of CPU time of the measuring thread
// (the latter is robust when other processes share the machine). Each measurement runs in a
// forked child so its peak RSS (ru_maxrss) is its own, at two trace lengths with the same
// footprint: the memory figures show that memory does not grow with the length of the trace.
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cltrace/cachesim/config.h"
#include "cltrace/cachesim/simulator.h"
#include "cltrace/cachesim/sm_model.h"

using namespace cltrace;
using namespace cltrace::cachesim;

namespace {

constexpr uint32_t kWarps = 48;
constexpr uint64_t kFootprint = 64 * 1024;  // lines

struct Request {
  uint32_t warp;
  uint64_t line;
  bool broadcast;  // all 32 lanes read the same word
};

class Pattern {
 public:
  virtual ~Pattern() = default;
  virtual Request next() = 0;
};

class MixedPattern : public Pattern {
 public:
  Request next() override {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    uint64_t r = state_;
    uint32_t w = warp_++ % kWarps;
    switch (r & 7) {
      case 0: return {w, (r >> 20) & (kFootprint - 1), false};
      case 1: case 2: case 3: return {w, (pos_ - ((r >> 8) & 255)) & (kFootprint - 1), false};
      default: pos_ = (pos_ + 1) & (kFootprint - 1); return {w, pos_, false};
    }
  }

 private:
  uint64_t state_ = 88172645463325252ull;
  uint64_t pos_ = 0;
  uint32_t warp_ = 0;
};

class MatmulPattern : public Pattern {
 public:
  static constexpr uint64_t kN = 1024;            // floats per row
  static constexpr uint64_t kLinesPerRow = kN / 32;
  static constexpr uint64_t kBBase = kN * kLinesPerRow;  // B follows A
  static constexpr uint64_t kRows = 48;                   // rows of C visited (then repeated)
  MatmulPattern() {
    for (uint32_t w = 0; w < kWarps; ++w) {
      row_[w] = w / 8;
      block_[w] = w % 8;
    }
  }
  Request next() override {
    uint32_t w = turn_ / 2 % kWarps;
    bool readA = (turn_++ & 1) == 0;
    if (readA) return {w, row_[w] * kLinesPerRow + k_[w] / 32, true};
    Request r{w, kBBase + k_[w] * kLinesPerRow + block_[w], false};
    if (++k_[w] == kN) {  // this warp's C block is done: take the next one
      k_[w] = 0;
      block_[w] += 8;
      if (block_[w] >= kLinesPerRow) {
        block_[w] %= 8;
        row_[w] = (row_[w] + kWarps / 8) % kRows;
      }
    }
    return r;
  }

 private:
  uint64_t row_[kWarps], block_[kWarps], k_[kWarps] = {};
  uint64_t turn_ = 0;
};

std::unique_ptr<Pattern> makePattern(const std::string& name) {
  if (name == "mixed") return std::make_unique<MixedPattern>();
  return std::make_unique<MatmulPattern>();
}

// Scheduler stand-in: strict round-robin over 48 warps of SM 0, one step per cycle; a warp that
// is not ready makes the SM wait for it.
class SyntheticSource : public sched::StepSource {
 public:
  SyntheticSource(uint64_t steps, const std::string& pattern) : remaining_(steps), pattern_(makePattern(pattern)) {
    for (auto& r : ready_) r = 0;
  }
  bool next(sched::WarpStep& out) override {
    if (remaining_ == 0) return false;
    --remaining_;
    Request r = pattern_->next();
    if (ready_[r.warp] > cycle_) cycle_ = ready_[r.warp];
    out.sm = 0;
    out.warpKey = r.warp;
    out.warp = r.warp;
    out.cycle = cycle_++;
    out.instruction = r.broadcast ? 0 : 1;
    out.kind = AccessKind::Load;
    out.lanes.resize(32);
    sched::LaneAccess* lane = out.lanes.data();
    const uint64_t base = r.line * 128, stride = r.broadcast ? 0 : 4;
    for (uint32_t i = 0; i < 32; ++i) lane[i] = sched::LaneAccess{i, 4, base + stride * i};
    // Noted as the scheduler notes them while it fills the lanes.
    out.bounds = sched::LaneBounds{base | (stride * 31), base, base, base + stride * 31, 4};
    out.hasBounds = true;
    return true;
  }
  void delayWarp(uint64_t warpKey, uint64_t readyCycle) override {
    if (readyCycle > ready_[warpKey]) ready_[warpKey] = readyCycle;
  }

 private:
  uint64_t remaining_;
  std::unique_ptr<Pattern> pattern_;
  uint64_t ready_[kWarps];
  uint64_t cycle_ = 0;
};

double cpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

double maxRssMiB() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_maxrss) / 1024.0;
}

// Runs `body` in a child process and waits for it.
void isolated(const std::function<void()>& body) {
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    body();
    std::fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
}

void benchRequests(const std::string& pattern, const std::vector<std::string>& overrides, uint64_t requests) {
  isolated([&] {
    Config config = loadConfig("gtx480-16k", overrides);
    SmModel model(config, 1);
    std::unique_ptr<Pattern> p = makePattern(pattern);
    uint64_t cycle = 0, sink = 0;
    auto w0 = std::chrono::steady_clock::now();
    double c0 = cpuSeconds();
    for (uint64_t i = 0; i < requests; ++i) {
      Request rq = p->next();
      RequestResult r = model.read(rq.line, cycle, rq.warp);
      if (r.outcome == Outcome::MshrStall) cycle = r.readyCycle;  // wait for a free MSHR
      ++cycle;
      sink += r.readyCycle;
    }
    double cpu = cpuSeconds() - c0;
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    // The pattern's own cost (a virtual call and its arithmetic per request), measured alone
    // on the same requests, so that the model's rate can be given without it (as section 2
    // does for its source).
    std::unique_ptr<Pattern> alone = makePattern(pattern);
    const double a0 = cpuSeconds();
    for (uint64_t i = 0; i < requests; ++i) sink += alone->next().line;
    const double patternCpu = cpuSeconds() - a0;
    const Stats& s = model.stats();
    std::string cfg;
    for (const std::string& o : overrides) cfg += (cfg.empty() ? "" : ",") + o;
    std::printf("%-7s %-22s %6.1f M req  wall %6.2f s %6.1f M/s  cpu %6.2f s %6.1f M/s  pattern alone %5.2f s, "
                "model %6.1f M/s  maxrss %6.1f MiB  lines %6llu  miss %.3f (cold %.3f cap %.3f conf %.3f) lat %.3f%s\n",
                pattern.c_str(), cfg.empty() ? "defaults" : cfg.c_str(), requests / 1e6, wall, requests / wall / 1e6,
                cpu, requests / cpu / 1e6, patternCpu, requests / std::max(cpu - patternCpu, 1e-9) / 1e6, maxRssMiB(),
                static_cast<unsigned long long>(model.distinctLines()),
                s.missRate(), double(s.misses.cold) / s.reads,
                double(s.misses.capacity) / s.reads, double(s.misses.conflict) / s.reads,
                double(s.misses.latency) / s.reads, sink == 42 ? "!" : "");
  });
}

void benchSteps(const std::string& pattern, const std::vector<std::string>& overrides, uint64_t steps) {
  isolated([&] {
    Config config = loadConfig("gtx480-16k", overrides);
    Simulator sim(config);
    SyntheticSource source(steps, pattern);
    auto w0 = std::chrono::steady_clock::now();
    double c0 = cpuSeconds();
    Stats s = sim.run(source, 1);
    double cpu = cpuSeconds() - c0;
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    // The synthetic source's own cost (making 32 lanes per step), measured alone on the same
    // steps, so that the simulator's share can be given apart from it.
    SyntheticSource alone(steps, pattern);
    sched::WarpStep step;
    uint64_t sink = 0;
    double a0 = cpuSeconds();
    while (alone.next(step)) sink += step.lanes[7].address;
    double sourceCpu = cpuSeconds() - a0;
    std::string cfg;
    for (const std::string& o : overrides) cfg += (cfg.empty() ? "" : ",") + o;
    std::printf("%-7s %-22s %6.1f M steps (%5.1f M req, %6.1f M lanes)  wall %6.2f s %5.1f M req/s  cpu %6.2f s "
                "%5.1f M req/s  source alone %5.2f s, simulator %5.1f M req/s  maxrss %6.1f MiB  miss %.3f "
                "lat %.3f mshr %.4f%s\n",
                pattern.c_str(), cfg.empty() ? "defaults" : cfg.c_str(), steps / 1e6, s.requests / 1e6,
                s.requestsBeforeCoalescing / 1e6, wall, s.requests / wall / 1e6, cpu, s.requests / cpu / 1e6,
                sourceCpu, s.requests / (cpu - sourceCpu) / 1e6, maxRssMiB(), s.missRate(),
                double(s.misses.latency) / double(s.reads ? s.reads : 1),
                double(s.misses.mshr) / double(s.reads ? s.reads : 1), sink == 42 ? "!" : "");
  });
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::vector<std::string> patterns = {"matmul", "mixed"};
  int section = 0;  // 0: both
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc &&
               (std::strcmp(argv[i + 1], "matmul") == 0 || std::strcmp(argv[i + 1], "mixed") == 0)) {
      patterns = {argv[++i]};
    } else if (std::strcmp(argv[i], "--section") == 0 && i + 1 < argc &&
               (std::strcmp(argv[i + 1], "1") == 0 || std::strcmp(argv[i + 1], "2") == 0)) {
      section = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: bench_cachesim [--quick] [--only matmul|mixed] [--section 1|2]\n");
      return 2;
    }
  }
  const uint64_t shortLen = quick ? 1'000'000 : 4'000'000;
  const uint64_t longLen = quick ? 4'000'000 : 40'000'000;

  std::printf("cachesim benchmark: one core, classification on unless noted; mixed footprint %llu lines\n",
              static_cast<unsigned long long>(kFootprint));
  if (section != 2) std::printf("\n-- 1. line requests into one SM's L1 model\n");
  for (const std::string& pattern : patterns) {
    if (section == 2) break;
    for (uint64_t n : {shortLen, longLen}) benchRequests(pattern, {"timing=off"}, n);
    for (uint64_t n : {shortLen, longLen}) benchRequests(pattern, {}, n);
    benchRequests(pattern, {"timing=off", "classify=off"}, longLen);
  }

  if (section != 1) std::printf("\n-- 2. whole simulator, synthetic scheduler, 32-lane warp steps\n");
  for (const std::string& pattern : patterns) {
    if (section == 1) break;
    for (uint64_t n : {shortLen, longLen}) benchSteps(pattern, {"timing=off"}, n);
    for (uint64_t n : {shortLen, longLen}) benchSteps(pattern, {}, n);
  }
  return 0;
}
