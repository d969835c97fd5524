// `cachekit codec` request parsing: any line gets exactly one JSON object
// back with an "ok" field, and never a crash or an internal error.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "../../tools/tool.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    std::string_view line(reinterpret_cast<const char *>(data), size);
    if (line.find('\n') != std::string_view::npos || cachekit_tool::is_blank(line)) return 0;
    std::string response = cachekit_tool::codec_answer_line(line);
    nlohmann::json parsed = nlohmann::json::parse(response);  // throws (a finding) if not JSON
    FUZZ_REQUIRE(parsed.is_object() && parsed.contains("ok"));
    if (!parsed["ok"].get<bool>()) FUZZ_REQUIRE(parsed["error"] != "Internal");
    return 0;
}
