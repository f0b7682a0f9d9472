// The compact, one-op-per-line form of a pattern (compact_pattern.cpp; docs/mapping-tables.md).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "amanda/mapping/table.h"
#include "amanda/text/tree.h"

namespace amanda::mapping {

// Parses `graph: |` text into a Pattern; attrs_of reads an {ATTRS} map as `attrs:` does.
Pattern compact_pattern(const text::Tree& t, const std::string& rule,
                        const std::function<void(const text::Tree&, std::vector<AttrSpec>&)>& attrs_of);

}  // namespace amanda::mapping
