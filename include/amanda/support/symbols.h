// Interned strings. A Symbol is a small integer naming a string; equal strings get equal symbols,
// so names compare in O(1) and a graph stores each distinct name once. Symbol 0 is "".
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include <absl/container/flat_hash_set.h>

namespace amanda {

using Symbol = uint32_t;

class SymbolTable {
 public:
  SymbolTable();
  SymbolTable(const SymbolTable&) = delete;
  SymbolTable& operator=(const SymbolTable&) = delete;

  Symbol intern(std::string_view s);
  // The symbol of s if it was interned, else -1 (as uint32).
  static constexpr Symbol kNone = UINT32_MAX;
  Symbol find(std::string_view s) const;
  std::string_view str(Symbol s) const { return view(s); }
  size_t size() const { return entries_.size(); }
  size_t memory_bytes() const;
  void reserve(size_t symbols, size_t chars);

 private:
  std::string_view view(Symbol s) const {
    const Entry& e = entries_[s];
    return {chunks_[e.loc >> 16].get() + (e.loc & 0xffff), e.length};
  }
  // 8 bytes a symbol: chunk index (16 bits) and offset in the chunk (16 bits; chunks hold 64 KiB,
  // and a longer string gets a chunk of its own at offset 0), then the length.
  struct Entry {
    uint32_t loc;
    uint32_t length;
  };
  struct Hash {
    using is_transparent = void;
    const SymbolTable* t;
    size_t operator()(Symbol s) const;
    size_t operator()(std::string_view s) const;
  };
  struct Eq {
    using is_transparent = void;
    const SymbolTable* t;
    bool operator()(Symbol a, Symbol b) const { return a == b; }
    bool operator()(Symbol a, std::string_view b) const { return t->view(a) == b; }
    bool operator()(std::string_view a, Symbol b) const { return a == t->view(b); }
  };
  std::vector<std::unique_ptr<char[]>> chunks_;
  std::vector<size_t> chunk_sizes_;
  size_t chunk_used_ = 0;
  std::vector<Entry> entries_;
  absl::flat_hash_set<Symbol, Hash, Eq> set_;
};

}  // namespace amanda
