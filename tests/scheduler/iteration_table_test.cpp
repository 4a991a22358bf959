// The scheduler's interning of loop-iteration vectors (an internal header).
#include "iteration_table.h"

#include <gtest/gtest.h>

using cltrace::sched::detail::IterationTable;

TEST(IterationTable, GivesEachDistinctVectorOneDenseId) {
  IterationTable t;
  const uint32_t a[] = {0, 1}, b[] = {0, 2}, c[] = {0};
  EXPECT_EQ(t.intern(a, 2), 0u);
  EXPECT_EQ(t.intern(b, 2), 1u);
  EXPECT_EQ(t.intern(c, 1), 2u);  // a prefix of `a`, but another depth
  EXPECT_EQ(t.intern(nullptr, 0), 3u);
  EXPECT_EQ(t.intern(b, 2), 1u);
  EXPECT_EQ(t.intern(a, 1), 2u);  // {0} again
  EXPECT_EQ(t.size(), 4u);
  EXPECT_EQ(t.depth(1), 2u);
  EXPECT_EQ(t.counters(1)[1], 2u);
}

TEST(IterationTable, AGuessIsTakenOnlyWhenItsVectorIsEqual) {
  IterationTable t;
  uint32_t v[2] = {7, 0};
  for (uint32_t k = 0; k < 100; ++k) {  // ids 0..99 for {7, k}; the table grows past 64 slots
    v[1] = k;
    EXPECT_EQ(t.intern(v, 2), k);
  }
  v[1] = 41;
  EXPECT_EQ(t.intern(v, 2, 41), 41u);   // right guess
  EXPECT_EQ(t.intern(v, 2, 42), 41u);   // wrong guess: found by hashing
  EXPECT_EQ(t.intern(v, 2, 500), 41u);  // guess past the table
  EXPECT_EQ(t.intern(v, 1, 7), 100u);   // {7}: same first counter, other depth, a new id
  v[1] = 100;
  EXPECT_EQ(t.intern(v, 2, 100), 101u);  // new vector, guess names {7}
  EXPECT_EQ(t.size(), 102u);
  t.clear();
  EXPECT_EQ(t.intern(v, 2, 0), 0u);
  EXPECT_EQ(t.size(), 1u);
}
