// The small messages of a NetDef as attribute values, both ways (docs/caffe2.md, "Fields"): a
// DeviceOption or PartitionInfo is a map of the fields it has; an Argument is its one value. What a
// readable value would not give back exactly (unknown fields, an Argument with two values or a
// tensor) is kept as the message's bytes, base64, and written back as they were.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "amanda/ir/value.h"
#include "amanda_caffe2.pb.h"

namespace amanda::caffe2_frontend::detail {

ir::Value device_option_value(const amanda_caffe2::DeviceOption& d);
void device_option_from(const ir::Value& v, amanda_caffe2::DeviceOption& d, const std::string& where);

ir::Value partition_info_value(const amanda_caffe2::PartitionInfo& p);
void partition_info_from(const ir::Value& v, amanda_caffe2::PartitionInfo& p, const std::string& where);

// Nested nets (an Argument's `n` and `nets`) are graphs the importer makes and the exporter reads.
using NetToGraph = std::function<ir::Value(const amanda_caffe2::NetDef&)>;
using GraphToNet = std::function<void(const ir::Value&, amanda_caffe2::NetDef&)>;

// The Argument's value, or nullopt when it has no readable form (two value fields, a tensor, an
// unknown field, a name the IR cannot hold as an attribute key).
std::optional<ir::Value> argument_value(const amanda_caffe2::Argument& a, const NetToGraph& net);
// Fills the value of `a` (its name is set by the caller). Throws amanda::Error naming where()
// (made only then: an entity path costs more than the argument).
void argument_from(const ir::Value& v, amanda_caffe2::Argument& a, const GraphToNet& net, const std::function<std::string()>& where);

std::string serialize(const google::protobuf::MessageLite& m);
// A message kept whole: base64 of its bytes.
ir::Value kept(const google::protobuf::MessageLite& m);
void parse_kept(const ir::Value& v, google::protobuf::MessageLite& m, const std::string& where);

}  // namespace amanda::caffe2_frontend::detail
