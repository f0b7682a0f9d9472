#include <algorithm>
#include <deque>
#include <map>
#include <optional>

#include <absl/container/flat_hash_set.h>
#include <fmt/format.h>

#include "amanda/mapping/engine.h"
#include "amanda/mapping/table_scan.h"
#include "amanda/support/file.h"
#include "amanda/text/events.h"
#include "amanda/schema/validate.h"
#include "compact_pattern.h"

namespace amanda::mapping {


namespace {

// The header of a table file: the top-level `table:` map's src, dst and reversible, read from the
// first events of the file (libyaml) up to the `rules:` key, without building the rules. Returns
// nothing when the file does not begin that way (flow style, keys after the rules, JSON, an
// error): the caller then reads the whole file, which reports any error with its place.
struct Header {
  std::string src, dst, over;
  bool reversible = false;
  std::vector<std::string> only_for;  // as declared (the parser holds the rules to it)
};

// What one rule's matcher needs in a graph: one entry per op of its pattern, each the op types
// that op may have (a rule written for a list of types stands for one rule per type). The rule can
// match only a graph that has, for every entry, one of its types.
using Need = std::vector<std::vector<std::string>>;

bool satisfied(const Need& n, const std::vector<std::string>& types) {
  return std::all_of(n.begin(), n.end(), [&](const std::vector<std::string>& alts) {
    return std::any_of(alts.begin(), alts.end(), [&](const std::string& t) { return std::find(types.begin(), types.end(), t) != types.end(); });
  });
}

// The needs of the rules of a `rules:` list, read from its events (after the SeqStart): a rule's
// `type` (a name, a list, or {src: ..., dst: ...}), its `src`'s `type`, `ops[].type` or `graph:`
// lines. False when the list is written in a way this scan does not follow; the file is then read
// whenever its pair is planned, so nothing depends on the scan being clever. (A rule that names no
// op type matches nothing; the parser refuses it when the file is read.)
template <class Next>
bool scan_rule_needs(const Next& next, text::Event& ev, std::vector<Need>& out, std::vector<std::string>* rule_names = nullptr) {
  auto skip_value = [&]() -> bool {  // ev is the value's first event
    if (ev.type == text::Event::Scalar) return true;
    if (ev.type != text::Event::MapStart && ev.type != text::Event::SeqStart) return false;
    for (int depth = 1; depth > 0;) {
      next();
      if (ev.type == text::Event::MapStart || ev.type == text::Event::SeqStart) ++depth;
      else if (ev.type == text::Event::MapEnd || ev.type == text::Event::SeqEnd) --depth;
      else if (ev.type == text::Event::End) return false;
    }
    return true;
  };
  auto names = [&](Need& need) -> bool {  // a type name or a list of them: one op's alternatives
    std::vector<std::string>& alts = need.emplace_back();
    if (ev.type == text::Event::Scalar) {
      alts.push_back(ev.text);
      return true;
    }
    if (ev.type != text::Event::SeqStart) return false;
    for (next(); ev.type != text::Event::SeqEnd; next()) {
      if (ev.type != text::Event::Scalar) return false;
      alts.push_back(ev.text);
    }
    return !alts.empty();
  };
  // a map's entries, each value handed to f(key) (ev at the value); f returns false to give up
  auto entries = [&](const auto& f) -> bool {
    if (ev.type != text::Event::MapStart) return false;
    for (;;) {
      next();
      if (ev.type == text::Event::MapEnd) return true;
      if (ev.type != text::Event::Scalar) return false;
      std::string key = ev.text;
      next();
      if (!f(key)) return false;
    }
  };
  for (;;) {
    next();
    if (ev.type == text::Event::SeqEnd) return true;
    Need need;
    size_t named = 0;
    bool ok = entries([&](const std::string& key) {
      if (key == "rule_name" && rule_names) {
        if (ev.type != text::Event::Scalar) return false;
        rule_names->push_back(ev.text);
        ++named;
        return true;
      }
      if (key == "type") {
        if (ev.type != text::Event::MapStart) return names(need);
        return entries([&](const std::string& k) { return k == "src" ? names(need) : skip_value(); });  // pushdown
      }
      if (key != "src") return skip_value();
      return entries([&](const std::string& k) {
        if (k == "type") return names(need);
        if (k == "graph") {
          if (ev.type != text::Event::Scalar) return false;
          try {
            for (std::string& t : compact_types(ev.text)) need.push_back({std::move(t)});
          } catch (const std::exception&) {
            return false;
          }
          return true;
        }
        if (k != "ops") return skip_value();
        if (ev.type != text::Event::SeqStart) return false;
        for (next(); ev.type != text::Event::SeqEnd; next())
          if (!entries([&](const std::string& ok) { return ok == "type" ? names(need) : skip_value(); })) return false;
        return true;
      });
    });
    if (!ok) return false;
    if (rule_names && (need.empty() || named != 1)) return false;  // (for scan_table: one name, one need a rule)
    if (!need.empty()) out.push_back(std::move(need));
  }
}

// Reads a table file's header; with `needs`, goes on into the rules and fills it (nothing when
// the rules are written in a way scan_rule_needs does not follow).
std::optional<Header> scan_header(const std::string& path, std::optional<std::vector<Need>>* needs = nullptr,
                                  std::vector<std::string>* rule_names = nullptr) {
  if (!path.ends_with(".yaml") && !path.ends_with(".yml")) return std::nullopt;
  try {
    auto buf = map_file(path);
    std::string_view text = buf->view();
    auto src = text::make_yaml_source(text, path);
    text::Event ev;
    auto next = [&] { src->next(ev); };
    next();
    if (ev.type != text::Event::MapStart || ev.flow) return std::nullopt;
    next();
    if (ev.type != text::Event::Scalar || ev.text != "table") return std::nullopt;
    next();
    if (ev.type != text::Event::MapStart || ev.flow) return std::nullopt;
    Header h;
    bool seen_reversible = false;
    for (;;) {
      next();
      if (ev.type != text::Event::Scalar) return std::nullopt;  // the map ended before `rules:`
      std::string key = ev.text;
      if (key == "rules") {
        if (needs) {
          std::vector<Need> v;
          next();
          if (ev.type == text::Event::SeqStart && scan_rule_needs(next, ev, v, rule_names)) *needs = std::move(v);
          else needs->reset();
        }
        break;
      }
      next();
      if (ev.type == text::Event::Scalar) {
        if (key == "src") h.src = ev.text;
        else if (key == "dst") h.dst = ev.text;
        else if (key == "over") h.over = ev.text;
        else if (key == "reversible") {
          if (ev.style != text::Event::Plain || (ev.text != "true" && ev.text != "false")) return std::nullopt;
          h.reversible = ev.text == "true";
          seen_reversible = true;
        }
        continue;
      }
      if (ev.type != text::Event::MapStart && ev.type != text::Event::SeqStart) return std::nullopt;
      if (key == "only_for") {  // a list of op type names
        if (ev.type != text::Event::SeqStart) return std::nullopt;
        for (;;) {
          next();
          if (ev.type == text::Event::SeqEnd) break;
          if (ev.type != text::Event::Scalar) return std::nullopt;
          h.only_for.push_back(ev.text);
        }
        if (h.only_for.empty()) return std::nullopt;
        continue;
      }
      for (int depth = 1; depth > 0;) {  // a small value such as `constant: {...}`: skipped
        next();
        if (ev.type == text::Event::MapStart || ev.type == text::Event::SeqStart) ++depth;
        else if (ev.type == text::Event::MapEnd || ev.type == text::Event::SeqEnd) --depth;
        else if (ev.type == text::Event::End) return std::nullopt;
      }
    }
    if (h.src.empty() || h.dst.empty()) return std::nullopt;
    // `reversible` after the rules would be missed: a file that mentions the word anywhere else is
    // read whole.
    if (!seen_reversible && text.find("reversible") != std::string_view::npos) return std::nullopt;
    return h;
  } catch (const std::exception&) {
    if (needs) needs->reset();
    return std::nullopt;
  }
}

// True when every rule of a parsed table is covered by a scanned need its op types satisfy (so a
// graph the file was skipped for could not have been matched by any of its rules).
bool needs_cover(const std::vector<Need>& needs, const Table& t) {
  size_t k = 0;  // the scan's needs come in the rules' order; a rule for a list of types is several
  for (const Rule& r : t.rules) {
    std::vector<std::string> types;
    for (const OpSpec& o : r.src.ops) types.push_back(o.type);
    if (k < needs.size() && satisfied(needs[k], types)) continue;
    if (k + 1 < needs.size() && satisfied(needs[k + 1], types)) {
      ++k;
      continue;
    }
    auto it = std::find_if(needs.begin(), needs.end(), [&](const Need& n) { return satisfied(n, types); });
    if (it == needs.end()) return false;
    k = static_cast<size_t>(it - needs.begin());
  }
  return true;
}

}  // namespace

std::optional<TableScan> scan_table(const std::string& path) {
  std::optional<std::vector<Need>> needs;
  TableScan r;
  std::optional<Header> h = scan_header(path, &needs, &r.rule_names);
  if (!h || !needs || needs->empty() || needs->size() != r.rule_names.size()) return std::nullopt;
  r.src = h->src;
  r.dst = h->dst;
  r.needs = std::move(*needs);
  return r;
}

bool need_satisfied(const std::vector<std::vector<std::string>>& need, const std::vector<std::string>& types) {
  return satisfied(need, types);
}

TableSet::Slot& TableSet::slot_for(const std::string& src, const std::string& dst) {
  for (auto& s : slots_)
    if (s.src == src && s.dst == dst) return s;
  Slot& s = slots_.emplace_back();
  s.src = src;
  s.dst = dst;
  return s;
}

void TableSet::add_folder(const std::string& dir, bool lazy) {
  for (const auto& f : data_files(dir)) {
    std::optional<Header> h;
    if (lazy) h = scan_header(f);
    if (!h) {
      add(read_table(f));
      continue;
    }
    Slot& s = slot_for(h->src, h->dst);
    if (s.table && s.pending.empty()) {  // the pair is read already: keep the load order
      add(read_table(f));
      continue;
    }
    // Only the header is read here: what the rules match is scanned when a plan needs the pair
    // (materialize), so a conversion tokenises only the files of the pairs on its chain.
    Slot::Pending p{f, s.files++};
    if (!h->only_for.empty()) {  // (the parser holds every rule to one of these types)
      p.scanned = true;
      p.needs.push_back(Need{h->only_for});
    }
    // A reversible file runs backwards too (its dst types would count), and a rewrite pair's rules
    // match each other's results: both are always read.
    if (h->reversible || h->src == h->dst) {
      p.scanned = true;
      p.always = true;
    }
    s.pending.push_back(std::move(p));
    s.reversible = s.reversible || h->reversible;
    if (!h->over.empty()) s.over = h->over;
  }
}

// Tables with the same src and dst are one table split over several files: their rules are
// joined in load order (file names sorted), and a rule name may be used once.
void TableSet::add(std::unique_ptr<Table> t) {
  Slot& s = slot_for(t->src, t->dst);
  materialize(s);  // files of the same pair added lazily before this one come first
  if (!t->over.empty()) s.over = t->over;
  size_t index = s.files++;
  join(s, std::move(t), index);
}

// A rule's `order` (the candidates' last tie-breaker) is its place in the load order of all the
// pair's files, whatever the order in which they were read (a file skipped for one graph and read
// for the next comes where it would have come had everything been read at once).
void TableSet::join(Slot& s, std::unique_ptr<Table> t, size_t index) {
  for (Rule& r : t->rules) r.order += index << 24;  // (2^24 rules in one file would not fit in memory anyway)
  if (t->reversible) {
    s.reversed.push_back(reverse_table(*t));
    s.reversible = true;
  }
  if (!s.table) {
    s.table = std::move(t);
    return;
  }
  Table& have = *s.table;  // (its header, carry_attrs and constant, is the pair's first file's: always read first)
  if (have.over != t->over)
    throw ParseError(t->loc, fmt::format("table {}: over is '{}' here but '{}' in {}", t->name(), t->over, have.over, have.file));
  if (have.fixed_point != t->fixed_point)
    throw ParseError(t->loc, fmt::format("table {}: fixed_point is {} here but {} in {}", t->name(), t->fixed_point, have.fixed_point, have.file));
  // (one rule written for a list of types stands for several rules of the same name: the names
  // are checked against the tables already loaded only)
  for (const auto& [k, v] : t->imports) {
    auto [it, fresh] = have.imports.emplace(k, v);
    if (!fresh && it->second != v)
      throw ParseError(t->loc, fmt::format("table {}: import '{}' is {} here but {} in {}", t->name(), k, v, it->second, have.file));
  }
  size_t before = have.rules.size();
  for (Rule& r : t->rules) {
    for (size_t i = 0; i < before; ++i)
      if (const Rule& x = have.rules[i]; x.name == r.name)
        throw ParseError(r.loc, fmt::format("rule '{}' is also declared at {}", r.name, x.loc.str()));
    have.rules.push_back(std::move(r));
  }
  have.file += ", " + t->file;
}

void TableSet::materialize(Slot& s, const std::vector<std::string>* types) {
  std::vector<Slot::Pending> files = std::move(s.pending);
  s.pending.clear();
  for (auto& p : files) {
    // (the pair's first file is always read: its header, carry_attrs and constant, is the table's,
    // as when every file is read; the files after it may leave them out)
    if (types && p.index != 0) {
      if (!p.scanned) {
        std::optional<std::vector<Need>> needs;
        scan_header(p.file, &needs);
        p.scanned = true;
        if (needs) p.needs = std::move(*needs);
        else p.always = true;
      }
      if (!p.always && std::none_of(p.needs.begin(), p.needs.end(), [&](const Need& n) { return satisfied(n, *types); })) {
        s.pending.push_back(std::move(p));  // no rule of it can match this graph: not needed (yet)
        continue;
      }
    }
    auto t = read_table(p.file);
    if (t->src != s.src || t->dst != s.dst)  // the header scan and the parser disagree: a bug of ours
      throw Error(fmt::format("{}: the table's header read {} -> {} but the file declares {} -> {}", p.file, s.src, s.dst,
                              t->src, t->dst));
    if (p.scanned && !p.always && !needs_cover(p.needs, *t))
      throw Error(fmt::format("{}: the scan of the rules found other matcher op types than the parser", p.file));
    join(s, std::move(t), p.index);
  }
}

std::vector<const Table*> TableSet::tables() {
  std::vector<const Table*> out;
  for (auto& s : slots_) {
    materialize(s);
    if (s.table) out.push_back(s.table.get());
  }
  return out;
}

namespace {
// A table for src S applies to namespace N when S == N, or S is N's family ("amanda/pytorch" for
// "amanda/pytorch/1.13"): tables can be written for a whole hierarchy.
bool applies(const std::string& table_src, const std::string& ns) {
  if (table_src == ns) return true;
  return ns.size() > table_src.size() && ns.compare(0, table_src.size(), table_src) == 0 && ns[table_src.size()] == '/';
}
}  // namespace

std::vector<const Table*> TableSet::plan(const std::string& from, const std::string& to) { return plan_impl(from, to, nullptr); }
std::vector<const Table*> TableSet::plan(const std::string& from, const std::string& to, const ir::Graph& g) {
  return plan_impl(from, to, &g);
}

std::vector<const Table*> TableSet::rewrites(const std::string& ns) {
  std::vector<const Table*> out;
  for (auto& s : slots_)
    if (s.src == s.dst && applies(s.src, ns)) {
      materialize(s);
      if (s.table) out.push_back(s.table.get());
    }
  return out;
}

std::vector<const Table*> TableSet::plan_impl(const std::string& from, const std::string& to, const ir::Graph* g) {
  // The op types of the graph, for the first table (later ones see what earlier tables made).
  std::vector<std::string> types;
  if (g) {
    absl::flat_hash_set<Symbol> seen;
    g->for_each_op([&](ir::OpId op) {
      if (seen.insert(g->type(op)).second) types.emplace_back(g->type_str(op));
    });
  }
  std::vector<const Table*> chain;
  // (layer tables make ops of a later namespace only: the graph's types still hold after them)
  auto source_types = [&]() -> const std::vector<std::string>* {
    return g && std::all_of(chain.begin(), chain.end(), [](const Table* t) { return !t->over.empty(); }) ? &types : nullptr;
  };
  // Rewrite tables (src == dst) of a namespace the chain passes through run there, in load order,
  // each to a fixed point (convert()), before the table that leaves the namespace.
  auto rewrites_at = [&](const std::string& ns) {
    for (auto& s : slots_)
      if (s.src == s.dst && applies(s.src, ns)) {
        materialize(s, source_types());
        if (s.table) chain.push_back(s.table.get());
      }
  };
  if (from == to) {
    rewrites_at(from);
    return chain;
  }
  // The planner works on the pairs (read or not): every table forwards, then the reversible ones
  // backwards, in load order; only the tables of the chain it picks are read. A rewrite table
  // (src == dst) is no step between namespaces.
  std::vector<std::pair<size_t, bool>> all;
  // (a layer table, `over`, is no step either: it joins a chain that passes through its over and dst)
  for (size_t i = 0; i < slots_.size(); ++i)
    if (slots_[i].src != slots_[i].dst && slots_[i].over.empty()) all.push_back({i, false});
  for (size_t i = 0; i < slots_.size(); ++i)
    if (slots_[i].reversible && slots_[i].src != slots_[i].dst && slots_[i].over.empty()) all.push_back({i, true});
  auto arc_src = [&](const std::pair<size_t, bool>& a) -> const std::string& {
    return a.second ? slots_[a.first].dst : slots_[a.first].src;
  };
  auto arc_dst = [&](const std::pair<size_t, bool>& a) -> const std::string& {
    return a.second ? slots_[a.first].src : slots_[a.first].dst;
  };
  // Breadth-first over namespaces: the chain with the fewest tables; ties go to tables in load order.
  std::map<std::string, std::pair<std::string, long>> prev;
  std::deque<std::string> q{from};
  prev[from] = {"", -1};
  while (!q.empty()) {
    std::string ns = q.front();
    q.pop_front();
    if (ns == to) break;
    for (size_t k = 0; k < all.size(); ++k) {
      const std::string& d = arc_dst(all[k]);
      if (!applies(arc_src(all[k]), ns) || prev.contains(d)) continue;
      prev[d] = {ns, static_cast<long>(k)};
      q.push_back(d);
    }
  }
  if (!prev.contains(to)) {
    std::string known;
    for (const auto& a : all)
      if (applies(arc_src(a), from)) known += (known.empty() ? "" : ", ") + arc_dst(a);
    throw Error(fmt::format("no chain of mapping tables leads from {} to {} (tables from {} go to: {})", from, to, from,
                            known.empty() ? "none" : known));
  }
  std::vector<std::pair<size_t, bool>> arcs;
  for (std::string ns = to; ns != from; ns = prev[ns].first) arcs.push_back(all[static_cast<size_t>(prev[ns].second)]);
  std::reverse(arcs.begin(), arcs.end());
  // Layer tables: from `from` (or its family) to a namespace of the chain, over one before it;
  // the one whose dst comes latest first (its ops win), each after the rewrites at `from`.
  std::vector<std::string> stops{from};
  for (const auto& a : arcs) stops.push_back(arc_dst(a));
  std::vector<std::pair<size_t, size_t>> layers;  // (place of dst among the stops, slot)
  for (size_t i = 0; i < slots_.size(); ++i) {
    const Slot& s = slots_[i];
    if (s.over.empty() || !applies(s.src, from)) continue;
    auto over = std::find(stops.begin() + 1, stops.end(), s.over);
    auto dst = over == stops.end() ? stops.end() : std::find(over + 1, stops.end(), s.dst);
    if (dst != stops.end()) layers.push_back({static_cast<size_t>(dst - stops.begin()), i});
  }
  std::stable_sort(layers.begin(), layers.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string at = from;
  bool first = true;
  for (const auto& [slot, reversed] : arcs) {
    rewrites_at(at);
    if (first) {
      for (const auto& [place, i] : layers) {
        materialize(slots_[i], source_types());
        if (slots_[i].table) chain.push_back(slots_[i].table.get());
      }
      first = false;
    }
    at = arc_dst({slot, reversed});
    Slot& s = slots_[slot];
    materialize(s, source_types());
    if (reversed && s.reversed.empty())
      throw Error(fmt::format("the table {} -> {} was announced reversible but none of its files is", s.src, s.dst));
    chain.push_back(reversed ? s.reversed.front().get() : s.table.get());
  }
  rewrites_at(to);
  return chain;
}

Report rewrite(ir::Graph& g, const Table& t, schema::Registry& reg, const ConvertOptions& o) {
  if (t.src != t.dst) throw Error("mapping::rewrite: table " + t.name() + " is no rewrite table (its src and dst differ)");
  Report rep;
  CompiledTable(t, reg, o.tags).apply(g, o, rep, Drive::FixedPoint);
  return rep;
}

std::string shipped_table_dir() {
#ifdef AMANDA_SOURCE_TABLES
  return schema::shipped_data_dir("tables", "AMANDA_TABLES_DIR", AMANDA_SOURCE_TABLES);
#else
  return schema::shipped_data_dir("tables", "AMANDA_TABLES_DIR", "tables");
#endif
}

Report convert(ir::Graph& g, const std::string& to, TableSet& tables, schema::Registry& reg, const ConvertOptions& o) {
  std::string from(g.str(g.graph_namespace(g.root())));
  if (from.empty()) {
    // (an ONNX model importing only a domain Amanda has no namespace for, such as
    // ai.onnx.preview.training: name its op types, which is what the user must look at)
    std::string types;
    int n = 0;
    for (ir::OpId c = g.first_child(g.root()); c && n < 3; c = g.next_sibling(c), ++n) types += (n ? ", " : "") + std::string(g.type_str(c));
    throw Error("the graph has no namespace to convert from" + (types.empty() ? std::string() : " (no known namespace has its ops: " + types + ")"));
  }
  if (!reg.known(to)) throw Error("unknown namespace " + to + " (`amanda schema list` shows the known ones)");
  Report rep;
  std::vector<const Table*> chain = tables.plan(from, to, g);
  // A rewrite table whose rules are all tagged, none of them selected, does nothing: it is left
  // out of the chain (and of the report's tables). (tables/pytorch's onnx/13 rewrites for the
  // run-time list rules apply only in the ONNX -> PyTorch retry that selects their tag.)
  std::erase_if(chain, [&o](const Table* t) {
    return t->src == t->dst && std::none_of(t->rules.begin(), t->rules.end(), [&o](const Rule& r) {
             return r.tags.empty() || std::any_of(r.tags.begin(), r.tags.end(), [&o](const std::string& x) {
                      return std::find(o.tags.begin(), o.tags.end(), x) != o.tags.end();
                    });
           });
  });
  // Layer tables (Table::over) come first: the ops they make belong to their dst and are sealed
  // (left alone by every table) until the chain reaches it.
  std::vector<uint8_t> sealed;
  std::vector<std::pair<std::string, std::vector<ir::OpId>>> made;  // a layer's dst, the ops it made
  ConvertOptions step = o;
  step.sealed = &sealed;
  bool stepped = false;  // a table other than a layer has run
  for (size_t k = 0; k < chain.size(); ++k) {
    const Table& t = *chain[k];
    if (!t.over.empty()) {
      // (a rule's primary op may keep the id of the op it replaces: what the layer made is every
      // op that is new or whose type changed)
      const size_t bound = g.id_bound();
      std::vector<Symbol> before(bound, Symbol{});
      for (size_t i = 1; i < bound; ++i)
        if (ir::OpId id{static_cast<uint32_t>(i)}; g.valid(id) && !g.is_graph(id)) before[i] = g.type(id);
      Report lr;
      CompiledTable(t, reg, o.tags).apply(g, step, lr, Drive::Layer);
      rep.tables.push_back(t.name() + " (layer over " + t.over + ")");
      rep.ops += lr.ops;
      rep.mapped += lr.mapped;
      for (const auto& [r, n] : lr.by_rule) rep.by_rule[r] += n;
      for (auto& x : lr.unsupported) rep.unsupported.push_back(std::move(x));
      for (auto& x : lr.errors) rep.errors.push_back(std::move(x));
      for (auto& x : lr.explain) rep.explain.push_back(std::move(x));
      sealed.resize(g.id_bound(), 0);
      std::vector<ir::OpId> ops;
      for (size_t i = 1; i < g.id_bound(); ++i)
        if (ir::OpId id{static_cast<uint32_t>(i)}; g.valid(id) && !g.is_graph(id) && (i >= bound || before[i] != g.type(id))) {
          sealed[i] = 1;
          ops.push_back(id);
        }
      made.push_back({t.dst, std::move(ops)});
      if (!rep.ok() && !o.keep_unmapped) return rep;
      continue;
    }
    for (auto& [ns, ops] : made)  // the chain has reached the namespace these ops were made for
      if (t.src == ns) {
        for (ir::OpId id : ops) sealed[id.value] = 0;
        ops.clear();
      }
    if (stepped && o.between_steps) o.between_steps(g);
    stepped = true;
    CompiledTable ct(t, reg, o.tags);
    // A rewrite table (src == dst) runs to a fixed point: its rules see each other's results.
    ct.apply(g, step, rep, t.src == t.dst ? Drive::FixedPoint : Drive::AsDeclared);
    if (!rep.ok() && !o.keep_unmapped) return rep;
  }
  g.set_graph_namespace(g.root(), g.sym(to));
  if (o.after_steps) o.after_steps(g);
  Diagnostics d;
  schema::ValidationResult v = schema::validate(g, reg, d);
  if (!v.ok() && !o.keep_unmapped) {
    size_t k = 0;
    for (const auto& x : d.items()) {
      if (x.severity != Severity::Error) continue;
      if (++k > 20) {
        rep.errors.push_back(fmt::format("... {} problems in all", v.problems));
        break;
      }
      rep.errors.push_back("result does not validate: " + x.where + ": " + x.message);
    }
  }
  return rep;
}

}  // namespace amanda::mapping
