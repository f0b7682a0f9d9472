#include "amanda/text/value_text.h"

#include "amanda/support/base64.h"
#include "amanda/support/diagnostics.h"
#include "emitter.h"

namespace amanda::text {

namespace {

void emit_value(Emitter& em, const ir::Value& v) {
  using K = ir::Value::Kind;
  switch (v.kind()) {
    case K::Null: em.null(); break;
    case K::Bool: em.boolean(v.as_bool()); break;
    case K::Int: em.integer(v.as_int()); break;
    case K::Float: em.real(v.as_float()); break;
    case K::String: em.str(v.as_string()); break;
    case K::List: {
      bool flow = true;
      for (const auto& x : v.as_list())
        if (x.is_list() || x.is_map() || x.is_tensor() || x.is_graph()) flow = false;
      em.begin_seq(flow && !v.as_list().empty());
      for (const auto& x : v.as_list()) emit_value(em, x);
      em.end_seq();
      break;
    }
    case K::Map:
      em.begin_map();
      for (const auto& e : v.as_map()) {
        em.key(e.key);
        emit_value(em, e.value);
      }
      em.end_map();
      break;
    case K::Tensor: {
      const auto& t = v.as_tensor();
      em.begin_map(true, "!tensor");
      em.key("dtype");
      em.str(ir::dtype_name(t.dtype));
      em.key("shape");
      em.begin_seq(true);
      for (auto d : t.shape) em.integer(d);
      em.end_seq();
      em.key("base64");
      em.raw_str(base64_encode(t.bytes()));
      em.end_map();
      break;
    }
    case K::Graph: throw Error("value_to_text: graph values need their graph; write the document instead");
  }
}

}  // namespace

std::string value_to_text(const ir::Value& root, Format format) {
  std::string out;
  auto em = format == Format::Yaml ? make_yaml_emitter(out, 512) : make_json_emitter(out, 512);
  emit_value(*em, root);
  return out;
}

}  // namespace amanda::text
