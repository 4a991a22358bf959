// Reuse distance (stack distance) at line granularity in O(log n) per access.
//
// The distance of an access is the number of distinct lines touched since the previous access
// to the same line (infinite for the first access). Method (Bennett-Kruskal style): every line
// keeps the timestamp of its latest access; a bitmap over timestamps marks the latest access of
// each line, and the distance is the number of marks after the line's previous timestamp.
// Counting uses popcounts for nearby timestamps and, for distant ones, a count tree over the
// popcounts of the 64-bit bitmap words older than the last few (the recent words are counted
// by popcount alone, so reusing a line seen in them updates no count): one byte per word in
// groups of 64, then levels of 16 32-bit counts, each group one host cache line. A query sums
// the counts left of the path in one group per level (a masked SIMD sum on x86-64) and an
// update adds to one count per level: 3 levels for a 64 Ki-line footprint and no
// data-dependent loop (a Fenwick tree takes ~log2(n) steps per query and per update, with loop
// exits the branch predictor cannot guess). When the timestamps run out, the live marks are
// renumbered 0..n-1 (compaction), so memory is proportional to the number of distinct lines,
// not to the length of the trace.
//
// The latest timestamps live in blocks of 16 consecutive lines, one 64-byte block per cache
// line of the host, found through a hash table keyed by line / 16. Kernels touch buffers
// densely, so a footprint of n lines costs ~4.5 bytes per line (it stays in the host's L2 for
// footprints of a few hundred thousand lines, where a table keyed by line would not); a
// fully sparse footprint costs ~120 bytes per line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// Run-time choice of POPCNT where the compiler does not assume it (x86 with GCC or Clang).
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__) && !defined(__POPCNT__)
#define CLTRACE_POPCNT_DISPATCH 1
#else
#define CLTRACE_POPCNT_DISPATCH 0
#endif

namespace cltrace::cachesim {

// Portable popcount (the x86-64 baseline has no POPCNT instruction; the builtin then calls
// a slow library routine).
inline uint32_t popcount64(uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555ull);
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
  return static_cast<uint32_t>((x * 0x0101010101010101ull) >> 56);
}

class ReuseDistanceTracker {
 public:
  static constexpr uint64_t kInfinite = ~uint64_t(0);

  // `initialTimestamps`: size of the timestamp window before the first compaction (rounded up
  // to a multiple of 64, at least 64).
  explicit ReuseDistanceTracker(uint32_t initialTimestamps = 1u << 16);

  // Records an access to `line` and returns its reuse distance (kInfinite on first access).
  // The popcounts run on the POPCNT instruction when the CPU has it (the x86-64 baseline does
  // not), chosen once per access; both variants count the same bits.
  __attribute__((always_inline)) uint64_t access(uint64_t line) {
#if CLTRACE_POPCNT_DISPATCH
    if (hasPopcnt_) return accessPopcnt(line);
#endif
    return accessPortable(line);
  }

  // Hint: `line` will be accessed soon. Starts loading its hash slot and stamp block so that
  // the wait overlaps other work (it usually sits in its home slot).
  void prefetch(uint64_t line) const {
    size_t slot = homeSlot((line >> kGroupBits) + 1);
    __builtin_prefetch(&keys_[slot]);
    __builtin_prefetch(&blocks_[slot]);
  }

  // Distinct lines seen so far.
  uint64_t distinctLines() const { return live_; }
  // Bytes held by the tracker's tables.
  size_t memoryBytes() const;
  // Number of compactions so far (for tests).
  uint64_t compactions() const { return compactions_; }
  void clear();

 private:
  static constexpr uint32_t kGroupBits = 4;  // 16 lines per block
  // The current word and the kRecentWords before it stay out of the count tree: marksAfterWith
  // counts them by popcount. A word joins the tree when it becomes older than that.
  static constexpr uint32_t kRecentWords = 4;
  struct alignas(64) Block {
    uint32_t stamp[1u << kGroupBits];  // latest timestamp + 1 of each line; 0 = never seen
  };

  // The stamp slot of `line`, creating its block when needed.
  uint32_t& stampOf(uint64_t line) {
    const uint64_t key = (line >> kGroupBits) + 1;
    size_t slot = findSlot(key);
    if (keys_[slot] != key) {
      keys_[slot] = key;
      if (++groups_ * 5 > keys_.size() * 3) {  // load factor 0.6
        growTable();
        slot = findSlot(key);
      }
    }
    return blocks_[slot].stamp[line & ((1u << kGroupBits) - 1)];
  }

  // Where the probe for `key` (group + 1) starts.
  size_t homeSlot(uint64_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> hashShift_) & (keys_.size() - 1);
  }
  // Slot holding `key`, or the empty slot where it goes (linear probing).
  size_t findSlot(uint64_t key) const {
    const size_t mask = keys_.size() - 1;
    size_t i = homeSlot(key);
    while (keys_[i] != 0 && keys_[i] != key) i = (i + 1) & mask;
    return i;
  }

  // Marks of 64 consecutive words (one byte each) and 16 counts of the levels above; one host
  // cache line each.
  struct alignas(64) WordCounts {
    uint8_t c[64];
  };
  struct alignas(64) CountGroup {
    uint32_t c[16];
  };

  // Sum of g.c[0 .. k), k <= 63.
  static uint32_t sumBefore(const WordCounts& g, uint32_t k) {
#if defined(__SSE2__)
    const __m128i kk = _mm_set1_epi8(static_cast<char>(k));
    const __m128i zero = _mm_setzero_si128();
    const __m128i* v = reinterpret_cast<const __m128i*>(g.c);
    __m128i s = zero;
    for (int q = 0; q < 4; ++q) {
      const char b = static_cast<char>(16 * q);
      const __m128i lane = _mm_setr_epi8(b, b + 1, b + 2, b + 3, b + 4, b + 5, b + 6, b + 7, b + 8, b + 9,
                                         b + 10, b + 11, b + 12, b + 13, b + 14, b + 15);
      // psadbw against zero: two 64-bit sums of 8 bytes each.
      s = _mm_add_epi64(s, _mm_sad_epu8(_mm_and_si128(_mm_load_si128(v + q), _mm_cmpgt_epi8(kk, lane)), zero));
    }
    return static_cast<uint32_t>(_mm_cvtsi128_si32(s) + _mm_cvtsi128_si32(_mm_unpackhi_epi64(s, s)));
#else
    uint32_t sum = 0;
    for (uint32_t i = 0; i < k; ++i) sum += g.c[i];
    return sum;
#endif
  }

  // Sum of g.c[0 .. k), k <= 15.
  static uint32_t sumBefore(const CountGroup& g, uint32_t k) {
#if defined(__SSE2__)
    const __m128i kk = _mm_set1_epi32(static_cast<int>(k));
    const __m128i* v = reinterpret_cast<const __m128i*>(g.c);
    __m128i s = _mm_and_si128(_mm_load_si128(v), _mm_cmpgt_epi32(kk, _mm_setr_epi32(0, 1, 2, 3)));
    s = _mm_add_epi32(s, _mm_and_si128(_mm_load_si128(v + 1), _mm_cmpgt_epi32(kk, _mm_setr_epi32(4, 5, 6, 7))));
    s = _mm_add_epi32(s, _mm_and_si128(_mm_load_si128(v + 2), _mm_cmpgt_epi32(kk, _mm_setr_epi32(8, 9, 10, 11))));
    s = _mm_add_epi32(s, _mm_and_si128(_mm_load_si128(v + 3), _mm_cmpgt_epi32(kk, _mm_setr_epi32(12, 13, 14, 15))));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return static_cast<uint32_t>(_mm_cvtsi128_si32(s));
#else
    uint32_t sum = 0;
    for (uint32_t i = 0; i < k; ++i) sum += g.c[i];
    return sum;
#endif
  }

  // Adds `delta` to the count of word `word` (in the tree) and to its ancestors' counts.
  void countAdd(uint32_t word, int32_t delta) {
    wordCounts_[word >> 6].c[word & 63] += static_cast<uint8_t>(delta);
    uint32_t i = word >> 6;
    for (uint32_t l = 0; l < levels_; ++l, i >>= 4)
      counts_[levelBase_[l] + (i >> 4)].c[i & 15] += static_cast<uint32_t>(delta);
  }

  // Marks in words [0, words), all in the tree: at each level, the counts left of the path.
  uint64_t countBefore(uint32_t words) const {
    uint64_t sum = sumBefore(wordCounts_[words >> 6], words & 63);
    uint32_t i = words >> 6;
    for (uint32_t l = 0; l < levels_; ++l, i >>= 4) sum += sumBefore(counts_[levelBase_[l] + (i >> 4)], i & 15);
    return sum;
  }

  template <bool kPopcnt>
  __attribute__((always_inline)) uint64_t accessWith(uint64_t line) {
    if (now_ == capacity_) compact();
    uint32_t& latest = stampOf(line);
    uint64_t distance;
    if (latest != 0) {
      uint32_t p = latest - 1;
      distance = marksAfterWith<kPopcnt>(p);
      words_[p >> 6] &= ~(uint64_t(1) << (p & 63));
      if (inTree(p >> 6)) countAdd(p >> 6, -1);
    } else {
      distance = kInfinite;
      ++live_;
    }
    latest = now_ + 1;
    words_[now_ >> 6] |= uint64_t(1) << (now_ & 63);
    ++now_;
    if ((now_ & 63) == 0 && (now_ >> 6) > kRecentWords) {  // the oldest recent word joins the tree
      const uint32_t w = (now_ >> 6) - 1 - kRecentWords;
      countAdd(w, static_cast<int32_t>(pop<kPopcnt>(words_[w])));
    }
    return distance;
  }
  // One call per access either way, out of line so that access() stays small enough to inline.
  __attribute__((noinline)) uint64_t accessPortable(uint64_t line) { return accessWith<false>(line); }
#if CLTRACE_POPCNT_DISPATCH
  __attribute__((target("popcnt"), noinline)) uint64_t accessPopcnt(uint64_t line) { return accessWith<true>(line); }
#endif

  template <bool kPopcnt>
  static uint32_t pop(uint64_t x) {
    if constexpr (kPopcnt) return static_cast<uint32_t>(__builtin_popcountll(x));
    return popcount64(x);
  }

  // Word `w` is counted in the tree (it is older than the current word and the recent ones).
  bool inTree(uint32_t w) const { return w + kRecentWords < (now_ >> 6); }

  // Marks in (stamp, now): the distinct lines touched since `stamp`.
  template <bool kPopcnt>
  __attribute__((always_inline)) uint64_t marksAfterWith(uint32_t stamp) const {
    const uint32_t wp = stamp >> 6;
    const uint32_t wn = now_ >> 6;  // current (incomplete) word; its bits >= now_ are clear
    const uint64_t upToStamp = ~uint64_t(0) >> (63 - (stamp & 63));  // bits 0..stamp&63
    static_assert(kRecentWords == 4, "the short path below counts the 5 newest words");
    if (wn - wp <= kRecentWords) {
      // Always 5 words, so no loop exit to mispredict: the words after wn are still empty.
      const uint64_t* w = &words_[wp];
      return pop<kPopcnt>(w[0] & ~upToStamp) + pop<kPopcnt>(w[1]) + pop<kPopcnt>(w[2]) + pop<kPopcnt>(w[3]) +
             pop<kPopcnt>(w[4]);
    }
    // Every mark is older than now_: marks after `stamp` = all marks - marks at or before it
    // (the words before wp are all in the tree).
    return live_ - (countBefore(wp) + pop<kPopcnt>(words_[wp] & upToStamp));
  }

  void growTable();
  void compact();
  void resetCounts();  // count tree for the current window, from words_ (the words inTree)

  std::vector<uint64_t> keys_;  // group + 1 per slot, 0 = empty; power-of-two size
  std::vector<Block> blocks_;   // parallel to keys_
  uint32_t hashShift_ = 0;      // 64 - log2(table size)
  uint64_t groups_ = 0;         // occupied slots
  uint64_t live_ = 0;           // distinct lines

  // Timeline.
  uint32_t initial_;
  uint32_t capacity_ = 0;        // timestamps available (multiple of 64)
  uint32_t now_ = 0;             // next timestamp
  std::vector<uint64_t> words_;  // bit t set: t is the latest access of some line; 4 spare words
  // Count tree: the marks of each word inTree, then level 0 sums 64 words, level l + 1 sums
  // 16 level-l counts; the top level is one group. Levels are stored one after another.
  std::vector<WordCounts> wordCounts_;
  std::vector<CountGroup> counts_;
  uint32_t levelBase_[8] = {};  // first group of each level (2^25 words need 5 levels)
  uint32_t levels_ = 0;
  uint64_t compactions_ = 0;
  bool hasPopcnt_;  // the CPU has POPCNT (see access)
};

}  // namespace cltrace::cachesim
