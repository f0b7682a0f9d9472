// The compact, one-op-per-line form of a pattern (compact_pattern.cpp; docs/mapping-tables.md).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "amanda/mapping/table.h"
#include "amanda/text/tree.h"

namespace amanda::mapping {

// Parses `graph: |` text into a Pattern; attrs_of reads an {ATTRS} map as `attrs:` does.
Pattern compact_pattern(const text::Tree& t, const std::string& rule,
                        const std::function<void(const text::Tree&, std::vector<AttrSpec>&)>& attrs_of);

// Lists in graph: text (docs/mapping-tables.md, "Variadic captures"): true when the text spreads a
// list (`xs...`), has `for VAR in range(...)` lines, or indexes a name with an expression
// (`m[i-1]`), so that it must be expanded for each match.
bool uses_lists(std::string_view text);
// The text with its lists written out: `for` lines unrolled (VAR replaced by 0, 1, ...), spreads
// written as NAME[0], NAME[1], ... (`PORT=xs...` as PORT.0=xs[0], ...; an output `PORT:ys...{N}`
// makes a list of N values), NAME[EXPR] indexes evaluated. eval_int evaluates an expression (the
// match's captures: `len(xs)`, `g`, `i-1`) to an integer.
std::string expand_lists(std::string_view text, const std::string& rule, const SourceLoc& loc,
                         const std::function<int64_t(const std::string&)>& eval_int);
// The length every list gets when a template is expanded without a match (the checker's sample):
// 24 divides into whole layers of 2, 4 or 8 parameters (the recurrent rules of
// tables/pytorch/pytorch_1.13_onnx_13_rnn.yaml loop over len(params) / per-layer).
constexpr int64_t kSampleListLength = 24;

// The op types of graph: text's lines, in order (throws ParseError on a line that is not OUTS =
// TYPE(ARGS)): what a compact matcher matches.
std::vector<std::string> compact_types(std::string_view text);

// A side of a rule (as read, after pushdown) as a Pattern (table.cpp).
Pattern pattern_from_tree(const text::Tree& side, const std::string& rule);
// The side `d` (a map with graph:) with its graph: text replaced by `text` (an expansion).
text::Tree with_graph_text(const text::Tree& d, std::string text);

}  // namespace amanda::mapping
