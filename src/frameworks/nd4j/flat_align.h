// Alignment of a SameDiff FlatBuffers file before its accessors read it. FlatBuffers reads scalars
// with plain loads: a field or vector element must sit at an address aligned for its width. The
// verifier checks fields and vector lengths relative to the buffer's start, not the elements of a
// vector of 8-byte numbers ([long], [double]) — a hostile file puts those at 4 mod 8 (nd4j_fuzz
// found it). FlatBuffers' builders (C++, Java's nd4j) always align such vectors, so a file whose
// 8-byte vectors are not aligned was not written by one: refused (an empty one is no load, and
// FlatBuffers' C++ builder leaves it 4-byte aligned: accepted).
#pragma once

#include <memory>
#include <string>

#include "amanda/support/file.h"
#include "samediff_generated.h"

namespace amanda::nd4j {

// `bytes` itself when its start is 8-byte aligned (a mapped file, a heap string), else an aligned copy.
std::shared_ptr<const Buffer> aligned_flatbuffer(std::shared_ptr<const Buffer> bytes);

// After the verifier accepted `g` (in the buffer starting at `base`): "" when every vector of
// 8-byte numbers starts 8-byte aligned, else which one does not and at what offset.
std::string misaligned_vector(const sd::graph::FlatGraph* g, const uint8_t* base);

}  // namespace amanda::nd4j
