// oneDNN (libdnnl) is opened with dlopen the first time a convolution or a float32 product asks for
// it, not when the program starts. Linked the ordinary way, the loader maps and relocates its 40 MB
// (31,000 relocations, and libOpenCL behind it) in every `amanda` process: 1.1-1.4 ms of CPU of a
// 5 ms `amanda --version`, paid by `amanda optimize` of a model that never convolves anything
// (docs/performance.md, "Rewrite passes"). OpenBLAS is loaded the same way (matmul.cpp).
//
// oneDNN's C++ API (dnnl.hpp, used by conv_dnnl.cpp) is inline code over its C API: this file
// defines each C function the interpreter calls as a forwarder to the one in the library, found
// with dlsym when dnnl_available() first runs. The list below is what the objects of amanda_interp
// reference (`nm -u`); a function the interpreter starts to use and that is missing here is an
// undefined symbol at link time, not a silent fallback. Each forwarder's signature is checked by the
// compiler against its declaration in dnnl.h. They are hidden: a shared object linking
// amanda_interp (the Python module) does not export them. The names below are dnnl-specific: in a
// unity build this file shares its anonymous namespace with the other kernels.
#include "families.h"

#if defined(AMANDA_DNNL_LINKED)
// The sanitizer build links libdnnl the ordinary way: LeakSanitizer's exit-time tracer crashed
// (signal 11) in processes that had opened it with dlopen. Nothing to forward then.
namespace amanda::interp::kernels {
bool dnnl_available() { return true; }
}  // namespace amanda::interp::kernels
#else
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include <oneapi/dnnl/dnnl.h>

// X(return type, name, (parameters), (arguments))
#define AMANDA_DNNL_FUNCTIONS(X)                                                                                   \
  X(dnnl_status_t, dnnl_engine_create, (dnnl_engine_t * engine, dnnl_engine_kind_t kind, size_t index),           \
    (engine, kind, index))                                                                                         \
  X(dnnl_status_t, dnnl_engine_destroy, (dnnl_engine_t engine), (engine))                                          \
  X(dnnl_status_t, dnnl_stream_create, (dnnl_stream_t * stream, dnnl_engine_t engine, unsigned flags),             \
    (stream, engine, flags))                                                                                       \
  X(dnnl_status_t, dnnl_stream_wait, (dnnl_stream_t stream), (stream))                                             \
  X(dnnl_status_t, dnnl_stream_destroy, (dnnl_stream_t stream), (stream))                                          \
  X(dnnl_status_t, dnnl_sgemm,                                                                                     \
    (char transa, char transb, dnnl_dim_t M, dnnl_dim_t N, dnnl_dim_t K, float alpha, const float* A,              \
     dnnl_dim_t lda, const float* B, dnnl_dim_t ldb, float beta, float* C, dnnl_dim_t ldc),                        \
    (transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc))                                                \
  X(dnnl_status_t, dnnl_memory_desc_init_by_tag,                                                                   \
    (dnnl_memory_desc_t * memory_desc, int ndims, const dnnl_dims_t dims, dnnl_data_type_t data_type,              \
     dnnl_format_tag_t tag),                                                                                       \
    (memory_desc, ndims, dims, data_type, tag))                                                                    \
  X(size_t, dnnl_memory_desc_get_size, (const dnnl_memory_desc_t* memory_desc), (memory_desc))                     \
  X(int, dnnl_memory_desc_equal, (const dnnl_memory_desc_t* lhs, const dnnl_memory_desc_t* rhs), (lhs, rhs))       \
  X(dnnl_status_t, dnnl_memory_create,                                                                             \
    (dnnl_memory_t * memory, const dnnl_memory_desc_t* memory_desc, dnnl_engine_t engine, void* handle),           \
    (memory, memory_desc, engine, handle))                                                                         \
  X(dnnl_status_t, dnnl_memory_get_memory_desc, (const_dnnl_memory_t memory, const dnnl_memory_desc_t** memory_desc), \
    (memory, memory_desc))                                                                                         \
  X(dnnl_status_t, dnnl_memory_get_engine, (const_dnnl_memory_t memory, dnnl_engine_t * engine), (memory, engine)) \
  X(dnnl_status_t, dnnl_memory_destroy, (dnnl_memory_t memory), (memory))                                          \
  X(dnnl_status_t, dnnl_post_ops_create, (dnnl_post_ops_t * post_ops), (post_ops))                                 \
  X(dnnl_status_t, dnnl_post_ops_destroy, (dnnl_post_ops_t post_ops), (post_ops))                                  \
  X(dnnl_status_t, dnnl_post_ops_append_eltwise,                                                                   \
    (dnnl_post_ops_t post_ops, float scale, dnnl_alg_kind_t alg_kind, float alpha, float beta),                    \
    (post_ops, scale, alg_kind, alpha, beta))                                                                      \
  X(dnnl_status_t, dnnl_primitive_attr_create, (dnnl_primitive_attr_t * attr), (attr))                             \
  X(dnnl_status_t, dnnl_primitive_attr_destroy, (dnnl_primitive_attr_t attr), (attr))                              \
  X(dnnl_status_t, dnnl_primitive_attr_set_post_ops, (dnnl_primitive_attr_t attr, const_dnnl_post_ops_t post_ops), \
    (attr, post_ops))                                                                                              \
  X(dnnl_status_t, dnnl_dilated_convolution_forward_desc_init,                                                     \
    (dnnl_convolution_desc_t * conv_desc, dnnl_prop_kind_t prop_kind, dnnl_alg_kind_t alg_kind,                    \
     const dnnl_memory_desc_t* src_desc, const dnnl_memory_desc_t* weights_desc,                                   \
     const dnnl_memory_desc_t* bias_desc, const dnnl_memory_desc_t* dst_desc, const dnnl_dims_t strides,           \
     const dnnl_dims_t dilates, const dnnl_dims_t padding_l, const dnnl_dims_t padding_r),                         \
    (conv_desc, prop_kind, alg_kind, src_desc, weights_desc, bias_desc, dst_desc, strides, dilates, padding_l,      \
     padding_r))                                                                                                   \
  X(dnnl_status_t, dnnl_primitive_desc_iterator_create,                                                            \
    (dnnl_primitive_desc_iterator_t * iterator, const_dnnl_op_desc_t op_desc, const_dnnl_primitive_attr_t attr,    \
     dnnl_engine_t engine, const_dnnl_primitive_desc_t hint_forward_primitive_desc),                               \
    (iterator, op_desc, attr, engine, hint_forward_primitive_desc))                                                \
  X(dnnl_primitive_desc_t, dnnl_primitive_desc_iterator_fetch, (const_dnnl_primitive_desc_iterator_t iterator),    \
    (iterator))                                                                                                    \
  X(dnnl_status_t, dnnl_primitive_desc_iterator_destroy, (dnnl_primitive_desc_iterator_t iterator), (iterator))    \
  X(dnnl_status_t, dnnl_primitive_desc_destroy, (dnnl_primitive_desc_t primitive_desc), (primitive_desc))          \
  X(const dnnl_memory_desc_t*, dnnl_primitive_desc_query_md,                                                       \
    (const_dnnl_primitive_desc_t primitive_desc, dnnl_query_t what, int index), (primitive_desc, what, index))     \
  X(dnnl_status_t, dnnl_reorder_primitive_desc_create,                                                             \
    (dnnl_primitive_desc_t * reorder_primitive_desc, const dnnl_memory_desc_t* src_desc, dnnl_engine_t src_engine, \
     const dnnl_memory_desc_t* dst_desc, dnnl_engine_t dst_engine, const_dnnl_primitive_attr_t attr),              \
    (reorder_primitive_desc, src_desc, src_engine, dst_desc, dst_engine, attr))                                    \
  X(dnnl_status_t, dnnl_primitive_create, (dnnl_primitive_t * primitive, const_dnnl_primitive_desc_t primitive_desc), \
    (primitive, primitive_desc))                                                                                   \
  X(dnnl_status_t, dnnl_primitive_execute,                                                                         \
    (const_dnnl_primitive_t primitive, dnnl_stream_t stream, int nargs, const dnnl_exec_arg_t* args),              \
    (primitive, stream, nargs, args))                                                                              \
  X(dnnl_status_t, dnnl_primitive_destroy, (dnnl_primitive_t primitive), (primitive))

namespace amanda::interp::kernels {
namespace {

#define AMANDA_DNNL_INDEX(R, name, params, args) k_##name,
enum DnnlFunction { AMANDA_DNNL_FUNCTIONS(AMANDA_DNNL_INDEX) kDnnlFunctionCount };
#undef AMANDA_DNNL_INDEX

#define AMANDA_DNNL_NAME(R, name, params, args) #name,
constexpr const char* kDnnlNames[kDnnlFunctionCount] = {AMANDA_DNNL_FUNCTIONS(AMANDA_DNNL_NAME)};
#undef AMANDA_DNNL_NAME

// The library's functions, all found or none (a partial set would fail in the middle of a call).
void* dnnl_slots[kDnnlFunctionCount] = {};

bool load_dnnl() {
  void* h = dlopen(AMANDA_DNNL_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    std::fprintf(stderr, "amanda: oneDNN (%s) cannot be loaded, convolutions and products use OpenBLAS: %s\n",
                 AMANDA_DNNL_SONAME, dlerror());
    return false;
  }
  void* found[kDnnlFunctionCount];
  for (int i = 0; i < kDnnlFunctionCount; ++i) {
    found[i] = dlsym(h, kDnnlNames[i]);
    if (!found[i]) {
      std::fprintf(stderr, "amanda: %s has no %s, convolutions and products use OpenBLAS\n", AMANDA_DNNL_SONAME,
                   kDnnlNames[i]);
      return false;
    }
  }
  for (int i = 0; i < kDnnlFunctionCount; ++i) dnnl_slots[i] = found[i];
  return true;
}

}  // namespace

bool dnnl_available() {
  static const bool ok = load_dnnl();
  return ok;
}

namespace {
// The function behind a forwarder. Callers test dnnl_available() first; one that did not still
// loads the library here, and one that calls while it cannot be loaded stops with a message rather
// than jumping to address 0.
void* dnnl_function(int index) {
  if (!dnnl_available()) {
    std::fprintf(stderr, "amanda: internal error: %s called while oneDNN is not available\n", kDnnlNames[index]);
    std::abort();
  }
  return dnnl_slots[index];
}
}  // namespace

}  // namespace amanda::interp::kernels

#define AMANDA_DNNL_FORWARD(R, name, params, args)                                         \
  extern "C" __attribute__((visibility("hidden"))) R name params {                         \
    using F = decltype(&::name);                                                           \
    namespace k = amanda::interp::kernels;                                                 \
    return reinterpret_cast<F>(k::dnnl_function(k::k_##name)) args;                        \
  }
AMANDA_DNNL_FUNCTIONS(AMANDA_DNNL_FORWARD)
#undef AMANDA_DNNL_FORWARD
#endif  // AMANDA_DNNL_LINKED
