// Writes a plain value tree (maps, lists, scalars, tensors) as a YAML or JSON document, with the
// same emitters as graph documents. Used for namespace schemas and other data files.
#pragma once

#include <string>

#include "amanda/ir/value.h"
#include "amanda/text/document.h"

namespace amanda::text {

std::string value_to_text(const ir::Value& root, Format format);

}  // namespace amanda::text
