#include "amanda/support/gate.h"
#include "amanda/text/tree.h"

#include <cmath>

#include <absl/container/flat_hash_set.h>

#include "amanda/support/file.h"
#include "scalars.h"

namespace amanda::text {

Tree::Tree() = default;
Tree::Tree(const Tree&) = default;
Tree::Tree(Tree&&) noexcept = default;
Tree& Tree::operator=(const Tree&) = default;
Tree& Tree::operator=(Tree&&) noexcept = default;
Tree::~Tree() = default;

const Tree* Tree::find(std::string_view key) const {
  for (const auto& [k, v] : entries)
    if (k == key) return &v;
  return nullptr;
}

const SourceLoc* Tree::key_loc(std::string_view key) const {
  for (size_t i = 0; i < entries.size(); ++i)
    if (entries[i].first == key) return &key_locs[i];
  return nullptr;
}

ir::Value Tree::to_value() const {
  if (!tag.empty() && tag.rfind("tag:yaml.org,2002:", 0) != 0) throw ParseError(loc, "unexpected tag '" + tag + "' here");
  switch (kind) {
    case Kind::Scalar: return scalar;
    case Kind::Seq: {
      ir::Value::List l;
      for (const auto& x : items) l.push_back(x.to_value());
      return ir::Value(std::move(l));
    }
    case Kind::Map: {
      ir::Value::Map m;
      for (const auto& [k, v] : entries) m.push_back({k, v.to_value()});
      return ir::Value(std::move(m));
    }
  }
  return {};
}

namespace {

class TreeBuilder {
 public:
  explicit TreeBuilder(EventSource& src) : src_(src) {}

  Tree run() {
    next();
    if (ev_.type == Event::End) throw ParseError({src_.file(), 1, 1}, "empty document");
    Tree t = node();
    if (ev_.type != Event::End) throw ParseError(here(), "unexpected content after the document");
    return t;
  }

 private:
  void next() { src_.next(ev_); }
  SourceLoc here() const { return {src_.file(), ev_.line, ev_.column}; }

  Tree node() {
    Tree t;
    t.loc = here();
    t.tag = ev_.tag;
    switch (ev_.type) {
      case Event::Scalar:
        t.kind = Tree::Kind::Scalar;
        t.text = ev_.text;
        switch (ev_.style) {
          case Event::Plain: {
            if (classify_plain(ev_.text) == PlainKind::IntOverflow)
              throw ParseError(here(), "integer " + ev_.text + " is out of the 64-bit range");
            t.scalar = t.tag == "tag:yaml.org,2002:str" ? ir::Value(ev_.text) : resolve_plain(ev_.text);
            break;
          }
          case Event::Quoted:
          case Event::String:
            t.quoted = true;
            t.scalar = ir::Value(ev_.text);
            break;
          case Event::Null: t.scalar = ir::Value(); break;
          case Event::Bool: t.scalar = ir::Value(ev_.text == "true"); break;
          case Event::Int: {
            auto i = parse_int(ev_.text);
            if (!i) throw ParseError(here(), "integer " + ev_.text + " is out of the 64-bit range");
            t.scalar = ir::Value(*i);
            break;
          }
          case Event::Float:
            t.scalar = ir::Value(ev_.text == "NaN" ? std::nan("")
                                 : ev_.text == "Infinity" ? HUGE_VAL
                                 : ev_.text == "-Infinity" ? -HUGE_VAL
                                                           : parse_float(ev_.text).value_or(0.0));
            break;
        }
        next();
        return t;
      case Event::SeqStart:
        t.kind = Tree::Kind::Seq;
        next();
        while (ev_.type != Event::SeqEnd) t.items.push_back(node());
        next();
        return t;
      case Event::MapStart: {
        t.kind = Tree::Kind::Map;
        next();
        absl::flat_hash_set<std::string> seen;
        while (ev_.type != Event::MapEnd) {
          if (ev_.type != Event::Scalar) throw ParseError(here(), "expected a key (a scalar)");
          std::string key = ev_.text;
          SourceLoc kloc = here();
          if (!seen.insert(key).second) throw ParseError(kloc, "duplicate key '" + key + "'");
          next();
          t.key_locs.push_back(kloc);
          t.entries.emplace_back(std::move(key), node());
        }
        next();
        return t;
      }
      default: throw ParseError(here(), "unexpected end of input");
    }
  }

  EventSource& src_;
  Event ev_;
};

}  // namespace

Tree parse_tree(std::string_view text, Format format, const std::string& file_name, const Limits& limits) {
  auto src = format == Format::Yaml ? make_yaml_source(text, file_name, limits) : make_json_source(text, file_name, limits);
  return TreeBuilder(*src).run();
}

Tree read_tree(const std::string& path, std::optional<Format> format) {
  auto buf = ReadGate(path).map_model();  // a regular file, opened without blocking
  if (buf->size() == 0) throw ParseError({path, 1, 1}, "empty file");
  return parse_tree(buf->view(), format.value_or(format_for_path(path)), path);
}

}  // namespace amanda::text
