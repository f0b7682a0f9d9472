#pragma once

#include <string>

#include "amanda/text/document.h"

namespace amanda::tool {

// Exit codes: 0 = fine, 1 = the input is invalid, 2 = wrong usage.
inline constexpr int kOk = 0, kInvalid = 1, kUsage = 2;

std::string inspect_report(const text::Document& doc, const Diagnostics& problems);

}  // namespace amanda::tool
