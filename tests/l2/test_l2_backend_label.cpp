// How log lines name a backend (l2/backend_label.hpp): the URL without the
// password (the user name stays) and without the query (unix:// may carry
// password= there); URLs without userinfo are unchanged.
#include <string>

#include "l2/backend_label.hpp"
#include "l2_test_support.hpp"  // cmocka, included last

namespace {

using cachekit::l2::backend_label;

void check(const char *url, const char *want) {
    const std::string got = backend_label(url);
    if (got != want) fail_msg("backend_label(%s) = %s, want %s", url, got.c_str(), want);
}

void test_labels(void **) {
    check("redis://127.0.0.1:6390", "redis://127.0.0.1:6390");
    check("redis://127.0.0.1:6390/2", "redis://127.0.0.1:6390/2");
    check("redis://:s3cret@127.0.0.1:6390/1", "redis://127.0.0.1:6390/1");
    check("redis://alice:s3cret@host:6379", "redis://alice@host:6379");
    check("redis://alice:p%40ss@word@host", "redis://alice@host");  // the last '@' ends the userinfo
    check("unix:///run/redis.sock?db=2&password=s3cret", "unix:///run/redis.sock");
    check("redis-cluster://:pw@a:7000,b:7001?l1_coherence=auto", "redis-cluster://a:7000,b:7001");
    check("file:///var/cache/ck", "file:///var/cache/ck");
    check("memory://", "memory://");
    check("", "");
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_labels)};
    return cmocka_run_group_tests_name("l2_backend_label", tests, nullptr, nullptr);
}
