// TLS through cachekit_backend_options' tls_* fields (the public C API, no
// URL parameters): a redis:// URL made TLS by the fields, a wrong CA, mutual
// TLS, the URL's ssl_* winning over a field, an old struct_size that ends
// before the fields, a cache's backend options, and the refusals (non-Redis
// URLs, bad values, bad files). Private TLS redis-servers, certificates made
// per run (tls_certs.hpp).
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>

#include "cachekit/cachekit.h"
#include "tls_certs.hpp"
// Last: its fail() macro.
#include "../l1/cmocka_cpp.hpp"

namespace {

using cachekit::testing::TlsServer;

cachekit::testing::TlsServers servers;  // tls_certs.hpp: main, mutual, wrong_name
std::string &dir = servers.dir;         // certificates
TlsServer &main_server = servers.main;  // password s3cret, cert for 127.0.0.1 and localhost
TlsServer &mutual_server = servers.mutual;
TlsServer &wrong_name = servers.wrong_name;

std::string plain_url(const TlsServer &s, const std::string &userinfo = ":s3cret@") {
    return "redis://" + userinfo + "127.0.0.1:" + std::to_string(s.tls_port);
}
std::string file(const char *name) { return dir + "/" + name; }

int setup(void **) { return servers.start() ? 0 : -1; }

int teardown(void **) {
    servers.stop();
    return 0;
}

// Errors are returned (not degraded to misses) and no reconnect backoff hides one.
cachekit_backend_options base_options() {
    cachekit_backend_options o = CACHEKIT_BACKEND_OPTIONS_INIT;
    o.fail_closed = 1;
    o.breaker_disabled = 1;
    o.connect_timeout_ms = 3000;
    o.command_timeout_ms = 5000;
    return o;
}

struct Opened {
    int rc = 0;
    std::string message;
    cachekit_backend *backend = nullptr;
    ~Opened() { cachekit_backend_free(backend); }
};

void open(Opened &out, const std::string &url, const cachekit_backend_options &o) {
    cachekit_error err = CACHEKIT_ERROR_INIT;
    out.rc = cachekit_backend_open_ex(&out.backend, url.c_str(), &o, &err);
    out.message = err.message;
}

// A set and a get back; the code of the first failure, with its message.
int round_trip(cachekit_backend *b, std::string *message = nullptr) {
    cachekit_error err = CACHEKIT_ERROR_INIT;
    int rc = cachekit_backend_set_ex(b, "tls-k", 6, "v1", 2, 0, &err);
    if (rc == CACHEKIT_OK) {
        cachekit_buf out = CACHEKIT_BUF_INIT;
        rc = cachekit_backend_get_ex(b, &out, "tls-k", 6, &err);
        if (rc == CACHEKIT_OK && (out.size != 2 || std::memcmp(out.ptr, "v1", 2) != 0)) rc = -1000;
        cachekit_buf_dispose(&out);
    }
    if (message) *message = err.message;
    return rc;
}

bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

void test_fields_make_redis_url_tls(void **) {
    // The options' strings are copied at open: the connect (lazy, at the first
    // call) must not read this buffer, overwritten before it.
    std::string ca = file("ca.crt");
    cachekit_backend_options o = base_options();
    o.tls = 1;
    o.tls_ca_certs = ca.c_str();
    Opened b;
    open(b, plain_url(main_server), o);
    assert_int_equal(b.rc, CACHEKIT_OK);
    ca.assign(ca.size(), 'x');
    std::string message;
    assert_int_equal(round_trip(b.backend, &message), CACHEKIT_OK);

    // The same server's TLS port without TLS: no Redis reply, an error.
    cachekit_backend_options plain = base_options();
    plain.command_timeout_ms = 1000;
    Opened p;
    open(p, plain_url(main_server), plain);
    assert_int_equal(p.rc, CACHEKIT_OK);
    assert_int_not_equal(round_trip(p.backend), CACHEKIT_OK);
}

void test_wrong_ca_field(void **) {
    const std::string other = file("other-ca.crt");
    cachekit_backend_options o = base_options();
    o.tls = 1;
    o.tls_ca_certs = other.c_str();
    Opened b;
    open(b, plain_url(main_server), o);
    assert_int_equal(b.rc, CACHEKIT_OK);
    std::string message;
    assert_int_equal(round_trip(b.backend, &message), CACHEKIT_EBACKEND);
    assert_true(contains(message, "certificate verify failed"));
    assert_false(contains(message, "s3cret"));
}

void test_client_cert_fields(void **) {
    const std::string ca = file("ca.crt"), crt = file("client.crt"), key = file("client.key");
    cachekit_backend_options o = base_options();
    o.tls = 1;
    o.tls_ca_certs = ca.c_str();
    Opened anonymous;
    open(anonymous, plain_url(mutual_server, ""), o);
    assert_int_equal(anonymous.rc, CACHEKIT_OK);
    assert_int_equal(round_trip(anonymous.backend), CACHEKIT_EBACKEND);

    o.tls_certfile = crt.c_str();
    o.tls_keyfile = key.c_str();
    Opened client;
    open(client, plain_url(mutual_server, ""), o);
    assert_int_equal(client.rc, CACHEKIT_OK);
    assert_int_equal(round_trip(client.backend), CACHEKIT_OK);
}

void test_hostname_and_cert_reqs_fields(void **) {
    const std::string ca = file("ca.crt");
    cachekit_backend_options o = base_options();
    o.tls = 1;
    o.tls_ca_certs = ca.c_str();
    Opened strict;
    open(strict, plain_url(wrong_name, ""), o);
    std::string message;
    assert_int_equal(round_trip(strict.backend, &message), CACHEKIT_EBACKEND);
    assert_true(contains(message, "mismatch"));

    o.tls_check_hostname = CACHEKIT_TLS_CHECK_HOSTNAME_NO;
    Opened loose;
    open(loose, plain_url(wrong_name, ""), o);
    assert_int_equal(round_trip(loose.backend), CACHEKIT_OK);

    // No CA at all: the system's roots do not know ours, unless nothing is checked.
    cachekit_backend_options none = base_options();
    none.tls = 1;
    none.tls_cert_reqs = CACHEKIT_TLS_CERT_NONE;
    Opened any;
    open(any, plain_url(wrong_name, ""), none);
    assert_int_equal(round_trip(any.backend), CACHEKIT_OK);
}

// As in redis-py's from_url(url, **kwargs): the URL's ssl_* parameter wins.
void test_url_param_wins(void **) {
    const std::string other = file("other-ca.crt");
    cachekit_backend_options o = base_options();
    o.tls_ca_certs = other.c_str();
    Opened b;
    open(b, "rediss://:s3cret@127.0.0.1:" + std::to_string(main_server.tls_port) + "?ssl_ca_certs=" + file("ca.crt"),
         o);
    assert_int_equal(b.rc, CACHEKIT_OK);
    assert_int_equal(round_trip(b.backend), CACHEKIT_OK);

    // A field the URL does not set still applies to rediss://.
    const std::string ca = file("ca.crt");
    cachekit_backend_options f = base_options();
    f.tls_ca_certs = ca.c_str();
    Opened by_field;
    open(by_field, "rediss://:s3cret@127.0.0.1:" + std::to_string(main_server.tls_port), f);
    assert_int_equal(round_trip(by_field.backend), CACHEKIT_OK);
}

// A caller built against the header before the tls_* fields: whatever lies
// past its struct_size is not read, so the plain port answers in clear.
void test_old_struct_size_ignores_fields(void **) {
    const std::string bogus = file("no-such-ca.pem");
    cachekit_backend_options o = base_options();
    o.tls = 1;
    o.tls_cert_reqs = 77;  // would be EINVAL if read
    o.tls_ca_certs = bogus.c_str();
    o.struct_size = offsetof(cachekit_backend_options, tls);
    Opened b;
    open(b, "redis://:s3cret@127.0.0.1:" + std::to_string(main_server.server->port()), o);
    assert_int_equal(b.rc, CACHEKIT_OK);
    assert_int_equal(round_trip(b.backend), CACHEKIT_OK);

    // cachekit_backend_options_init for the old size writes nothing past it.
    unsigned char bytes[sizeof(cachekit_backend_options)];
    std::memset(bytes, 0xAB, sizeof bytes);
    const size_t old_size = offsetof(cachekit_backend_options, tls);
    assert_int_equal(cachekit_backend_options_init(reinterpret_cast<cachekit_backend_options *>(bytes), old_size),
                     CACHEKIT_OK);
    for (size_t i = old_size; i < sizeof bytes; ++i) assert_int_equal(bytes[i], 0xAB);
}

void expect_einval(const std::string &url, const cachekit_backend_options &o, const std::string &part) {
    Opened b;
    open(b, url, o);
    if (b.rc != CACHEKIT_EINVAL || !contains(b.message, part))
        std::fprintf(stderr, "%s: rc %d, message \"%s\", expected \"%s\"\n", url.c_str(), b.rc, b.message.c_str(),
                     part.c_str());
    assert_int_equal(b.rc, CACHEKIT_EINVAL);
    assert_true(contains(b.message, part));
    assert_null(b.backend);
}

void test_refused(void **) {
    const std::string ca = file("ca.crt");
    const std::string redis = plain_url(main_server);
    cachekit_backend_options on = base_options();
    on.tls = 1;
    expect_einval("file:///tmp/cachekit-tls-options-test", on, "file:");
    expect_einval("memory://", on, "memory:");
    expect_einval("unix:///tmp/redis.sock", on, "unix://");

    cachekit_backend_options ca_only = base_options();
    ca_only.tls_ca_certs = ca.c_str();
    expect_einval("memory://", ca_only, "memory:");
    expect_einval(redis, ca_only, "set tls = 1 or use rediss://");  // never silently in clear
    expect_einval("redis-cluster://127.0.0.1:7000", ca_only, "set tls = 1 or use rediss-cluster://");

    cachekit_backend_options bad = base_options();
    bad.tls = 2;
    expect_einval(redis, bad, "opts->tls");
    bad = base_options();
    bad.tls = 1;
    bad.tls_cert_reqs = 3;
    expect_einval(redis, bad, "tls_cert_reqs");
    bad.tls_cert_reqs = CACHEKIT_TLS_CERT_REQUIRED;
    bad.tls_check_hostname = 2;
    expect_einval(redis, bad, "tls_check_hostname");
    bad.tls_check_hostname = CACHEKIT_TLS_CHECK_HOSTNAME_YES;
    bad.tls_cert_reqs = CACHEKIT_TLS_CERT_NONE;
    expect_einval(redis, bad, "ssl_check_hostname=true needs");

    const std::string missing = file("no-such-ca.pem"), key = file("client.key");
    cachekit_backend_options files = base_options();
    files.tls = 1;
    files.tls_ca_certs = missing.c_str();
    expect_einval(redis, files, missing);
    files.tls_ca_certs = ca.c_str();
    files.tls_keyfile = key.c_str();
    expect_einval(redis, files, "ssl_keyfile needs ssl_certfile");

    // A plain redis:// URL with no TLS field set still opens.
    Opened fine;
    open(fine, redis, base_options());
    assert_int_equal(fine.rc, CACHEKIT_OK);
}

// A cache's backend_options carry the fields to the backend it opens.
void test_cache_backend_options(void **) {
    const std::string ca = file("ca.crt");
    const std::string url = plain_url(main_server);
    cachekit_backend_options bo = base_options();
    bo.tls = 1;
    bo.tls_ca_certs = ca.c_str();
    cachekit_cache_options co;
    assert_int_equal(cachekit_cache_options_init(&co, sizeof co), CACHEKIT_OK);
    co.backend_url = url.c_str();
    co.backend_options = &bo;
    co.l1 = 0;
    co.fail_closed = 1;
    cachekit_cache *cache = nullptr;
    cachekit_error err = CACHEKIT_ERROR_INIT;
    assert_int_equal(cachekit_cache_new_ex(&cache, &co, &err), CACHEKIT_OK);
    const char value[] = "\xa2hi";  // MessagePack "hi"
    assert_int_equal(cachekit_cache_put(cache, "tls", "k", 1, value, 3, 0), CACHEKIT_OK);
    cachekit_buf out = CACHEKIT_BUF_INIT;
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    assert_int_equal(cachekit_cache_get(cache, &out, &info, "tls", "k", 1), CACHEKIT_OK);
    assert_int_equal(out.size, 3);
    assert_memory_equal(out.ptr, value, 3);
    cachekit_buf_dispose(&out);
    cachekit_cache_free(cache);

    co.backend_url = "memory://";
    cache = nullptr;
    assert_int_equal(cachekit_cache_new_ex(&cache, &co, &err), CACHEKIT_EINVAL);
    assert_true(contains(err.message, "apply to Redis URLs only"));
    assert_null(cache);
}

}  // namespace

int main() {
    cachekit::testing::RedisServer::require_or_skip("test_redis_tls_options");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fields_make_redis_url_tls),
        cmocka_unit_test(test_wrong_ca_field),
        cmocka_unit_test(test_client_cert_fields),
        cmocka_unit_test(test_hostname_and_cert_reqs_fields),
        cmocka_unit_test(test_url_param_wins),
        cmocka_unit_test(test_old_struct_size_ignores_fields),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_cache_backend_options),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
