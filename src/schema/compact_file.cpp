#include "amanda/schema/compact_file.h"

#include "amanda/support/diagnostics.h"

namespace amanda::schema {

void CompactReader::fail(const std::string& msg) const { throw ParseError(SourceLoc{path_, line_, 0}, msg); }

size_t CompactReader::split(std::string_view s, std::string_view* f, size_t n) {
  size_t k = 0;
  while (true) {
    size_t t = s.find('\t');
    if (k == n) return n + 1;
    f[k++] = s.substr(0, t);
    if (t == std::string_view::npos) return k;
    s.remove_prefix(t + 1);
  }
}

std::unique_ptr<NamespaceSchema> CompactReader::run() {
  auto ns = std::make_unique<NamespaceSchema>();
  std::unique_ptr<OpSchema> op;
  auto flush = [&] {
    if (op) ns->add(std::move(op));
  };
  bool have_ns = false;
  size_t pos = 0;
  begin(*ns);
  std::string_view f[16];
  const size_t max = max_fields() < 16 ? max_fields() : 16;
  while (pos < text_.size()) {
    size_t nl = text_.find('\n', pos);
    if (nl == std::string_view::npos) nl = text_.size();
    std::string_view l = text_.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_;
    if (line_ == 1) {
      if (l != magic()) fail("not " + std::string(file_kind()) + " namespace file (the first line must be '" + std::string(magic()) + "')");
      continue;
    }
    if (l.empty() || l[0] == '#') continue;
    size_t n = split(l, f, max);
    std::string_view tag = f[0];
    if (tag == "namespace") {
      if (have_ns) fail("a second 'namespace' line");
      if (n != 3) fail("expected 'namespace<TAB>NAME<TAB>TYPE_SYSTEM'");
      std::string why;
      if (!valid_namespace_name(f[1], &why)) fail("bad namespace name '" + std::string(f[1]) + "': " + why);
      ns->name = std::string(f[1]);
      ns->type_system = std::string(f[2]);
      have_ns = true;
      continue;
    }
    if (!have_ns) fail("expected the 'namespace' line");
    if (tag == "op") {
      if (n != op_fields() || f[1].empty()) fail("expected '" + std::string(op_usage()) + "'");
      flush();
      if (ns->find(f[1])) fail("op '" + std::string(f[1]) + "' given twice");
      op = std::make_unique<OpSchema>();
      op->type = std::string(f[1]);
      on_op(*op, f, text_.substr(pos < text_.size() ? pos : text_.size()));
      continue;
    }
    if (!op) fail("'" + std::string(tag) + "' before the first 'op' line");
    if (!member(tag, f, n, *op)) fail("unknown line kind '" + std::string(tag) + "'");
  }
  if (!have_ns) fail("expected the 'namespace' line");
  flush();
  return ns;
}

}  // namespace amanda::schema
