// Speed of reading + writing a NetDef against protobuf's own parse + serialize of the same bytes
// (docs/performance.md, "Caffe2"), measured in one run, interleaved, best of N.
//   caffe2_speed [-n N] [--phases] [--settle] PREDICT [INIT]   (.pbtxt: protobuf's text format both ways)
// The figure of docs/performance.md: protobuf's side frees its message inside its timed section,
// Amanda's document is freed untimed, and each side starts on the heap the other left.
// --settle: each side timed from the bytes to the bytes written and everything it made freed, with
// the heap's deferred work done (untimed) before each timed section: glibc consolidates the small
// blocks freed so far on the next large allocation, so otherwise one side pays for the other's
// frees (Amanda's first large allocation consolidates the blocks of protobuf's freed message),
// and protobuf's small allocations reuse the blocks Amanda's document freed.
#include <malloc.h>
#include <time.h>

#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <google/protobuf/text_format.h>

#include "amanda_caffe2.pb.h"
#include "netdef.h"
#include "wire_net.h"

using namespace amanda;
using Clock = std::chrono::steady_clock;

// This thread's CPU time: on the shared machine (load 10-20 on 2 cores) a wall-clock window of a
// few milliseconds is seldom free of preemption, and best-of-N wall times of the larger nets vary
// 1.2x-2x from one process to the next; CPU time leaves the waiting out.
static double cpu_ms() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

int main(int argc, char** argv) {
  int n = 20;
  bool phases = false, legacy = true;
  // The heap's deferred work done, untimed: a block too large for the small-block caches makes glibc
  // consolidate the freed small blocks now (what the next large allocation of either side would do).
  auto settle = [&legacy] {
    if (legacy) return;
    void* volatile p = std::malloc(64 * 1024);
    std::free(p);
  };
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-n" && i + 1 < argc) n = std::atoi(argv[++i]);
    else if (a == "--phases") phases = true;
    else if (a == "--settle") legacy = false;
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
  double cpu_pb = 1e30, cpu_am = 1e30;
  double best_pb = 1e30, best_am = 1e30, best_wire = 1e30, best_imp = 1e30, best_exp = 1e30;
  for (int round = 0; round < n; ++round) {
    settle();
    double c0 = cpu_ms();
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
    double c1 = cpu_ms();
    settle();
    double c1b = cpu_ms();
    auto t1b = Clock::now();
    std::optional<caffe2_frontend::NetBytes> init;
    if (bytes.size() > 1) init = caffe2_frontend::NetBytes{bytes[1], text};
    std::optional<text::Document> doc = caffe2_frontend::import_net({bytes[0], text}, init);
    std::optional<caffe2_frontend::ExportedNet> e = caffe2_frontend::export_net(*doc, text);
    sink += e->predict.size() + (e->init ? e->init->size() : 0);
    if (!legacy) doc.reset(), e.reset();
    auto t2 = Clock::now();
    double c2 = cpu_ms();
    best_pb = std::min(best_pb, std::chrono::duration<double, std::milli>(t1 - t0).count());
    best_am = std::min(best_am, std::chrono::duration<double, std::milli>(t2 - t1b).count());
    cpu_pb = std::min(cpu_pb, c1 - c0);
    cpu_am = std::min(cpu_am, c2 - c1b);
    if (phases && !text) {  // where Amanda's time goes: the wire read alone, the import, the export
      auto p0 = Clock::now();
      caffe2_frontend::detail::WireNet wn;
      caffe2_frontend::detail::read_net_wire(bytes[0], wn);
      auto p1 = Clock::now();
      text::Document d2 = caffe2_frontend::import_net({bytes[0], text}, init);
      auto p2 = Clock::now();
      caffe2_frontend::ExportedNet e2 = caffe2_frontend::export_net(d2, text);
      auto p3 = Clock::now();
      sink += wn.op_size() + e2.predict.size();
      best_wire = std::min(best_wire, std::chrono::duration<double, std::milli>(p1 - p0).count());
      best_imp = std::min(best_imp, std::chrono::duration<double, std::milli>(p2 - p1).count());
      best_exp = std::min(best_exp, std::chrono::duration<double, std::milli>(p3 - p2).count());
    }
  }
  if (phases && !text)
    std::printf("  phases (best of %d): wire read %.3f ms, import (wire read included) %.3f ms, export %.3f ms\n", n, best_wire,
                best_imp, best_exp);
  std::printf("%s: %.2f MB, protobuf parse+serialize %.3f ms, amanda read+write %.3f ms, ratio %.2f (best of %d%s; %zu); "
              "CPU time: %.3f ms, %.3f ms, ratio %.2f\n",
              files[0].c_str(), total / 1e6, best_pb, best_am, best_am / best_pb, n, legacy ? "" : ", settled", sink % 10, cpu_pb,
              cpu_am, cpu_am / cpu_pb);
  return 0;
}
