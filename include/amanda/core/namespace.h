// The namespace schema of amanda/core, made from the op registry the builder uses (src/core/ops.cpp),
// so the ops, their ports and attributes are listed once: `amanda schema show amanda/core`,
// `amanda validate` of a core graph and the mapping tables into amanda/core all read this.
#pragma once

#include <memory>

#include "amanda/schema/registry.h"

namespace amanda::core {

std::shared_ptr<schema::Provider> make_core_namespace_provider();

}  // namespace amanda::core
