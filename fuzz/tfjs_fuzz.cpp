// libFuzzer target: TF.js model.json + shards read through the gate, written through the gate
// (issue 32). Input: model.json, then NUL-separated shard files written as s0.bin, s1.bin, ...
// next to it. The folder also holds link.bin (a symbolic link to a secret outside), fifo.bin (a
// FIFO), a folder dir.bin and sub/s.bin. Properties: a read that succeeds named none of link.bin,
// fifo.bin, dir.bin (the dictionary offers them); no read blocks; the writer creates model.json
// and groupG-shardIofN.bin only (never a name from the manifest), nothing outside.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <google/protobuf/stubs/logging.h>

#include "amanda/frameworks/tensorflow/tfjs.h"
#include "amanda/support/gate.h"
#include "files_check.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace amanda;
  std::string_view in(reinterpret_cast<const char*>(data), size);
  fuzz::small_budgets();
  fuzz::Sandbox box;
  size_t z = in.find('\0');
  fuzz::put(box.model + "/model.json", in.substr(0, z));
  for (int k = 0; z != std::string_view::npos && k < 16; ++k) {
    size_t next = in.find('\0', z + 1);
    fuzz::put(box.model + "/s" + std::to_string(k) + ".bin", in.substr(z + 1, next == std::string_view::npos ? std::string_view::npos : next - z - 1));
    z = next;
  }
  ::symlink((box.outside + "/secret.bin").c_str(), (box.model + "/link.bin").c_str());
  ::mkfifo((box.model + "/fifo.bin").c_str(), 0600);
  ::mkdir((box.model + "/dir.bin").c_str(), 0755);
  ::mkdir((box.model + "/sub").c_str(), 0755);
  fuzz::put(box.model + "/sub/s.bin", std::string(16, '\0'));
  std::unique_ptr<text::Document> doc;
  std::string json(in.substr(0, in.find('\0')));
  try {
    ReadGate files(box.model + "/model.json");
    doc = std::make_unique<text::Document>(tf_frontend::read_tfjs(files));
  } catch (const Error&) {
  } catch (const ParseError&) {
  }
  if (doc) {
    for (const char* bad : {"link.bin", "fifo.bin", "dir.bin"})
      if (json.find(std::string("\"") + bad + "\"") != std::string::npos && json.find("weightsManifest") != std::string::npos &&
          json.find(bad) > json.find("weightsManifest")) {
        // (named in the manifest and read: the gate let it through)
        std::fprintf(stderr, "a TF.js model was read with a shard '%s'\n", bad);
        std::abort();
      }
    try {
      WriteGate out(box.out + "/model.json");
      tf_frontend::write_tfjs(*doc, out);
      out.commit();
    } catch (const Error&) {
    } catch (const ParseError&) {
    }
    std::string bad = fuzz::unexpected_file(box.out, "model\\.json|group[0-9]+-shard[0-9]+of[0-9]+\\.bin");
    if (!bad.empty()) {
      std::fprintf(stderr, "the TF.js writer made '%s'\n", bad.c_str());
      std::abort();
    }
  }
  if (!box.outside_intact()) {
    std::fprintf(stderr, "the folder outside the model changed\n");
    std::abort();
  }
  return 0;
}
