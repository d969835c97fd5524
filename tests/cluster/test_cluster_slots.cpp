// No server: key slots (CRC16 and hash tags) with known values, the
// redis-cluster:// URL parser, and the coherence mode refused with reads
// from replicas (pubsub: no order against a replica's apply).
#include <cstring>
#include <string>

#include "l2/cluster/cluster_slots.hpp"
#include "l2/cluster/redis_cluster_backend.hpp"
#include "util/error.hpp"

#include <csetjmp>
#include <cstdarg>
#include <cstddef>

extern "C" {
#include <cmocka.h>
}

namespace {

using namespace cachekit::l2;

int url_error(const std::string &url, std::string *message = nullptr) {
    try {
        parse_cluster_url(url);
    } catch (const cachekit::Error &e) {
        if (message) *message = e.what();
        return e.code();
    }
    return 0;
}

// Values as `CLUSTER KEYSLOT` answers them (Redis 7.0).
void test_known_slots(void **) {
    assert_int_equal(cluster::crc16("123456789"), 0x31C3);  // the XMODEM check value
    assert_int_equal(cluster::key_slot("foo"), 12182);
    assert_int_equal(cluster::key_slot("bar"), 5061);
    assert_int_equal(cluster::key_slot(""), 0);
    assert_int_equal(cluster::key_slot("{user1000}.following"), cluster::key_slot("{user1000}.followers"));
    assert_int_equal(cluster::key_slot("{user1000}.following"), cluster::key_slot("user1000"));
    assert_int_equal(cluster::key_slot("foo{}{bar}"), cluster::key_slot("foo{}{bar}"));
    // An empty tag hashes the whole key; only the first '{' counts.
    assert_true(cluster::hash_tag("foo{}{bar}") == "foo{}{bar}");
    assert_true(cluster::hash_tag("foo{{bar}}zap") == "{bar");
    assert_true(cluster::hash_tag("foo{bar}{zap}") == "bar");
    assert_true(cluster::hash_tag("x{") == "x{");
    assert_int_equal(cluster::key_slot("foo{{bar}}zap"), cluster::key_slot("{bar"));
    for (int i = 0; i < 1000; ++i) assert_true(cluster::key_slot("k" + std::to_string(i)) < cluster::kSlots);
}

// A key's stampede lock "<key>:lock" is stored in the key's own slot.
void test_lock_key_in_the_key_slot(void **) {
    assert_string_equal(cluster::lock_key("t:ns:users:func:f:args:ab:1x:lock").c_str(), "{t:ns:users:func:f:args:ab:1x}:lock");
    for (const char *key : {"foo", "user:1", "a{b", "x{"}) {
        const std::string name = cluster::lock_key(std::string(key) + ":lock");
        assert_int_equal(cluster::key_slot(name), cluster::key_slot(key));
    }
    // A key with its own tag keeps the name (same slot already); other names are left alone.
    assert_string_equal(cluster::lock_key("{u}x:lock").c_str(), "{u}x:lock");
    assert_int_equal(cluster::key_slot("{u}x:lock"), cluster::key_slot("{u}x"));
    assert_string_equal(cluster::lock_key("a}b:lock").c_str(), "a}b:lock");
    assert_string_equal(cluster::lock_key("plain").c_str(), "plain");
    assert_string_equal(cluster::lock_key(":lock").c_str(), ":lock");
}

void test_url(void **) {
    ClusterConfig c = parse_cluster_url("redis-cluster://127.0.0.1:7000");
    assert_int_equal(c.seeds.size(), 1);
    assert_string_equal(c.seeds[0].host.c_str(), "127.0.0.1");
    assert_int_equal(c.seeds[0].port, 7000);
    assert_false(c.read_from_replicas);

    c = parse_cluster_url("REDIS-CLUSTER://us%40r:p%3Ass@a.example:7000,b.example:7001,[::1]:7002/?read_from_replicas=yes&refresh_ms=250");
    assert_int_equal(c.seeds.size(), 3);
    assert_string_equal(c.node.username.c_str(), "us@r");
    assert_string_equal(c.node.password.c_str(), "p:ss");
    assert_string_equal(c.seeds[1].host.c_str(), "b.example");
    assert_string_equal(c.seeds[2].host.c_str(), "::1");
    assert_int_equal(c.seeds[2].port, 7002);
    assert_true(c.read_from_replicas);
    assert_int_equal(c.refresh_interval.count(), 250);
    // Default port.
    assert_int_equal(parse_cluster_url("redis-cluster://h").seeds[0].port, 6379);
    // L1 coherence: off unless asked for.
    assert_true(parse_cluster_url("redis-cluster://h:1").node.l1_coherence == CoherenceMode::Off);
    assert_true(parse_cluster_url("redis-cluster://h:1?l1_coherence=tracking").node.l1_coherence == CoherenceMode::Tracking);
    assert_true(parse_cluster_url("redis-cluster://h:1?refresh_ms=200&l1_coherence=auto").node.l1_coherence ==
                CoherenceMode::Auto);

    std::string message;
    assert_int_equal(url_error("redis-cluster://", &message), CACHEKIT_EINVAL);
    assert_int_equal(url_error("redis-cluster://a:1,,b:2"), CACHEKIT_EINVAL);
    assert_int_equal(url_error("redis-cluster://a:1/2"), CACHEKIT_EINVAL);
    assert_int_equal(url_error("redis-cluster://a:99999"), CACHEKIT_EINVAL);
    assert_int_equal(url_error("redis-cluster://a:1?read_from_replicas=maybe"), CACHEKIT_EINVAL);
    assert_int_equal(url_error("redis-cluster://a:1?refresh_ms=5"), CACHEKIT_EINVAL);
    assert_int_equal(url_error("redis-cluster://a:1?l1_coherence=always", &message), CACHEKIT_EINVAL);
    assert_non_null(std::strstr(message.c_str(), "auto, tracking, pubsub, off"));
    assert_int_equal(url_error("redis-cluster://a:1?nope=1", &message), CACHEKIT_EINVAL);
    assert_non_null(std::strstr(message.c_str(), "nope"));
    assert_int_equal(url_error("redis-cluster://u:secret@a:1?x=1", &message), CACHEKIT_EINVAL);
    assert_null(std::strstr(message.c_str(), "secret"));
    assert_int_equal(url_error("redis://a:1"), CACHEKIT_EINVAL);
}

// rediss-cluster:// takes rediss://'s ssl_* parameters, checked as there.
void test_tls_url(void **) {
    ClusterConfig c = parse_cluster_url("redis-cluster://a:1");
    assert_false(c.node.tls.enabled);
    c = parse_cluster_url("REDISS-CLUSTER://u:p@a:7000,[::1]:7001?ssl_ca_certs=/etc/ca%20dir/ca.pem&refresh_ms=200"
                          "&ssl_certfile=/c.crt&ssl_keyfile=/c.key&ssl_cert_reqs=optional");
    assert_true(c.node.tls.enabled);
    assert_int_equal(c.seeds.size(), 2);
    assert_string_equal(c.seeds[1].host.c_str(), "::1");
    assert_string_equal(c.node.password.c_str(), "p");
    assert_string_equal(c.node.tls.ca_certs.c_str(), "/etc/ca dir/ca.pem");
    assert_string_equal(c.node.tls.certfile.c_str(), "/c.crt");
    assert_string_equal(c.node.tls.keyfile.c_str(), "/c.key");
    assert_true(c.node.tls.cert_reqs == RedisTls::CertReqs::Optional);
    assert_false(c.node.tls.checks_hostname());
    assert_int_equal(c.refresh_interval.count(), 200);
    c = parse_cluster_url("rediss-cluster://a:1");
    assert_true(c.node.tls.cert_reqs == RedisTls::CertReqs::Required);
    assert_true(c.node.tls.checks_hostname());

    std::string message;
    assert_int_equal(url_error("rediss-cluster://a:1?ssl_cert_reqs=maybe", &message), CACHEKIT_EINVAL);
    assert_non_null(std::strstr(message.c_str(), "ssl_cert_reqs"));
    assert_non_null(std::strstr(message.c_str(), "Redis Cluster URL"));
    assert_int_equal(url_error("rediss-cluster://a:1?ssl_keyfile=/k", &message), CACHEKIT_EINVAL);
    assert_non_null(std::strstr(message.c_str(), "ssl_certfile"));
    assert_int_equal(url_error("rediss-cluster://a:1?ssl_nope=1", &message), CACHEKIT_EINVAL);
    assert_non_null(std::strstr(message.c_str(), "ssl_nope"));
    assert_int_equal(url_error("redis-cluster://a:1?ssl_ca_certs=/ca.pem", &message), CACHEKIT_EINVAL);
    assert_non_null(std::strstr(message.c_str(), "rediss-cluster://"));
    assert_true(parse_cluster_url("rediss-cluster://a:1?l1_coherence=tracking").node.l1_coherence ==
                CoherenceMode::Tracking);
}

// open_redis_cluster's code and message; 0 when it opened (nothing listens
// on port 1: the backend opens anyway and fails its calls).
int open_error(const std::string &url, std::string *message) {
    try {
        open_redis_cluster(parse_cluster_url(url));
    } catch (const cachekit::Error &e) {
        *message = e.what();
        return e.code();
    }
    return 0;
}

void test_replica_reads_refuse_pubsub_coherence(void **) {
    std::string message;
    assert_int_equal(open_error("redis-cluster://127.0.0.1:1?read_from_replicas=yes&l1_coherence=pubsub", &message),
                     CACHEKIT_EINVAL);
    assert_non_null(std::strstr(message.c_str(), "l1_coherence=pubsub"));
    assert_non_null(std::strstr(message.c_str(), "read_from_replicas=yes"));
    // Tracking, auto (which then never falls back to pub/sub) and reads from primaries open.
    assert_int_equal(open_error("redis-cluster://127.0.0.1:1?read_from_replicas=yes&l1_coherence=tracking", &message), 0);
    assert_int_equal(open_error("redis-cluster://127.0.0.1:1?read_from_replicas=yes&l1_coherence=auto", &message), 0);
    assert_int_equal(open_error("redis-cluster://127.0.0.1:1?l1_coherence=pubsub", &message), 0);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_slots),
        cmocka_unit_test(test_lock_key_in_the_key_slot),
        cmocka_unit_test(test_url),
        cmocka_unit_test(test_tls_url),
        cmocka_unit_test(test_replica_reads_refuse_pubsub_coherence),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
