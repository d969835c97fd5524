// cachekit-py's invalidation events (l2/redis/sdk_event.hpp), no server: the bytes
// cachekit 0.24.1's encode_event produced (hex below, from its own
// msgpack) decode and re-encode identically; the registry hash matches the
// blake3 package's digests; hostile bytes are refused.
#include <string>

#include "l2/redis/sdk_event.hpp"
#include "redis_test_support.hpp"

namespace {

namespace ev = cachekit::l2::sdk_event;

std::string unhex(const std::string &h) {
    std::string out;
    for (size_t i = 0; i + 1 < h.size(); i += 2) out.push_back(char(std::stoi(h.substr(i, 2), nullptr, 16)));
    return out;
}

// encode_event("ck:reg:ns:00ff", "ns:ns:func:m.f:args:ab:1s") and encode_event("ck:reg:ns:00ff", None).
const std::string kWithKey = unhex(
    "82a172ae636b3a7265673a6e733a30306666a16bb96e733a6e733a66756e633a6d2e663a617267733a61623a3173");
const std::string kWholeFunction = unhex("81a172ae636b3a7265673a6e733a30306666");

void test_reference_bytes(void **) {
    auto a = ev::decode(kWithKey);
    assert_true(a.has_value());
    assert_true(a->registry_id == "ck:reg:ns:00ff" && a->ns == "ns" && a->key == std::string("ns:ns:func:m.f:args:ab:1s"));
    assert_true(ev::encode("ck:reg:ns:00ff", std::string_view("ns:ns:func:m.f:args:ab:1s")) == kWithKey);
    auto b = ev::decode(kWholeFunction);
    assert_true(b.has_value() && !b->key && b->ns == "ns");
    assert_true(ev::encode("ck:reg:ns:00ff", std::nullopt) == kWholeFunction);
    // A 40-byte registry id takes str8; a key over 1024 bytes widens the event to the function.
    const std::string long_id = "ck:reg::" + std::string(40, 'b');
    assert_true(ev::encode(long_id, std::string_view(std::string(300, 'k'))).substr(0, 20) ==
                unhex("82a172d930636b3a7265673a3a62626262626262"));
    assert_true(ev::decode(ev::encode(long_id, std::string_view(std::string(2000, 'k'))))->key == std::nullopt);
}

void test_registry_hash(void **) {
    // blake3.blake3(x).hexdigest()[:16] (Python blake3 package).
    assert_true(ev::registry_hash("") == std::string("af1349b9f5f9a1a6"));
    assert_true(ev::registry_hash("m.f") == std::string("08f2f7a9d69d8e98"));
    assert_true(ev::registry_hash(std::string(64, 'x')) == std::string("84421676fe0d5a22"));
    assert_true(ev::registry_hash(std::string(65, 'y')) == std::string("4b3fe14f0b8530c5"));
    assert_true(ev::registry_hash(std::string(200, 'a')) == std::string("22dee5ebfe8248a5"));
    assert_false(ev::registry_hash(std::string(1025, 'a')).has_value());
    assert_true(ev::registry_id_of_key("ns:users:func:m.f:args:" + std::string(64, '0') + ":1s") ==
                std::string("ck:reg:users:08f2f7a9d69d8e98"));
    assert_true(ev::registry_id_of_key("func:m.f:args:00:1s") == std::string("ck:reg::08f2f7a9d69d8e98"));
    assert_false(ev::registry_id_of_key("user:42").has_value());
    assert_false(ev::registry_id_of_key("ns:x:func::args:").has_value());
}

void test_hostile_bytes(void **) {
    for (const std::string &bad : {std::string(), unhex("9101"), unhex("c0"), unhex("85"),
                                   unhex("81a172"),                      // truncated
                                   unhex("81a17201"),                    // not a str
                                   unhex("81a16ba178"),                  // no "r"
                                   unhex("81a172a478797a7a"),            // not ck:reg:
                                   kWithKey + "x",                       // trailing bytes
                                   std::string(5000, '\x81')})
        assert_false(ev::decode(bad).has_value());
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_bytes),
        cmocka_unit_test(test_registry_hash),
        cmocka_unit_test(test_hostile_bytes),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
