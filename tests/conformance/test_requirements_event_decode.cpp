// decode-bounds.json through the one untrusted MessagePack decode the C API
// does not expose: the reference SDK's invalidation events, read from Redis
// pub/sub (requirement_coverage.json, IOP-25, IOP-33, IOP-34). Every
// document, reject or accept, must come back as "not an event" without a
// crash: the decoder takes only its small map of strings.
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "l2/redis/sdk_event.hpp"

#include <csetjmp>
#include <cstdarg>
#include <cstddef>
extern "C" {
#include <cmocka.h>
}

namespace {

nlohmann::json g_vectors;

std::string from_hex(const std::string &h) {
    std::string out;
    for (size_t i = 0; i + 1 < h.size(); i += 2) out.push_back(char(std::stoi(h.substr(i, 2), nullptr, 16)));
    return out;
}

std::string construct(const nlohmann::json &c) {
    std::string unit = from_hex(c.at("repeat_hex").get<std::string>()), out;
    for (uint64_t i = 0, n = c.at("count").get<uint64_t>(); i < n; ++i) out += unit;
    return out + from_hex(c.at("suffix_hex").get<std::string>());
}

void test_every_document_is_not_an_event(void **) {
    int failed = 0;
    for (const char *category : {"reject_vectors", "accept_vectors"}) {
        for (const auto &v : g_vectors.at(category)) {
            const std::string name = v.at("name").get<std::string>();
            const bool refused = !cachekit::l2::sdk_event::decode(construct(v.at("construction"))).has_value();
            std::printf("%s decode-bounds.json:%s (invalidation event decoder)\n", refused ? "ok" : "FAIL", name.c_str());
            failed += !refused;
        }
    }
    assert_int_equal(failed, 0);
}

}  // namespace

int main() {
    const char *dir = std::getenv("CACHEKIT_VECTORS_DIR");
    if (!dir || !*dir) dir = std::getenv("CACHEKIT_VECTORS_DIR_DEFAULT");
    const std::string path = std::string(dir ? dir : "") + "/decode-bounds.json";
    struct stat st;
    if (!dir || !*dir || ::stat(path.c_str(), &st) != 0) {
        std::printf("SKIP decode-bounds.json: no vector folder or file (%s)\n", path.c_str());
        return 77;
    }
    std::ifstream in(path);
    g_vectors = nlohmann::json::parse(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_document_is_not_an_event),
    };
    return cmocka_run_group_tests_name("requirements: invalidation events", tests, nullptr, nullptr);
}
