// Field-by-field comparison of two simulator results, for the tests that run one input two ways.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "cltrace/cachesim/stats.h"

namespace cltrace::cachesim::testing {

inline void expectSameMisses(const MissCounts& got, const MissCounts& want) {
  EXPECT_EQ(got.cold, want.cold);
  EXPECT_EQ(got.capacity, want.capacity);
  EXPECT_EQ(got.conflict, want.conflict);
  EXPECT_EQ(got.latency, want.latency);
  EXPECT_EQ(got.mshr, want.mshr);
}

// Every total, the reuse histogram and every per-instruction count.
inline void expectSameStats(const Stats& got, const Stats& want) {
  EXPECT_EQ(got.steps, want.steps);
  EXPECT_EQ(got.requestsBeforeCoalescing, want.requestsBeforeCoalescing);
  EXPECT_EQ(got.requests, want.requests);
  EXPECT_EQ(got.reads, want.reads);
  EXPECT_EQ(got.readHits, want.readHits);
  EXPECT_EQ(got.readMisses, want.readMisses);
  EXPECT_EQ(got.writes, want.writes);
  EXPECT_EQ(got.writeHits, want.writeHits);
  EXPECT_EQ(got.writeMisses, want.writeMisses);
  EXPECT_EQ(got.writeBacks, want.writeBacks);
  EXPECT_EQ(got.atomics, want.atomics);
  EXPECT_EQ(got.constantLoads, want.constantLoads);
  EXPECT_EQ(got.barriers, want.barriers);
  EXPECT_EQ(got.fences, want.fences);
  EXPECT_EQ(got.cycles, want.cycles);
  expectSameMisses(got.misses, want.misses);
  EXPECT_EQ(got.reuse.cold, want.reuse.cold);
  EXPECT_EQ(got.reuse.buckets, want.reuse.buckets);
  ASSERT_EQ(got.perInstruction.size(), want.perInstruction.size());
  for (size_t i = 0; i < got.perInstruction.size(); ++i) {
    const InstructionStats& g = got.perInstruction[i];
    const InstructionStats& w = want.perInstruction[i];
    SCOPED_TRACE("instruction " + std::to_string(w.instruction));
    EXPECT_EQ(g.instruction, w.instruction);
    EXPECT_EQ(g.steps, w.steps);
    EXPECT_EQ(g.requestsBeforeCoalescing, w.requestsBeforeCoalescing);
    EXPECT_EQ(g.requests, w.requests);
    EXPECT_EQ(g.reads, w.reads);
    EXPECT_EQ(g.readHits, w.readHits);
    EXPECT_EQ(g.readMisses, w.readMisses);
    EXPECT_EQ(g.writes, w.writes);
    EXPECT_EQ(g.writeMisses, w.writeMisses);
    EXPECT_EQ(g.atomics, w.atomics);
    EXPECT_EQ(g.constantLoads, w.constantLoads);
    expectSameMisses(g.misses, w.misses);
  }
}

}  // namespace cltrace::cachesim::testing
