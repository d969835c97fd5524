// decode-bounds.json, for what a verdict alone cannot show
// (requirement_coverage.json, IOP-24 and IOP-27 to IOP-31): every overclaim
// vector is truncated, so any decoder rejects it at the end of its input.
// Here the pre-decode guard must reject each reject vector with its own
// error (Overclaim, DepthExceeded; Truncated only for the incomplete ones),
// and a hostile document stored as a cache entry must read as a miss, or
// as Corrupt when the cache fails closed, never a crash.
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

// The guard's own codes for a vector's reasons; Truncated is the end of
// input, which a decoder without the guard would reach too.
std::vector<int> guard_codes(const Json &v) {
    std::vector<int> codes;
    if (has_reject_reason(v, "depth")) codes.push_back(CACHEKIT_EDEPTH);
    if (has_reject_reason(v, "overclaim")) codes.push_back(CACHEKIT_EOVERCLAIM);
    if (has_reject_reason(v, "incomplete")) codes.push_back(CACHEKIT_ETRUNCATED);
    return codes;
}

void test_reject_vectors_get_the_guards_own_error(void **) {
    int failures = run_category(R, V, "reject_vectors", [](const Json &v, Checks &c) {
        Bytes in = construct_repeat(v.at("construction"));
        const std::vector<int> want = guard_codes(v);
        for (uint32_t depth : {0u, uint32_t(CACHEKIT_MSGPACK_MIN_DEPTH), uint32_t(CACHEKIT_MSGPACK_MAX_DEPTH)}) {
            int rc = cachekit_msgpack_check(in.data(), in.size(), depth);
            if (std::find(want.begin(), want.end(), rc) == want.end())
                c.add("cachekit_msgpack_check(max_depth " + std::to_string(depth) + ") gave " + describe_rc(rc) +
                      ", not the guard's own error");
            else if (depth == 0)
                c.note(cachekit_error_name(rc));
        }
    });
    assert_int_equal(failures, 0);
}

// A cache over a memory backend of its own, reading interop entries.
struct InteropCache : MemoryCache {
    explicit InteropCache(bool fail_closed)
        : MemoryCache([&](cachekit_cache_options &o) {
              o.format = CACHEKIT_FORMAT_INTEROP;
              o.fail_closed = fail_closed ? CACHEKIT_ON : CACHEKIT_OFF;
          }) {
        assert_int_equal(rc(), CACHEKIT_OK);
    }
    void plant(const std::string &key, const Bytes &value) {
        assert_int_equal(cachekit_backend_set(backend(), key.data(), key.size(), value.data(), value.size(), 0.0),
                         CACHEKIT_OK);
    }
    int read(const std::string &key, Buf &out) {
        return cachekit_cache_get(cache(), out.p(), nullptr, "users", key.data(), key.size());
    }
};

const std::string kKey = "users:get_user:61598716255080080f6456eb065c2e51badfaa4320b0efe97469c29cffee8875";

// Fail closed on the read path (IOP-24): a refused entry is a miss (fail
// open) or Corrupt (fail closed); an accepted one is the value.
void test_a_stored_hostile_document_is_a_miss(void **) {
    int failures = run_category(R, V, "reject_vectors", [](const Json &v, Checks &c) {
        Bytes in = construct_repeat(v.at("construction"));
        InteropCache open(false), closed(true);
        open.plant(kKey, in);
        closed.plant(kKey, in);
        Buf out;
        c.code(open.read(kKey, out), CACHEKIT_ENOTFOUND, "fail-open cachekit_cache_get");
        c.code(closed.read(kKey, out), CACHEKIT_ECORRUPT, "fail-closed cachekit_cache_get");
    });
    failures += run_category(R, V, "accept_vectors", [](const Json &v, Checks &c) {
        Bytes in = construct_repeat(v.at("construction"));
        InteropCache cache(true);
        cache.plant(kKey, in);
        Buf out;
        if (c.ok(cache.read(kKey, out), "cachekit_cache_get"))
            c.expect(out.bytes() == in, "the cache returned other bytes than the stored document");
    });
    assert_int_equal(failures, 0);
}

}  // namespace

int main(void) {
    V = load_vectors(kFile);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reject_vectors_get_the_guards_own_error),
        cmocka_unit_test(test_a_stored_hostile_document_is_a_miss),
    };
    int rc = cmocka_run_group_tests_name("requirements: decode-bounds.json guards", tests, nullptr, nullptr);
    R.summary();
    return rc;
}
