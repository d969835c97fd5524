// decode-bounds.json: every untrusted MessagePack decode entry point must
// reject the hostile documents (with the error the rule names) and accept the
// legitimate ones.
#include "conformance_support.hpp"

#include <algorithm>

#include <csetjmp>
#include <cstdarg>
extern "C" {
#include <cmocka.h>
}

using namespace ckconf;

namespace {

const char *const kFile = "decode-bounds.json";
Json V;
Report R(kFile);

Bytes build_input(const Json &v, Checks &c) {
    Bytes input = construct_repeat(v.at("construction"));
    if (v.contains("input_len"))
        c.expect(input.size() == v["input_len"].get<size_t>(), "constructed input length != input_len");
    if (v.contains("input_hex")) {
        // Some input_hex fields are abbreviated with "..." for display.
        std::string h = v["input_hex"].get<std::string>();
        if (h.find("...") == std::string::npos) c.equal_hex(to_hex(input), h, "input_hex vs construction");
    }
    return input;
}

// A v2 container (method 0) whose value is `doc`: the container is sound, so
// only the value's bounded decode can reject it.
Bytes container_v2_around(const Bytes &doc) {
    Bytes c = {0xc1, 0x02, 0x93, 0x00};
    auto be = [&](uint64_t v, int n) {
        for (int i = n - 1; i >= 0; --i) c.push_back(static_cast<uint8_t>(v >> (8 * i)));
    };
    size_t n = doc.size();
    if (n <= 0x7f) c.push_back(static_cast<uint8_t>(n));
    else if (n <= 0xff) { c.push_back(0xcc); be(n, 1); }
    else if (n <= 0xffff) { c.push_back(0xcd); be(n, 2); }
    else { c.push_back(0xce); be(n, 4); }
    if (n <= 0xff) { c.push_back(0xc4); be(n, 1); }
    else if (n <= 0xffff) { c.push_back(0xc5); be(n, 2); }
    else { c.push_back(0xc6); be(n, 4); }
    c.insert(c.end(), doc.begin(), doc.end());
    return c;
}

void test_reject_vectors(void **state) {
    (void)state;
    int failures = run_category(R, V, "reject_vectors", [](const Json &v, Checks &c) {
        Bytes in = build_input(v, c);
        // The allowed codes: the union over the vector's tagged rules.
        std::vector<int> allowed;
        if (has_reject_reason(v, "depth")) allowed.insert(allowed.end(), {CACHEKIT_EDEPTH, CACHEKIT_EOVERCLAIM});
        if (has_reject_reason(v, "overclaim")) allowed.insert(allowed.end(), {CACHEKIT_EOVERCLAIM, CACHEKIT_ETRUNCATED});
        if (has_reject_reason(v, "incomplete")) allowed.push_back(CACHEKIT_ETRUNCATED);
        if (allowed.empty()) {
            c.add("vector has no known reject_reasons");
            return;
        }
        auto check_code = [&](int rc, const std::string &call) {
            if (rc == CACHEKIT_OK) {
                c.add(call + " accepted it");
                return;
            }
            if (std::find(allowed.begin(), allowed.end(), rc) == allowed.end())
                c.add(call + " rejected it with " + describe_rc(rc) + ", which its reject_reasons do not name");
        };
        int rc = cachekit_msgpack_check(in.data(), in.size(), 0);
        check_code(rc, "cachekit_msgpack_check(max_depth 0)");
        c.note(std::string("check: ") + cachekit_error_name(rc));
        check_code(cachekit_msgpack_check(in.data(), in.size(), CACHEKIT_MSGPACK_MAX_DEPTH),
                   "cachekit_msgpack_check(max_depth 1024)");
        check_code(cachekit_msgpack_check(in.data(), in.size(), CACHEKIT_MSGPACK_MIN_DEPTH),
                   "cachekit_msgpack_check(max_depth 32)");

        // Every other entry point that decodes untrusted MessagePack.
        Buf out, fmt, key, canon;
        for (int profile : {CACHEKIT_PROFILE_ARGS, CACHEKIT_PROFILE_VALUE, CACHEKIT_PROFILE_AUTO_ARGS})
            check_code(cachekit_msgpack_canonical(out.p(), in.data(), in.size(), profile),
                       "cachekit_msgpack_canonical(profile " + std::to_string(profile) + ")");
        check_code(cachekit_msgpack_to_json(out.p(), in.data(), in.size()), "cachekit_msgpack_to_json");
        c.rejects(cachekit_key_interop(key.p(), canon.p(), "users", "get_user", in.data(), in.size()),
                  "cachekit_key_interop(args)");
        c.rejects(cachekit_key_auto(key.p(), "test", "__main__", "f", in.data(), in.size(), 1, "std"),
                  "cachekit_key_auto(args)");
        // As a ByteStorage envelope the document must fail its bounded decode.
        rc = cachekit_envelope_unwrap(out.p(), fmt.p(), in.data(), in.size());
        c.code(rc, CACHEKIT_EDESERIALIZE, "cachekit_envelope_unwrap");
        // As the value inside a sound v2 container, and as a container body.
        Bytes container = container_v2_around(in);
        c.rejects(cachekit_container_v2_unwrap(out.p(), container.data(), container.size()),
                  "cachekit_container_v2_unwrap(value)");
        Bytes body(in.size() + 2);
        body[0] = 0xc1;
        body[1] = 0x02;
        std::copy(in.begin(), in.end(), body.begin() + 2);
        c.rejects(cachekit_container_v2_unwrap(out.p(), body.data(), body.size()),
                  "cachekit_container_v2_unwrap(body)");
    });
    assert_int_equal(failures, 0);
}

void test_accept_vectors(void **state) {
    (void)state;
    int failures = run_category(R, V, "accept_vectors", [](const Json &v, Checks &c) {
        Bytes in = build_input(v, c);
        c.ok(cachekit_msgpack_check(in.data(), in.size(), 0), "cachekit_msgpack_check(max_depth 0)");
        // The depth bound may not be tighter than 32: the floor accepts it.
        c.ok(cachekit_msgpack_check(in.data(), in.size(), CACHEKIT_MSGPACK_MIN_DEPTH),
             "cachekit_msgpack_check(max_depth 32)");
        Buf out, back;
        c.ok(cachekit_msgpack_to_json(out.p(), in.data(), in.size()), "cachekit_msgpack_to_json");
        c.ok(cachekit_msgpack_canonical(out.p(), in.data(), in.size(), CACHEKIT_PROFILE_VALUE),
             "cachekit_msgpack_canonical(VALUE)");
        Bytes container = container_v2_around(in);
        if (c.ok(cachekit_container_v2_unwrap(back.p(), container.data(), container.size()),
                 "cachekit_container_v2_unwrap(value)"))
            c.expect(back.bytes() == in, "v2 container did not return the document");
    });
    assert_int_equal(failures, 0);
}

}  // namespace

int main(void) {
    V = load_vectors(kFile);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reject_vectors),
        cmocka_unit_test(test_accept_vectors),
    };
    int rc = cmocka_run_group_tests_name("decode-bounds.json", tests, nullptr, nullptr);
    R.summary();
    return rc;
}
