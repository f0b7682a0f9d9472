#include "amanda/passes/registry.h"

#include <chrono>

#include "amanda/support/diagnostics.h"
#include "passes.h"
#include "util.h"

namespace amanda::passes {

namespace {

// Glob with * and ?.
bool glob(std::string_view pat, std::string_view s) {
  size_t p = 0, i = 0, star = std::string_view::npos, mark = 0;
  while (i < s.size()) {
    if (p < pat.size() && (pat[p] == '?' || pat[p] == s[i])) {
      ++p, ++i;
    } else if (p < pat.size() && pat[p] == '*') {
      star = p++;
      mark = i;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      i = ++mark;
    } else {
      return false;
    }
  }
  while (p < pat.size() && pat[p] == '*') ++p;
  return p == pat.size();
}

}  // namespace

bool PassOptions::excluded(const ir::Graph& g, ir::OpId op) const {
  if (exclude.empty()) return false;
  std::string_view name = g.name_str(op);
  for (const auto& e : exclude)
    if (glob(e, name)) return true;
  return false;
}

PassResult& PassResult::operator+=(const PassResult& o) {
  rewrites += o.rewrites;
  erased += o.erased;
  created += o.created;
  refused += o.refused;
  notes.insert(notes.end(), o.notes.begin(), o.notes.end());
  seconds += o.seconds;
  return *this;
}

void PassRegistry::add(PassInfo p) {
  if (index_.count(p.name)) throw Error("pass '" + p.name + "' is registered twice");
  index_.emplace(p.name, passes_.size());
  passes_.push_back(std::move(p));
}

const PassInfo* PassRegistry::find(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &passes_[it->second];
}

std::vector<const PassInfo*> PassRegistry::all() const {
  std::vector<const PassInfo*> r;
  for (const auto& p : passes_) r.push_back(&p);
  return r;
}

std::vector<std::string> PassRegistry::default_passes() const {
  std::vector<std::string> r;
  for (const auto& p : passes_)
    if (p.in_default) r.push_back(p.name);
  return r;
}

const PassRegistry& PassRegistry::builtin() {
  static const PassRegistry reg = [] {
    PassRegistry r;
    // Registration order is the default order: clean up first, fold, remove no-ops, fuse, then
    // clean up what fusions left.
    detail::register_cleanup(r);
    detail::register_fold(r);
    detail::register_nop(r);
    detail::register_control(r);
    detail::register_transpose(r);
    detail::register_consecutive(r);
    detail::register_conv(r);
    detail::register_gemm(r);
    detail::register_layernorm(r);
    detail::register_cse(r);
    return r;
  }();
  return reg;
}

size_t count_ops(const ir::Graph& g, bool with_constants) {
  size_t n = 0;
  g.for_each_op([&](ir::OpId op) {
    if (with_constants || g.type_str(op) != "Constant") ++n;
  });
  return n;
}

PipelineResult run_pipeline(ir::Graph& g, const std::vector<std::string>& names, const PassOptions& options,
                            const PassRegistry& registry) {
  std::vector<const PassInfo*> list;
  for (const auto& n : names) {
    const PassInfo* p = registry.find(n);
    if (!p) {
      std::string known;
      for (const PassInfo* q : registry.all()) known += (known.empty() ? "" : ", ") + q->name;
      throw Error("unknown pass '" + n + "' (passes: " + known + ")");
    }
    list.push_back(p);
  }
  auto t0 = std::chrono::steady_clock::now();
  PipelineResult res;
  res.ops_before = count_ops(g);
  for (const PassInfo* p : list) res.passes.emplace_back(p->name, PassResult{});
  bool onnx = detail::is_onnx(g);
  size_t rounds = std::max<size_t>(1, options.max_iterations);
  for (size_t round = 0; round < rounds; ++round) {
    bool changed = false;
    ++res.rounds;
    if (round > 0 && options.retype) options.retype(g);
    for (size_t i = 0; i < list.size(); ++i) {
      const PassInfo* p = list[i];
      PassResult r;
      if (p->onnx_only && !onnx) {
        if (round == 0) r.notes.push_back("skipped: the pass needs a graph of the ONNX namespace");
      } else {
        auto t = std::chrono::steady_clock::now();
        r = p->run(g, options);
        r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
      }
      changed = changed || r.changed();
      if (options.on_pass) options.on_pass(p->name, r);
      res.passes[i].second += r;
    }
    if (!changed) break;
  }
  res.ops_after = count_ops(g);
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

namespace detail {

std::vector<ir::OpId> scopes(const ir::Graph& g, const PassOptions& options) {
  std::vector<ir::OpId> r{g.root()};
  if (!options.descend) return r;
  // Breadth first from the root: an owner's bodies after the scope that holds it.
  for (size_t i = 0; i < r.size(); ++i)
    for (ir::OpId op = g.first_child(r[i]); op; op = g.next_sibling(op))
      for (ir::OpId body : g.attr_graphs(op)) r.push_back(body);
  return r;
}

MatchOptions match_options(const ir::Graph& g, const PassOptions& options) {
  MatchOptions m;
  if (!options.exclude.empty()) m.allowed = [&g, &options](ir::OpId op) { return !options.excluded(g, op); };
  return m;
}

namespace {

// Refuses (by throwing, which rolls the rewrite back) a change to an op the options exclude: the
// matcher keeps excluded ops out of matches, this also covers ops a rewrite reaches by itself.
class ExcludeGuard : public ir::RewriteListener {
 public:
  ExcludeGuard(const ir::Graph& g, const PassOptions& o) : g_(g), o_(o) {}
  void op_erased(ir::OpId op) override { check(op); }
  void op_modified(ir::OpId op) override { check(op); }

 private:
  void check(ir::OpId op) {
    if (g_.valid(op) && !g_.is_graph(op) && o_.excluded(g_, op)) throw Error(g_.path(op) + " is excluded from rewriting");
  }
  const ir::Graph& g_;
  const PassOptions& o_;
};

}  // namespace

void replace_everywhere(ir::Graph& g, const PassOptions& options, const Pat& pattern, const ReplaceFn& fn, PassResult& r,
                        const std::string& name) {
  MatchOptions mo = match_options(g, options);
  ExcludeGuard guard(g, options);
  for (ir::OpId scope : scopes(g, options)) {
    if (!g.valid(scope)) continue;
    ir::GreedyResult gr = replace_all(g, scope, pattern, fn, mo, name, options.exclude.empty() ? nullptr : &guard);
    r.rewrites += gr.rewrites;
    for (auto& e : gr.errors) r.notes.push_back(std::move(e));
  }
}

}  // namespace detail

}  // namespace amanda::passes
