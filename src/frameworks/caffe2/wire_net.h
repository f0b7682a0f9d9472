// A NetDef read straight from its wire bytes, without protobuf (docs/caffe2.md, "How the bytes
// are read and written"): views of the bytes with protobuf's accessor names, so that the importer
// reads this and a parsed message with the same code. Strict: a field it does not expect (a
// partition_info, a nested net, a tensor argument, an unknown field), or an argument list the
// importer would keep as bytes, makes read_net_wire return false, and protobuf parses the file.
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "amanda/ir/value.h"

namespace amanda::caffe2_frontend::detail {

struct WireArgument {
  std::string_view name_;
  mutable ir::Value value_;  // moved out by the importer, which reads each argument once
  bool has_name() const { return true; }
  std::string_view name() const { return name_; }
  bool has_n() const { return false; }
  int nets_size() const { return 0; }
};

struct WireArgs {
  std::vector<WireArgument> v;
  int size() const { return static_cast<int>(v.size()); }
  const WireArgument& Get(int k) const { return v[static_cast<size_t>(k)]; }
  auto begin() const { return v.begin(); }
  auto end() const { return v.end(); }
};

struct WireOp {
  // The inputs and outputs: runs of the net's blob pool (no vectors per op: a net of many small
  // ops is mostly allocations otherwise). A run that is not contiguous on the wire is protobuf's.
  const std::vector<std::string_view>* pool = nullptr;
  uint32_t in_b = 0, in_n = 0, out_b = 0, out_n = 0;
  std::vector<std::string_view> ctrl;
  std::optional<std::string_view> name_, type_, engine_, debug_, domain_;
  std::optional<ir::Value> device_;
  std::optional<bool> grad_;
  std::optional<int64_t> version_;
  WireArgs args_;

  std::span<const std::string_view> input() const { return {pool->data() + in_b, in_n}; }
  std::span<const std::string_view> output() const { return {pool->data() + out_b, out_n}; }
  int input_size() const { return static_cast<int>(in_n); }
  std::string_view input(int i) const { return (*pool)[in_b + static_cast<size_t>(i)]; }
  int output_size() const { return static_cast<int>(out_n); }
  std::string_view output(int i) const { return (*pool)[out_b + static_cast<size_t>(i)]; }
  bool has_name() const { return name_.has_value(); }
  std::string_view name() const { return name_.value_or(std::string_view()); }
  bool has_type() const { return type_.has_value(); }
  std::string_view type() const { return type_.value_or(std::string_view()); }
  int arg_size() const { return args_.size(); }
  const WireArgs& arg() const { return args_; }
  bool has_device_option() const { return device_.has_value(); }
  const ir::Value& device_option() const { return *device_; }
  bool has_engine() const { return engine_.has_value(); }
  std::string_view engine() const { return *engine_; }
  int control_input_size() const { return static_cast<int>(ctrl.size()); }
  const std::vector<std::string_view>& control_input() const { return ctrl; }
  bool has_is_gradient_op() const { return grad_.has_value(); }
  bool is_gradient_op() const { return *grad_; }
  bool has_debug_info() const { return debug_.has_value(); }
  std::string_view debug_info() const { return *debug_; }
  bool has_domain() const { return domain_.has_value(); }
  std::string_view domain() const { return *domain_; }
  bool has_op_version() const { return version_.has_value(); }
  int64_t op_version() const { return *version_; }
};

struct WireNet {
  std::optional<std::string_view> name_, type_;
  std::optional<int32_t> workers_;
  std::optional<ir::Value> device_;
  WireArgs args_;
  std::vector<WireOp> ops_;
  std::vector<std::string_view> ext_in, ext_out;
  std::vector<std::string_view> blobs_;  // the ops' inputs and outputs, in runs (WireOp)

  bool has_name() const { return name_.has_value(); }
  std::string_view name() const { return name_.value_or(std::string_view()); }
  bool has_type() const { return type_.has_value(); }
  std::string_view type() const { return *type_; }
  bool has_num_workers() const { return workers_.has_value(); }
  int32_t num_workers() const { return *workers_; }
  bool has_device_option() const { return device_.has_value(); }
  const ir::Value& device_option() const { return *device_; }
  int arg_size() const { return args_.size(); }
  const WireArgs& arg() const { return args_; }
  int partition_info_size() const { return 0; }
  const std::vector<WireOp>& op() const { return ops_; }
  int op_size() const { return static_cast<int>(ops_.size()); }
  const std::vector<std::string_view>& external_input() const { return ext_in; }
  int external_input_size() const { return static_cast<int>(ext_in.size()); }
  const std::vector<std::string_view>& external_output() const { return ext_out; }
};

bool read_net_wire(std::string_view bytes, WireNet& net);

// What the importer calls on either form.
inline bool has_unknown(const WireOp&) { return false; }
inline bool has_unknown(const WireNet&) { return false; }
inline ir::Value device_option_value(const ir::Value& v) { return v; }
// (read_net_wire took only arguments with a readable value.)
template <class F>
std::optional<ir::Value> argument_value(const WireArgument& a, const F&) {
  return std::move(a.value_);
}

}  // namespace amanda::caffe2_frontend::detail
