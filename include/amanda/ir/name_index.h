// The (scope, name) -> op index of a Graph: open addressing with linear probing and
// backward-shift deletion over 4-byte op ids. An entry's key is read back from the op itself
// (through the KeyOf function the caller passes), so the table stores nothing but ids:
// about 8 bytes per named op instead of the 30-odd of a general hash map.
#pragma once

#include <cstdint>
#include <vector>

#include "amanda/ir/ids.h"

namespace amanda::ir {

class NameIndex {
 public:
  template <class KeyOf>
  OpId find(uint64_t key, KeyOf key_of) const {
    if (slots_.empty()) return OpId();
    size_t mask = slots_.size() - 1;
    for (size_t i = hash(key) & mask;; i = (i + 1) & mask) {
      uint32_t v = slots_[i];
      if (v == 0) return OpId();
      if (key_of(OpId(v)) == key) return OpId(v);
    }
  }

  // Adds op under key unless the key is taken; returns whether it was added.
  template <class KeyOf>
  bool insert(uint64_t key, OpId op, KeyOf key_of) {
    if ((size_ + 1) * 4 > slots_.size() * 3) grow(slots_.empty() ? 16 : slots_.size() * 2, key_of);
    size_t mask = slots_.size() - 1;
    for (size_t i = hash(key) & mask;; i = (i + 1) & mask) {
      uint32_t v = slots_[i];
      if (v == 0) {
        slots_[i] = op.value;
        ++size_;
        return true;
      }
      if (key_of(OpId(v)) == key) return false;
    }
  }

  // Removes the entry of key if it is op; returns whether it did.
  template <class KeyOf>
  bool erase(uint64_t key, OpId op, KeyOf key_of) {
    if (slots_.empty()) return false;
    size_t mask = slots_.size() - 1;
    size_t i = hash(key) & mask;
    for (;; i = (i + 1) & mask) {
      uint32_t v = slots_[i];
      if (v == 0) return false;
      if (v == op.value) break;
    }
    // Backward-shift deletion keeps every probe sequence unbroken without tombstones.
    slots_[i] = 0;
    --size_;
    for (size_t j = (i + 1) & mask; slots_[j] != 0; j = (j + 1) & mask) {
      size_t home = hash(key_of(OpId(slots_[j]))) & mask;
      bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
      if (stays) continue;
      slots_[i] = slots_[j];
      slots_[j] = 0;
      i = j;
    }
    return true;
  }

  template <class KeyOf>
  void reserve(size_t n, KeyOf key_of) {
    size_t cap = 16;
    while (cap * 3 < n * 4) cap *= 2;
    if (cap > slots_.size()) grow(cap, key_of);
  }

  size_t size() const { return size_; }
  size_t capacity() const { return slots_.size(); }
  size_t memory_bytes() const { return slots_.capacity() * sizeof(uint32_t); }

 private:
  static size_t hash(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return static_cast<size_t>(k);
  }

  template <class KeyOf>
  void grow(size_t cap, KeyOf key_of) {
    std::vector<uint32_t> old;
    old.swap(slots_);
    slots_.assign(cap, 0);
    size_t mask = cap - 1;
    for (uint32_t v : old)
      if (v) {
        size_t i = hash(key_of(OpId(v))) & mask;
        while (slots_[i]) i = (i + 1) & mask;
        slots_[i] = v;
      }
  }

  std::vector<uint32_t> slots_;
  size_t size_ = 0;
};

}  // namespace amanda::ir
