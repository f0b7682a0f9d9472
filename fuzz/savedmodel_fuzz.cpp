// libFuzzer target: SavedModel folders read through the gate, written through the gate (issue 32).
// Input: a flags byte, two 4-byte little-endian lengths, saved_model.pb and variables.index of
// those lengths, then the data shard. Flags: 1 = variables/ is a symbolic link out of the folder
// (to a copy of the files), 2 = variables.index is a FIFO, 4 = the data shard is a link to a
// secret outside. Properties: a read that succeeds never went through a link or a FIFO (flags 1
// and 2 must be refused); no read blocks; the write creates only the SavedModel's own files,
// nothing else in the output folder and nothing outside it.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <google/protobuf/stubs/logging.h>

#include "amanda/frameworks/tensorflow/savedmodel.h"
#include "amanda/support/gate.h"
#include "files_check.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace amanda;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  if (in.size() < 9) return 0;
  uint8_t flags = uint8_t(in[0]);
  auto u32 = [&](size_t at) {
    return uint32_t(uint8_t(in[at])) | uint32_t(uint8_t(in[at + 1])) << 8 | uint32_t(uint8_t(in[at + 2])) << 16 |
           uint32_t(uint8_t(in[at + 3])) << 24;
  };
  uint64_t a = u32(1), b = u32(5);
  if (9 + a + b > in.size()) return 0;
  fuzz::small_budgets();
  fuzz::Sandbox box;
  fuzz::put(box.model + "/saved_model.pb", in.substr(9, a));
  std::string vars = (flags & 1) ? box.outside + "/vars" : box.model + "/variables";
  ::mkdir(vars.c_str(), 0755);
  if (flags & 1) ::symlink(vars.c_str(), (box.model + "/variables").c_str());
  if (flags & 2) ::mkfifo((vars + "/variables.index").c_str(), 0600);
  else fuzz::put(vars + "/variables.index", in.substr(9 + a, b));
  if (flags & 4) ::symlink((box.outside + "/secret.bin").c_str(), (vars + "/variables.data-00000-of-00001").c_str());
  else fuzz::put(vars + "/variables.data-00000-of-00001", in.substr(9 + a + b));
  auto outside_before = fuzz::listing(box.outside);
  std::unique_ptr<text::Document> doc;
  try {
    ReadGate files(box.model + "/");
    doc = std::make_unique<text::Document>(tf_frontend::read_saved_model(files));
  } catch (const Error&) {
  } catch (const ParseError&) {
  }
  if (doc && (flags & 3)) {
    std::fprintf(stderr, "a SavedModel was read through a %s\n", (flags & 1) ? "symbolic link (variables/)" : "FIFO (variables.index)");
    std::abort();
  }
  if (doc) {
    try {
      WriteGate out(box.out + "/sm");
      tf_frontend::write_saved_model(*doc, out);
      out.commit();
    } catch (const Error&) {
    } catch (const ParseError&) {
    }
    std::string bad = fuzz::unexpected_file(box.out, "sm(/saved_model\\.pb|/variables(/variables\\.(index|data-00000-of-00001))?)?");
    if (!bad.empty()) {
      std::fprintf(stderr, "the SavedModel writer made '%s'\n", bad.c_str());
      std::abort();
    }
  }
  if (fuzz::listing(box.outside) != outside_before) {
    std::fprintf(stderr, "the folder outside the model changed\n");
    std::abort();
  }
  return 0;
}
