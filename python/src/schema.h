#pragma once

#include <memory>

#include <pybind11/pybind11.h>

#include "amanda/schema/registry.h"

namespace amanda::python {
// The registry shared by every call that is not given one.
std::shared_ptr<schema::Registry> default_registry();
// A Registry argument (None: the default one).
std::shared_ptr<schema::Registry> registry_arg(pybind11::object r);
}  // namespace amanda::python
