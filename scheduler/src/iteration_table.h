// Interning of loop-iteration vectors (internal to the scheduler).
//
// Records of one workgroup share few distinct iteration vectors (all threads of a workgroup
// run the same loops), so each record stores a 32-bit id into a per-workgroup table instead of
// its up-to-seven counters.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

namespace cltrace::sched::detail {

// Equality of short counter vectors (inline: a library memcmp call costs more here).
inline bool sameCounters(const uint32_t* a, const uint32_t* b, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

class IterationTable {
 public:
  void clear() {
    data_.clear();
    entries_.clear();
    if (!slots_.empty()) std::memset(slots_.data(), 0, slots_.size() * sizeof(uint32_t));
  }

  uint32_t intern(const uint32_t* counters, uint32_t depth) {
    if ((entries_.size() + 1) * 2 > slots_.size()) grow();
    const uint64_t h = hash(counters, depth);
    size_t mask = slots_.size() - 1;
    for (size_t i = static_cast<size_t>(h) & mask;; i = (i + 1) & mask) {
      const uint32_t slot = slots_[i];
      if (slot == 0) {
        const uint32_t id = static_cast<uint32_t>(entries_.size());
        entries_.push_back({static_cast<uint32_t>(data_.size()), depth});
        data_.insert(data_.end(), counters, counters + depth);
        slots_[i] = id + 1;
        return id;
      }
      const Entry& e = entries_[slot - 1];
      if (e.depth == depth && sameCounters(data_.data() + e.offset, counters, depth))
        return slot - 1;
    }
  }

  // intern() that first tries `guess`: the threads of a workgroup run the same loops, so each
  // meets the vectors in the order the first one interned them and the id after its previous
  // record's is usually right (no hashing, no probing).
  uint32_t intern(const uint32_t* counters, uint32_t depth, uint32_t guess) {
    if (guess < entries_.size()) {
      const Entry& e = entries_[guess];
      if (e.depth == depth && sameCounters(data_.data() + e.offset, counters, depth)) return guess;
    }
    return intern(counters, depth);
  }

  const uint32_t* counters(uint32_t id) const { return data_.data() + entries_[id].offset; }
  uint32_t depth(uint32_t id) const { return entries_[id].depth; }
  size_t size() const { return entries_.size(); }
  size_t bytes() const {
    return data_.capacity() * sizeof(uint32_t) + entries_.capacity() * sizeof(Entry) +
           slots_.capacity() * sizeof(uint32_t);
  }

 private:
  struct Entry {
    uint32_t offset;
    uint32_t depth;
  };

  static uint64_t hash(const uint32_t* c, uint32_t depth) {
    uint64_t h = 0x9E3779B97F4A7C15ull * (depth + 1);
    for (uint32_t i = 0; i < depth; ++i) {
      h ^= c[i];
      h *= 0xff51afd7ed558ccdull;
      h ^= h >> 32;
    }
    return h;
  }

  void grow() {
    const size_t size = slots_.empty() ? 64 : slots_.size() * 2;
    slots_.assign(size, 0);
    const size_t mask = size - 1;
    for (uint32_t id = 0; id < entries_.size(); ++id) {
      const Entry& e = entries_[id];
      size_t i = static_cast<size_t>(hash(data_.data() + e.offset, e.depth)) & mask;
      while (slots_[i] != 0) i = (i + 1) & mask;
      slots_[i] = id + 1;
    }
  }

  std::vector<uint32_t> data_;   // counters of all vectors, concatenated
  std::vector<Entry> entries_;   // per id
  std::vector<uint32_t> slots_;  // open addressing, id + 1, 0 = empty
};

}  // namespace cltrace::sched::detail
