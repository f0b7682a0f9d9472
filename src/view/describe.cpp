#include "describe.h"

#include <cstring>

#include <fmt/format.h>

namespace amanda::view {

namespace {

// Appends the first few elements of a small numeric tensor.
void tensor_values(const ir::Tensor& t, std::string& out, size_t budget) {
  auto count = t.element_count();
  if (!count || *count == 0 || *count > 16 || t.dtype == ir::DType::String) return;
  auto exp = t.expected_bytes();
  if (!exp || *exp > t.size) return;
  out += " = [";
  for (uint64_t i = 0; i < *count && out.size() < budget; ++i) {
    if (i) out += ", ";
    const uint8_t* p = t.data + i * ir::dtype_size(t.dtype);
    auto get = [&](auto v) {
      std::memcpy(&v, p, sizeof v);
      return v;
    };
    switch (t.dtype) {
      case ir::DType::Float32: out += fmt::format("{}", get(float())); break;
      case ir::DType::Float64: out += fmt::format("{}", get(double())); break;
      case ir::DType::Int64: out += fmt::format("{}", get(int64_t())); break;
      case ir::DType::Int32: out += fmt::format("{}", get(int32_t())); break;
      case ir::DType::Int16: out += fmt::format("{}", get(int16_t())); break;
      case ir::DType::Int8: out += fmt::format("{}", get(int8_t())); break;
      case ir::DType::UInt8: out += fmt::format("{}", get(uint8_t())); break;
      case ir::DType::Bool: out += get(uint8_t()) ? "true" : "false"; break;
      default: out += "…"; i = *count; break;
    }
  }
  out += "]";
}

void summary(const ir::Graph& g, const ir::Value& v, std::string& out, size_t budget) {
  if (out.size() >= budget) {
    out += "…";
    return;
  }
  using K = ir::Value::Kind;
  switch (v.kind()) {
    case K::Null: out += "null"; break;
    case K::Bool: out += v.as_bool() ? "true" : "false"; break;
    case K::Int: out += fmt::format("{}", v.as_int()); break;
    case K::Float: out += fmt::format("{}", v.as_float()); break;
    case K::String: {
      const std::string& s = v.as_string();
      size_t room = budget > out.size() ? budget - out.size() : 0;
      out += '"';
      out += s.size() > room ? s.substr(0, room) + "…" : s;
      out += '"';
      break;
    }
    case K::List: {
      out += '[';
      const auto& l = v.as_list();
      for (size_t i = 0; i < l.size(); ++i) {
        if (i) out += ", ";
        if (out.size() >= budget) {
          out += fmt::format("… {} items", l.size());
          break;
        }
        summary(g, l[i], out, budget);
      }
      out += ']';
      break;
    }
    case K::Map: {
      out += '{';
      const auto& m = v.as_map();
      for (size_t i = 0; i < m.size(); ++i) {
        if (i) out += ", ";
        if (out.size() >= budget) {
          out += "…";
          break;
        }
        out += m[i].key + ": ";
        summary(g, m[i].value, out, budget);
      }
      out += '}';
      break;
    }
    case K::Tensor: {
      const ir::Tensor& t = v.as_tensor();
      out += fmt::format("tensor {}[{}]", ir::dtype_name(t.dtype), fmt::join(t.shape, ", "));
      tensor_values(t, out, budget);
      break;
    }
    case K::Graph: {
      ir::OpId gn = v.as_graph();
      if (g.valid(gn)) out += fmt::format("graph {} ({} ops)", g.name_str(gn), g.child_count(gn));
      else out += "graph (missing)";
      break;
    }
  }
}

std::string shape_text(const ir::Value& v) {
  if (!v.is_list()) return "";
  std::string s = "[";
  for (size_t i = 0; i < v.as_list().size(); ++i) {
    const ir::Value& d = v.as_list()[i];
    if (i) s += ", ";
    s += d.is_int() ? fmt::format("{}", d.as_int()) : d.is_string() ? d.as_string() : "?";
  }
  return s + "]";
}

std::string endpoint(const ir::Graph& g, ir::PortId p) {
  ir::OpId op = g.port_op(p);
  if (g.is_graph(op))
    return std::string(g.port_dir(p) == ir::PortDir::In ? "input " : "output ") + std::string(g.port_name_str(p));
  return fmt::format("{}:{}", g.name_str(op), g.port_name_str(p));
}

}  // namespace

std::string value_summary(const ir::Graph& g, const ir::Value& v, size_t budget) {
  std::string out;
  summary(g, v, out, budget);
  return out;
}

bool is_initializer(const ir::Graph& g, ir::PortId p) {
  Symbol key = g.symbols().find("initializer");
  if (key == SymbolTable::kNone) return false;
  const ir::Value* v = g.attr(p, key);
  return v && v->is_tensor();
}

std::string port_type(const ir::Graph& g, ir::PortId p) {
  std::string type, shape, other;
  for (const auto& [k, v] : g.attrs(p)) {
    std::string_view key = g.str(k);
    if ((key == "type" || key == "@type") && v.is_string()) type = v.as_string();
    else if (key == "shape" || key == "@shape") shape = shape_text(v);
    else if (key == "initializer" && v.is_tensor())
      type = fmt::format("{}[{}] (initializer)", ir::dtype_name(v.as_tensor().dtype), fmt::join(v.as_tensor().shape, ", "));
    else if (!key.starts_with("@") && key != "graph_input" && (v.is_string() || v.is_int() || v.is_bool()) && other.size() < 80)
      other += fmt::format("{}{}={}", other.empty() ? "" : " ", key, value_summary(g, v, 40));
  }
  std::string s = type.empty() ? other : shape.empty() ? type : type + " " + shape;
  if (s.empty() && !shape.empty()) s = shape;
  if (s.empty() && g.port_dir(p) == ir::PortDir::In && !g.is_control(p))
    if (ir::PortId src = g.producer(p)) return port_type(g, src);
  return s;
}

std::string port_source(const ir::Graph& g, ir::PortId in) {
  std::string s;
  size_t n = 0;
  for (ir::EdgeId e = g.first_in_edge(in); e; e = g.next_in_edge(e), ++n) {
    ir::PortId src = g.edge_src(e);
    if (n < 4) {
      if (n) s += ", ";
      s += is_initializer(g, src) ? "initializer " + std::string(g.port_name_str(src)) : endpoint(g, src);
    }
  }
  if (n > 4) s += fmt::format(", … ({} sources)", n);
  return n ? s : "(not connected)";
}

std::string port_uses(const ir::Graph& g, ir::PortId out) {
  std::string s;
  size_t n = 0;
  for (ir::EdgeId e = g.first_out_edge(out); e; e = g.next_out_edge(e), ++n)
    if (n < 4) s += (n ? ", " : "") + endpoint(g, g.edge_dst(e));
  if (n > 4) s += fmt::format(", … ({} uses)", n);
  return n ? s : "(unused)";
}

std::string body_title(const ir::Graph& g, ir::OpId owner, ir::OpId gn) {
  for (const auto& [k, v] : g.attrs(owner)) {
    if (v.is_graph() && v.as_graph() == gn) return std::string(g.str(k));
    if (v.is_list())
      for (size_t i = 0; i < v.as_list().size(); ++i)
        if (v.as_list()[i].is_graph() && v.as_list()[i].as_graph() == gn) return fmt::format("{}[{}]", g.str(k), i);
  }
  return std::string(g.name_str(gn));
}

}  // namespace amanda::view
