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

struct WireNet;

struct WireArgument {
  std::string_view name_;
  mutable ir::Value value_;  // moved out by the importer, which reads each argument once
  bool has_name() const { return true; }
  std::string_view name() const { return name_; }
  bool has_n() const { return false; }
  int nets_size() const { return 0; }
};

// An op's arguments: a run of the net's argument pool (one vector per net, not one per op).
struct WireArgs {
  const WireArgument* b = nullptr;
  size_t n = 0;
  int size() const { return static_cast<int>(n); }
  const WireArgument& Get(int k) const { return b[k]; }
  const WireArgument* begin() const { return b; }
  const WireArgument* end() const { return b + n; }
};

// A DeviceOption's bytes (read_net_wire checked that they read; device_option_value makes the
// value when the importer asks, so that an op's record stays small).
struct WireDevice {
  std::string_view bytes;
};

struct WireOp {
  // The inputs, outputs and arguments: runs of the net's pools (no vectors per op: a net of many
  // small ops is mostly allocations otherwise). A run that is not contiguous on the wire is protobuf's.
  const WireNet* net = nullptr;
  uint32_t in_b = 0, in_n = 0, out_b = 0, out_n = 0, arg_b = 0, arg_n = 0;
  enum : uint16_t { kName = 1, kType = 2, kEngine = 4, kDebug = 8, kDomain = 16, kDevice = 32, kGrad = 64, kVersion = 128 };
  uint16_t has = 0;
  bool grad_ = false;
  std::string_view name_, type_, engine_, debug_, domain_;
  WireDevice device_;
  int64_t version_ = 0;
  std::vector<std::string_view> ctrl;

  inline std::span<const std::string_view> input() const;
  inline std::span<const std::string_view> output() const;
  int input_size() const { return static_cast<int>(in_n); }
  inline std::string_view input(int i) const;
  int output_size() const { return static_cast<int>(out_n); }
  inline std::string_view output(int i) const;
  bool has_name() const { return has & kName; }
  std::string_view name() const { return name_; }
  bool has_type() const { return has & kType; }
  std::string_view type() const { return type_; }
  int arg_size() const { return static_cast<int>(arg_n); }
  inline WireArgs arg() const;
  bool has_device_option() const { return has & kDevice; }
  const WireDevice& device_option() const { return device_; }
  bool has_engine() const { return has & kEngine; }
  std::string_view engine() const { return engine_; }
  int control_input_size() const { return static_cast<int>(ctrl.size()); }
  const std::vector<std::string_view>& control_input() const { return ctrl; }
  bool has_is_gradient_op() const { return has & kGrad; }
  bool is_gradient_op() const { return grad_; }
  bool has_debug_info() const { return has & kDebug; }
  std::string_view debug_info() const { return debug_; }
  bool has_domain() const { return has & kDomain; }
  std::string_view domain() const { return domain_; }
  bool has_op_version() const { return has & kVersion; }
  int64_t op_version() const { return version_; }
};

struct WireNet {
  std::optional<std::string_view> name_, type_;
  std::optional<int32_t> workers_;
  std::optional<WireDevice> device_;
  std::vector<WireArgument> net_args_;  // the net's own arguments
  std::vector<WireOp> ops_;
  std::vector<std::string_view> ext_in, ext_out;
  std::vector<std::string_view> blobs_;  // the ops' inputs and outputs, in runs (WireOp)
  std::vector<WireArgument> args_;       // the ops' arguments, in runs (WireOp)

  WireNet() = default;
  WireNet(const WireNet&) = delete;  // (its ops point at it)
  WireNet& operator=(const WireNet&) = delete;

  bool has_name() const { return name_.has_value(); }
  std::string_view name() const { return name_.value_or(std::string_view()); }
  bool has_type() const { return type_.has_value(); }
  std::string_view type() const { return *type_; }
  bool has_num_workers() const { return workers_.has_value(); }
  int32_t num_workers() const { return *workers_; }
  bool has_device_option() const { return device_.has_value(); }
  const WireDevice& device_option() const { return *device_; }
  int arg_size() const { return static_cast<int>(net_args_.size()); }
  WireArgs arg() const { return {net_args_.data(), net_args_.size()}; }
  int partition_info_size() const { return 0; }
  const std::vector<WireOp>& op() const { return ops_; }
  int op_size() const { return static_cast<int>(ops_.size()); }
  const std::vector<std::string_view>& external_input() const { return ext_in; }
  int external_input_size() const { return static_cast<int>(ext_in.size()); }
  const std::vector<std::string_view>& external_output() const { return ext_out; }
};

std::span<const std::string_view> WireOp::input() const { return {net->blobs_.data() + in_b, in_n}; }
std::span<const std::string_view> WireOp::output() const { return {net->blobs_.data() + out_b, out_n}; }
std::string_view WireOp::input(int i) const { return net->blobs_[in_b + static_cast<size_t>(i)]; }
std::string_view WireOp::output(int i) const { return net->blobs_[out_b + static_cast<size_t>(i)]; }
WireArgs WireOp::arg() const { return {net->args_.data() + arg_b, arg_n}; }

bool read_net_wire(std::string_view bytes, WireNet& net);

// What the importer calls on either form.
inline bool has_unknown(const WireOp&) { return false; }
inline bool has_unknown(const WireNet&) { return false; }
ir::Value device_option_value(const WireDevice& d);
// (read_net_wire took only arguments with a readable value.)
template <class F>
std::optional<ir::Value> argument_value(const WireArgument& a, const F&) {
  return std::move(a.value_);
}

}  // namespace amanda::caffe2_frontend::detail
