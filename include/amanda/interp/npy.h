// NumPy .npy files (format 1.0-3.0): what `amanda run` reads its inputs from and writes its
// outputs to. Little-endian numeric types, bool, and unicode strings ('<U'); C order only.
#pragma once

#include <string>

#include "amanda/interp/tensor.h"

namespace amanda::interp {

// Throws amanda::Error naming the file and what is wrong (not an .npy, Fortran order, a type it
// cannot hold, truncated data).
Tensor read_npy(const std::string& path);
Tensor parse_npy(std::string_view bytes, const std::string& name);
std::string npy_bytes(const Tensor& t);
void write_npy(const std::string& path, const Tensor& t);  // atomically

}  // namespace amanda::interp
