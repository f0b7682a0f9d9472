// libonnx's operator registry (about 2,000 OpSchema objects with their documentation, type
// constraints and function bodies) is a static that the process destroys at exit: ~3 ms of a small
// model's conversion, for memory the system takes back anyway. The tool skips every destructor
// (_Exit); a process that must exit normally (Python, with its own finalization) calls
// keep_schema_registry_at_exit(), whose exit handler moves the registry's contents into an object
// that is never freed, leaving the static empty (cheap to destroy). Pointers into it stay valid.
#include <cstdlib>
#include <mutex>

#include <onnx/defs/schema.h>

#include "amanda/frameworks/onnx/namespaces.h"

namespace amanda::onnx_frontend {

namespace {

using Map = ONNX_NAMESPACE::OpName_Domain_Version_Schema_Map;

// The registry's map is reached through a private static function. An explicit instantiation may
// name a private member (C++ [temp.spec]/6), so this template hands its address to a friend
// function; nothing else of libonnx's is touched.
Map& (*registry_map_fn())();
template <Map& (*F)()>
struct MapAccess {
  friend Map& (*registry_map_fn())() { return F; }
};
template struct MapAccess<&ONNX_NAMESPACE::OpSchemaRegistry::GetMapWithoutEnsuringRegistration>;

Map* kept = nullptr;  // reachable from here, so leak checkers do not count it

void move_registry_out() {
  Map& m = registry_map_fn()();
  kept = new Map(std::move(m));  // kept until the process ends, as the tool keeps everything
  m = Map();
}

}  // namespace

void keep_schema_registry_at_exit() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Constructing the (still empty) static first registers its destructor before this handler,
    // so this handler, registered after it, runs before it (exit handlers run in reverse order).
    (void)registry_map_fn()();
    std::atexit(move_registry_out);
  });
}

}  // namespace amanda::onnx_frontend
