// Speed of reading + writing a NetDef against protobuf's own parse + serialize of the same bytes
// (docs/performance.md, "Caffe2"), measured in one run, interleaved, best of N.
//   caffe2_speed [-n N] PREDICT [INIT]      (.pbtxt: protobuf's text format both ways)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <google/protobuf/text_format.h>

#include "amanda_caffe2.pb.h"
#include "netdef.h"

using namespace amanda;
using Clock = std::chrono::steady_clock;

static std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

int main(int argc, char** argv) {
  int n = 20;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-n" && i + 1 < argc) n = std::atoi(argv[++i]);
    else files.push_back(a);
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: caffe2_speed [-n N] PREDICT [INIT]\n");
    return 2;
  }
  bool text = files[0].ends_with(".pbtxt");
  std::vector<std::string> bytes;
  for (const auto& f : files) bytes.push_back(slurp(f));
  size_t total = 0, sink = 0;
  for (const auto& b : bytes) total += b.size();
  double best_pb = 1e30, best_am = 1e30;
  for (int round = 0; round < n; ++round) {
    auto t0 = Clock::now();
    for (const auto& b : bytes) {
      amanda_caffe2::NetDef m;
      std::string out;
      if (text) {
        google::protobuf::TextFormat::ParseFromString(b, &m);
        google::protobuf::TextFormat::PrintToString(m, &out);
      } else {
        m.ParseFromString(b);
        m.SerializeToString(&out);
      }
      sink += out.size();
    }
    auto t1 = Clock::now();
    std::optional<caffe2_frontend::NetBytes> init;
    if (bytes.size() > 1) init = caffe2_frontend::NetBytes{bytes[1], text};
    text::Document doc = caffe2_frontend::import_net({bytes[0], text}, init);
    caffe2_frontend::ExportedNet e = caffe2_frontend::export_net(doc, text);
    sink += e.predict.size() + (e.init ? e.init->size() : 0);
    auto t2 = Clock::now();
    best_pb = std::min(best_pb, std::chrono::duration<double, std::milli>(t1 - t0).count());
    best_am = std::min(best_am, std::chrono::duration<double, std::milli>(t2 - t1).count());
  }
  std::printf("%s: %.2f MB, protobuf parse+serialize %.3f ms, amanda read+write %.3f ms, ratio %.2f (best of %d; %zu)\n",
              files[0].c_str(), total / 1e6, best_pb, best_am, best_am / best_pb, n, sink % 10);
  return 0;
}
