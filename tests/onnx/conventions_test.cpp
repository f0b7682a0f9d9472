// The frontends' conventions (amanda/ir/conventions.h), checked against the frameworks' own
// definitions: ONNX's numbering against libonnx's TensorProto.DataType enum.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "amanda/io/io.h"
#include "amanda/ir/conventions.h"

namespace amanda {
namespace {

TEST(Conventions, OnnxDtypeCodesAreLibonnxEnum) {
  io::install_conventions();
  const ir::DTypeCodes* codes = ir::conventions().dtype_codes("onnx");
  ASSERT_NE(codes, nullptr);
  EXPECT_EQ(codes->size(), 16u);
  // libonnx's enum name, lower-cased, is our element type name with these exceptions.
  const std::map<std::string, std::string> spelled = {{"float", "float32"}, {"double", "float64"}};
  for (const auto& [code, name] : *codes) {
    ASSERT_TRUE(onnx::TensorProto_DataType_IsValid(static_cast<int>(code))) << code;
    std::string theirs = onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(code));
    for (auto& ch : theirs) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (auto it = spelled.find(theirs); it != spelled.end()) theirs = it->second;
    EXPECT_EQ(name, theirs) << "code " << code;
  }
}

TEST(Conventions, ConstantOpsAreRegisteredByTheirFrontends) {
  io::install_conventions();
  EXPECT_TRUE(ir::conventions().is_constant_op("Constant"));
  EXPECT_TRUE(ir::conventions().is_constant_op("prim::Constant"));
  EXPECT_FALSE(ir::conventions().is_constant_op("Identity"));
  ASSERT_NE(ir::conventions().dtype_codes("torch"), nullptr);
  EXPECT_EQ(ir::conventions().dtype_codes("nosuch"), nullptr);
}

}  // namespace
}  // namespace amanda
