// The packed batch calls (keys and values as one buffer plus count + 1
// offsets, for callers such as Go that cannot pass arrays of pointers), over
// the public C API: the same results as the pointer forms on the memory, file
// and Redis backends, and their argument checks.
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "redis_server.hpp"
// Last: it pulls in cmocka.h, with assertions that throw (no longjmp across
// the destructors below).
#include "../cache/cache_test_util.hpp"

using cachekit::testing::RedisServer;

namespace {

std::unique_ptr<RedisServer> g_redis;
const std::string kNulKey("pk:\0zero", 8);

// Items packed as one buffer plus count + 1 offsets.
struct Packed {
    std::string bytes;
    std::vector<size_t> offsets{0};
    void add(const std::string &item) {
        bytes += item;
        offsets.push_back(bytes.size());
    }
};

void check_roundtrip(const std::string &url) {
    ct::BackendHandle backend = ct::open_backend(url.c_str());
    cachekit_backend *b = backend.get();
    uint64_t deleted = 0;
    assert_int_equal(cachekit_backend_clear(b, &deleted, "", 0), CACHEKIT_OK);

    Packed keys, values;
    const std::vector<std::string> ks = {"pk:a", "pk:bb", "pk:c", kNulKey};
    const std::vector<std::string> vs = {"1", std::string(70000, 'x'), "", std::string("nul\0inside", 10)};
    for (size_t i = 0; i < ks.size(); ++i) {
        keys.add(ks[i]);
        values.add(vs[i]);
    }
    assert_int_equal(cachekit_backend_set_many_packed(b, keys.bytes.data(), keys.offsets.data(), values.bytes.data(),
                                                      values.offsets.data(), ks.size(), 0),
                     CACHEKIT_OK);

    // Read them back with a key that does not exist in the middle.
    Packed query;
    query.add("pk:a");
    query.add("pk:missing");
    query.add("pk:bb");
    query.add("pk:c");
    query.add(kNulKey);
    ct::Buf out;
    std::vector<size_t> value_offsets(6, 99);
    std::vector<int> results(5, 99);
    assert_int_equal(cachekit_backend_get_many_packed(b, out.get(), value_offsets.data(), results.data(),
                                                      query.bytes.data(), query.offsets.data(), 5),
                     CACHEKIT_OK);
    const std::vector<int> want_rc = {CACHEKIT_OK, CACHEKIT_ENOTFOUND, CACHEKIT_OK, CACHEKIT_OK, CACHEKIT_OK};
    const std::vector<std::string> want = {"1", "", std::string(70000, 'x'), "", std::string("nul\0inside", 10)};
    assert_int_equal(value_offsets[0], 0);
    for (size_t i = 0; i < 5; ++i) {
        assert_int_equal(results[i], want_rc[i]);
        const std::string got(out.b.ptr + value_offsets[i], value_offsets[i + 1] - value_offsets[i]);
        assert_true(got == want[i]);
    }
    assert_int_equal(value_offsets[5], out.b.size);

    // The pointer form agrees.
    const void *kp[2] = {"pk:a", "pk:bb"};
    const size_t kl[2] = {4, 5};
    cachekit_buf outs[2] = {CACHEKIT_BUF_INIT, CACHEKIT_BUF_INIT};
    int rc2[2] = {0, 0};
    assert_int_equal(cachekit_backend_get_many(b, outs, rc2, kp, kl, 2), CACHEKIT_OK);
    assert_int_equal(outs[1].size, 70000);
    cachekit_buf_dispose(&outs[0]);
    cachekit_buf_dispose(&outs[1]);

    // count 0: nothing read, one offset written.
    value_offsets[0] = 7;
    assert_int_equal(cachekit_backend_get_many_packed(b, out.get(), value_offsets.data(), nullptr, nullptr,
                                                      query.offsets.data(), 0),
                     CACHEKIT_OK);
    assert_int_equal(value_offsets[0], 0);
    assert_int_equal(out.b.size, 0);
}

void check_arguments(const std::string &url) {
    ct::BackendHandle backend = ct::open_backend(url.c_str());
    cachekit_backend *b = backend.get();
    ct::Buf out;
    size_t voff[3];
    int results[2];
    const char keys[] = "ab";
    const size_t decreasing[3] = {0, 2, 1};
    cachekit_error err = CACHEKIT_ERROR_INIT;
    assert_int_equal(cachekit_backend_get_many_packed_ex(b, out.get(), voff, results, keys, decreasing, 2, &err),
                     CACHEKIT_EINVAL);
    assert_non_null(std::strstr(err.message, "offsets decrease"));
    const size_t empty_key[3] = {0, 0, 2};
    assert_int_equal(cachekit_backend_get_many_packed_ex(b, out.get(), voff, results, keys, empty_key, 2, &err),
                     CACHEKIT_EINVAL);
    assert_non_null(std::strstr(err.message, "empty"));
    assert_int_equal(cachekit_backend_get_many_packed(b, out.get(), voff, results, keys, nullptr, 2), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_get_many_packed(b, nullptr, voff, results, keys, decreasing, 2),
                     CACHEKIT_EINVAL);
    const size_t ok[3] = {0, 1, 2};
    const size_t values_off[3] = {0, 1, 1};
    assert_int_equal(cachekit_backend_set_many_packed(b, keys, ok, nullptr, values_off, 2, 0), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_set_many_packed(b, keys, ok, "v", nullptr, 2, 0), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_set_many_packed(b, keys, ok, "v", values_off, 2, -1.0), CACHEKIT_EINVAL);
    assert_int_equal(cachekit_backend_set_many_packed(b, keys, ok, "v", values_off, 2, 10.0), CACHEKIT_OK);
    assert_int_equal(cachekit_backend_get_many_packed(b, out.get(), voff, results, keys, ok, 2), CACHEKIT_OK);
    assert_int_equal(results[0], CACHEKIT_OK);
    assert_int_equal(results[1], CACHEKIT_OK);
    assert_int_equal(voff[1], 1);
    assert_int_equal(voff[2], 1);
}

void test_memory(void **) {
    check_roundtrip("memory://");
    check_arguments("memory://");
}

void test_file(void **) {
    ct::TempDir dir("packed");
    check_roundtrip("file://" + dir.path());
    check_arguments("file://" + dir.path());
}

void test_redis(void **) {
    if (!g_redis) skip();
    check_roundtrip(g_redis->url());
    check_arguments(g_redis->url(1));
}

}  // namespace

int main() {
    if (!RedisServer::find_binary().empty()) g_redis = std::make_unique<RedisServer>();
    else std::fprintf(stderr, "redis-server not installed: the Redis variant is skipped\n");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory),
        cmocka_unit_test(test_file),
        cmocka_unit_test(test_redis),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
