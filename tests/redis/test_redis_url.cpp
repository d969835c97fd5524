// parse_redis_url: a table of good and bad URLs. Needs no server.
#include <cstring>
#include <string>
#include <vector>

#include "redis_test_support.hpp"

namespace {

using cachekit::l2::parse_redis_url;
using cachekit::l2::RedisConfig;

struct Good {
    const char *url;
    const char *host;
    int port;
    const char *unix_path;
    const char *username;
    const char *password;
    int db;
};

const Good kGood[] = {
    {"redis://localhost", "localhost", 6379, "", "", "", 0},
    {"redis://127.0.0.1:6380/2", "127.0.0.1", 6380, "", "", "", 2},
    {"redis://cache.example.com:1/", "cache.example.com", 1, "", "", "", 0},
    {"REDIS://Cache-1.local:65535/15", "Cache-1.local", 65535, "", "", "", 15},
    {"redis://:p%40ss@host:7000/0", "host", 7000, "", "", "p@ss", 0},
    {"redis://alice:pa%3As%2Fs@host/5", "host", 6379, "", "alice", "pa:s/s", 5},
    {"redis://al%69ce@host", "host", 6379, "", "alice", "", 0},
    {"redis://u:p@ss@host", "host", 6379, "", "u", "p@ss", 0},  // the last '@' ends the userinfo
    {"redis://[::1]", "::1", 6379, "", "", "", 0},
    {"redis://[::1]:7001/3", "::1", 7001, "", "", "", 3},
    {"redis://[fe80::1%25eth0]:6390", "fe80::1%eth0", 6390, "", "", "", 0},
    {"redis://host/2147483647", "host", 6379, "", "", "", 2147483647},
    {"unix:///tmp/redis.sock", "", 0, "/tmp/redis.sock", "", "", 0},
    {"unix:///tmp/redis.sock?db=3", "", 0, "/tmp/redis.sock", "", "", 3},
    {"unix:///var/run/r%20s.sock?db=1&password=x%26y&username=bob", "", 0, "/var/run/r s.sock", "bob", "x&y", 1},
};

struct Bad {
    const char *url;
    const char *needle;  // part of the message
};

const Bad kBad[] = {
    {"rediss://localhost?ssl_cert_reqs=maybe", "ssl_cert_reqs \"maybe\" is not one of required, optional, none"},
    {"rediss://localhost?ssl_check_hostname=perhaps", "ssl_check_hostname \"perhaps\" is not true or false"},
    {"rediss://localhost?ssl_ca_certs=", "ssl_ca_certs is empty"},
    {"rediss://localhost?ssl_ca_certs=%2", "bad percent-escape"},
    {"rediss://localhost?ssl_ca_certs=a%00b", "NUL"},
    {"rediss://localhost?ssl_verify=1", "unknown query parameter \"ssl_verify\" (known: l1_coherence, ssl_cert_reqs"},
    {"rediss://localhost?ssl_keyfile=/k.pem", "ssl_keyfile needs ssl_certfile"},
    {"rediss://localhost?ssl_cert_reqs=none&ssl_check_hostname=true", "ssl_check_hostname=true needs"},
    {"rediss://", "empty host"},
    {"redis://localhost?ssl_ca_certs=/ca.pem", "\"ssl_ca_certs\" needs TLS: use rediss://"},
    {"", "empty URL"},
    {"localhost:6379", "no scheme"},
    {"http://localhost:6379", "unknown scheme \"http://\""},
    {"redis://", "empty host"},
    {"redis://:6379/0", "empty host"},
    {"redis://user:pw@/1", "empty host"},
    {"redis://host:", "empty port"},
    {"redis://host:0", "port \"0\""},
    {"redis://host:65536", "port \"65536\""},
    {"redis://host:63x9", "port \"63x9\""},
    {"redis://host:-1", "port \"-1\""},
    {"redis://host/-1", "database \"-1\""},
    {"redis://host/db1", "database \"db1\""},
    {"redis://host/2147483648", "database \"2147483648\""},
    {"redis://host/1/2", "single database number"},
    {"redis://host?db=1", "unknown query parameter \"db\" (known: l1_coherence"},
    {"redis://host/1?timeout=5", "unknown query parameter \"timeout\""},
    {"redis://host/1#frag", "fragments are not supported"},
    {"redis://host?l1_coherence=always", "l1_coherence \"always\" is not one of auto, tracking, pubsub, off"},
    {"unix:///tmp/x.sock?l1_coherence=", "l1_coherence \"\""},
    {"redis://::1:6379", "IPv6"},
    {"redis://[::1", "closing ']'"},
    {"redis://[]:6379", "empty host"},
    {"redis://[::1]x", "after the IPv6 host"},
    {"redis://[nothex]:1", "not an IPv6 address"},
    {"redis://ho$t", "not a valid host name"},
    {"redis://ho st", "space or control character"},
    {"redis://:%zz@host", "bad percent-escape in the password"},
    {"redis://:abc%4@host", "bad percent-escape"},
    {"unix://", "absolute socket path"},
    {"unix://relative.sock", "absolute socket path"},
    {"unix:///", "names no file"},
    {"unix:///tmp/x.sock?db=x", "database \"x\""},
    {"unix:///tmp/x.sock?db", "has no value"},
    {"unix:///tmp/x.sock?timeout=1", "unknown query parameter \"timeout\""},
};

void test_good_urls(void **) {
    for (const Good &g : kGood) {
        RedisConfig c;
        std::string message;
        int code = rt::error_of([&] { c = parse_redis_url(g.url); }, &message);
        if (code != 0) fail_msg("%s: unexpected error %d: %s", g.url, code, message.c_str());
        if (c.host != g.host || c.port != g.port || c.unix_path != g.unix_path || c.username != g.username ||
            c.password != g.password || c.db != g.db)
            fail_msg("%s: parsed as host=%s port=%d unix=%s user=%s password=%s db=%d", g.url, c.host.c_str(), c.port,
                     c.unix_path.c_str(), c.username.c_str(), c.password.c_str(), c.db);
    }
}

void test_bad_urls(void **) {
    for (const Bad &b : kBad) {
        std::string message;
        int code = rt::error_of([&] { parse_redis_url(b.url); }, &message);
        if (code != CACHEKIT_EINVAL) fail_msg("%s: expected EINVAL, got %d (%s)", b.url, code, message.c_str());
        if (message.find(b.needle) == std::string::npos)
            fail_msg("%s: message \"%s\" does not mention \"%s\"", b.url, message.c_str(), b.needle);
    }
}

// ?l1_coherence= on every scheme (docs/redis.md, "L1 coherence").
void test_coherence_parameter(void **) {
    using cachekit::l2::CoherenceMode;
    const struct {
        const char *url;
        CoherenceMode mode;
        int db;
    } rows[] = {
        {"redis://host", CoherenceMode::Off, 0},  // opt-in
        {"redis://host?l1_coherence=tracking", CoherenceMode::Tracking, 0},
        {"redis://host/3?l1_coherence=pubsub", CoherenceMode::Pubsub, 3},
        {"redis://host:7000/?l1_coherence=off", CoherenceMode::Off, 0},
        {"redis://host?l1_coherence=auto", CoherenceMode::Auto, 0},
        {"unix:///tmp/r.sock?db=2&l1_coherence=off", CoherenceMode::Off, 2},
        {"rediss://host/1?l1_coherence=tracking", CoherenceMode::Tracking, 1},  // the feed speaks TLS too
        {"rediss://host?ssl_cert_reqs=none&l1_coherence=pubsub", CoherenceMode::Pubsub, 0},
    };
    for (const auto &row : rows) {
        RedisConfig c = parse_redis_url(row.url);
        if (c.l1_coherence != row.mode || c.db != row.db) fail_msg("%s: mode %d db %d", row.url, int(c.l1_coherence), c.db);
    }
}

void test_tls_parameters(void **) {
    using cachekit::l2::RedisTls;
    RedisConfig plain = parse_redis_url("redis://h");
    assert_false(plain.tls.enabled);

    RedisConfig c = parse_redis_url("REDISS://u:pw@cache.example:6380/4");
    assert_true(c.tls.enabled);
    assert_string_equal(c.host.c_str(), "cache.example");
    assert_int_equal(c.port, 6380);
    assert_int_equal(c.db, 4);
    assert_string_equal(c.username.c_str(), "u");
    assert_true(c.tls.cert_reqs == RedisTls::CertReqs::Required);
    assert_true(c.tls.checks_hostname());
    assert_true(c.tls.ca_certs.empty() && c.tls.ca_path.empty());

    c = parse_redis_url("rediss://h?ssl_cert_reqs=optional&ssl_ca_certs=/etc/ca%20b.pem&ssl_ca_path=/etc/certs"
                        "&ssl_certfile=/c.pem&ssl_keyfile=/k.pem&l1_coherence=off");
    assert_true(c.tls.cert_reqs == RedisTls::CertReqs::Optional);
    assert_false(c.tls.checks_hostname());  // redis-py: only required checks by default
    assert_string_equal(c.tls.ca_certs.c_str(), "/etc/ca b.pem");
    assert_string_equal(c.tls.ca_path.c_str(), "/etc/certs");
    assert_string_equal(c.tls.certfile.c_str(), "/c.pem");
    assert_string_equal(c.tls.keyfile.c_str(), "/k.pem");

    c = parse_redis_url("rediss://h?ssl_check_hostname=false");
    assert_true(c.tls.cert_reqs == RedisTls::CertReqs::Required);
    assert_false(c.tls.checks_hostname());
    c = parse_redis_url("rediss://h?ssl_cert_reqs=optional&ssl_check_hostname=true");
    assert_true(c.tls.checks_hostname());
    c = parse_redis_url("rediss://h?ssl_cert_reqs=none");
    assert_false(c.tls.checks_hostname());
    c = parse_redis_url("rediss://[::1]:7000");
    assert_true(c.tls.enabled);
    assert_string_equal(c.host.c_str(), "::1");

    // The password never shows up in a TLS parameter's complaint.
    try {
        parse_redis_url("rediss://:hunter2@h?ssl_cert_reqs=bogus");
        fail_msg("no error");
    } catch (const cachekit::Error &e) {
        assert_null(std::strstr(e.what(), "hunter2"));
    }
}

void test_password_not_in_message(void **) {
    std::string message;
    assert_int_equal(rt::error_of([&] { parse_redis_url("redis://u:topsecret@host:99999"); }, &message),
                     CACHEKIT_EINVAL);
    assert_null(std::strstr(message.c_str(), "topsecret"));
}

void test_config_validation(void **) {
    cachekit::l2::RedisConfig config;
    config.pool_size = 0;
    assert_int_equal(rt::error_of([&] { cachekit::l2::open_redis(config); }), CACHEKIT_EINVAL);
    config = {};
    config.port = 0;
    assert_int_equal(rt::error_of([&] { cachekit::l2::open_redis(config); }), CACHEKIT_EINVAL);
    config = {};
    config.command_timeout = std::chrono::milliseconds(0);
    assert_int_equal(rt::error_of([&] { cachekit::l2::open_redis(config); }), CACHEKIT_EINVAL);
    config = {};
    config.db = -1;
    assert_int_equal(rt::error_of([&] { cachekit::l2::open_redis(config); }), CACHEKIT_EINVAL);
    // A valid config opens without connecting (lazy): nothing is listening on port 1.
    config = {};
    config.port = 1;
    assert_int_equal(rt::error_of([&] { cachekit::l2::open_redis(config); }), 0);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_urls),
        cmocka_unit_test(test_bad_urls),
        cmocka_unit_test(test_coherence_parameter),
        cmocka_unit_test(test_tls_parameters),
        cmocka_unit_test(test_password_not_in_message),
        cmocka_unit_test(test_config_validation),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
