#include "amanda/support/symbols.h"

#include "amanda/support/diagnostics.h"

#include <cstring>

#include <absl/hash/hash.h>

namespace amanda {

namespace {
constexpr size_t kChunk = 1 << 16;
}

size_t SymbolTable::Hash::operator()(Symbol s) const { return absl::Hash<std::string_view>{}(t->view(s)); }
size_t SymbolTable::Hash::operator()(std::string_view s) const { return absl::Hash<std::string_view>{}(s); }

SymbolTable::SymbolTable() : set_(0, Hash{this}, Eq{this}) {
  chunks_.push_back(std::make_unique<char[]>(kChunk));
  chunk_sizes_.push_back(kChunk);
  entries_.push_back({0, 0});
  set_.insert(0);
}

Symbol SymbolTable::find(std::string_view s) const {
  auto it = set_.find(s);
  return it == set_.end() ? kNone : *it;
}

Symbol SymbolTable::intern(std::string_view s) {
  auto it = set_.find(s);
  if (it != set_.end()) return *it;
  if (chunk_used_ + s.size() > chunk_sizes_.back()) {
    size_t n = s.size() > kChunk ? s.size() : kChunk;
    chunks_.push_back(std::make_unique<char[]>(n));
    chunk_sizes_.push_back(n);
    chunk_used_ = 0;
  }
  char* dst = chunks_.back().get() + chunk_used_;
  if (!s.empty()) std::memcpy(dst, s.data(), s.size());
  Symbol id = static_cast<Symbol>(entries_.size());
  if (chunks_.size() > 0xffff) throw Error("symbol table: more than 4 GiB of distinct names");
  entries_.push_back({static_cast<uint32_t>(((chunks_.size() - 1) << 16) | chunk_used_),
                      static_cast<uint32_t>(s.size())});
  chunk_used_ += s.size();
  set_.insert(id);
  return id;
}

void SymbolTable::reserve(size_t symbols, size_t chars) {
  entries_.reserve(symbols + 1);
  set_.reserve(symbols + 1);
  (void)chars;  // names go into 64 KiB chunks as they come
}

size_t SymbolTable::memory_bytes() const {
  size_t n = entries_.capacity() * sizeof(Entry) + set_.capacity() * (sizeof(Symbol) + 1);
  for (size_t c : chunk_sizes_) n += c;
  return n;
}

}  // namespace amanda
