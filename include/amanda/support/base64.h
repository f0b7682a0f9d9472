// Base64 (RFC 4648, with padding) for tensor bytes written inline in YAML and JSON.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace amanda {

std::string base64_encode(std::string_view bytes);
void base64_encode_to(std::string_view bytes, std::string& out);
// nullopt when the text is not valid base64 (whitespace is ignored).
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace amanda
