// The property the torchscript_fuzz target checks, shared with the corpus replay test
// (tests/torchscript/fuzz_corpus_test.cpp): the first byte picks a reader of the libtorch-free
// TorchScript path, the rest is its input —
//   0: the serialized-code parser, 1: the unpickler, 2: the whole archive importer (zip, pickles,
//   code, the interpreter; forward() gets one input of shape 1x3x8x8).
// Every input must give a result or amanda::Error / ParseError (Unsupported included): never a
// crash, a hang, another exception type, or a read out of bounds.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "amanda/schema/registry.h"
#include "amanda/support/diagnostics.h"
#include "amanda/support/file.h"
#include "frontends/torchscript/ast.h"
#include "frontends/torchscript/importer.h"
#include "frontends/torchscript/namespace_file.h"
#include "frontends/torchscript/pickle.h"

namespace amanda::fuzz {

inline const schema::NamespaceSchema& torch_namespace(const std::string& ops_file) {
  static schema::Registry reg;
  static std::unique_ptr<schema::NamespaceSchema> ns = [&] {
    auto b = map_file(ops_file);
    return torchscript::read_namespace_file(b->view(), ops_file, reg.type_systems());
  }();
  return *ns;
}

// "" when the property holds, else what went wrong.
inline std::string torchscript_problem(std::string_view input, const std::string& ops_file) {
  if (input.empty()) return "";
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
