// The property the torchscript_fuzz target checks, shared with the corpus replay test
// (tests/torchscript/fuzz_corpus_test.cpp): the first byte picks a reader of the libtorch-free
// TorchScript path, the rest is its input —
//   0: the serialized-code parser, 1: the unpickler, 2: the whole archive importer (zip, pickles,
//   code, the interpreter; forward() gets one input of shape 1x3x8x8).
// Every input must give a result or amanda::Error / ParseError (Unsupported included): never a
// crash, a hang, another exception type, or a read out of bounds.
#pragma once

#include <zlib.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "amanda/schema/registry.h"
#include "amanda/support/budget.h"
#include "amanda/support/diagnostics.h"
#include "amanda/support/file.h"
#include "frameworks/torchscript/ast.h"
#include "frameworks/torchscript/importer.h"
#include "frameworks/torchscript/namespace_file.h"
#include "frameworks/torchscript/pickle.h"

namespace amanda::fuzz {

inline const schema::NamespaceSchema& torch_namespace(const std::string& ops_file) {
  static schema::Registry reg;
  static std::unique_ptr<schema::NamespaceSchema> ns = [&] {
    auto b = map_file(ops_file);
    return torchscript::read_namespace_file(b->view(), ops_file, reg.type_systems());
  }();
  return *ns;
}

inline void le(std::string& s, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) s += static_cast<char>(v >> (8 * i) & 0xff);
}

// A zip of stored entries, as torch.jit.save writes them (without its alignment padding).
inline std::string stored_zip(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::string out, dir;
  for (const auto& [name, data] : entries) {
    uint32_t crc = static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size())));
    uint64_t offset = out.size();
    le(out, 0x04034b50, 4), le(out, 20, 2), le(out, 0, 2), le(out, 0, 2), le(out, 0, 4), le(out, crc, 4);
    le(out, data.size(), 4), le(out, data.size(), 4), le(out, name.size(), 2), le(out, 0, 2);
    out += name;
    out += data;
    le(dir, 0x02014b50, 4), le(dir, 20, 2), le(dir, 20, 2), le(dir, 0, 2), le(dir, 0, 2), le(dir, 0, 4), le(dir, crc, 4);
    le(dir, data.size(), 4), le(dir, data.size(), 4), le(dir, name.size(), 2), le(dir, 0, 2), le(dir, 0, 2);
    le(dir, 0, 2), le(dir, 0, 2), le(dir, 0, 4), le(dir, offset, 4);
    dir += name;
  }
  uint64_t dir_offset = out.size();
  out += dir;
  le(out, 0x06054b50, 4), le(out, 0, 2), le(out, 0, 2), le(out, entries.size(), 2), le(out, entries.size(), 2);
  le(out, dir.size(), 4), le(out, dir_offset, 4), le(out, 0, 2);
  return out;
}

// torch.jit.save's data.pkl of `class M(Module)` with no parameters (protocol 2).
inline const char kDataPkl[] =
    "\x80\x02\x63__torch__\nM\nq\x00)\x81}(X\x08\x00\x00\x00trainingq\x01\x88X\x16\x00\x00\x00_is_full_backward_hook"
    "q\x02Nubq\x03.";

// The archive of module M whose code/__torch__.py is `code` (the torchscript_interp_fuzz input).
inline std::string interp_archive(std::string_view code) {
  return stored_zip({{"m/data.pkl", std::string(kDataPkl, sizeof kDataPkl - 1)},
                     {"m/code/__torch__.py", std::string(code)},
                     {"m/constants.pkl", std::string("\x80\x02).", 4)},
                     {"m/version", "3"}});
}

// "" when the property holds, else what went wrong.
inline std::string torchscript_problem(std::string_view input, const std::string& ops_file) {
  if (input.empty()) return "";
  Budget::run().reset_counters();  // every input gets the whole budget (steps, ops, inflated bytes)
  std::string_view rest = input.substr(1);
  try {
    switch (static_cast<unsigned char>(input[0]) % 3) {
      case 0: torchscript::parse_source(rest, "fuzz.py"); break;
      case 1: torchscript::dismantle(torchscript::unpickle(rest, "fuzz.pkl")); break;
      default: {
        torch_frontend::ImportOptions o;
        o.input_shapes = {{1, 3, 8, 8}};
        torchscript::import_archive(make_buffer(std::string(rest)), "fuzz.pt", o, torch_namespace(ops_file));
      }
    }
  } catch (const Error&) {
  } catch (const ParseError&) {
  } catch (const std::exception& e) {
    return std::string("an exception that is not amanda::Error: ") + e.what();
  }
  return "";
}

}  // namespace amanda::fuzz
