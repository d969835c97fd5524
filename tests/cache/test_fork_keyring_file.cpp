// fork() while another thread works a keyring and a file backend: the
// keyring's tenant table and the file backend's estimate lock are fork
// participants, so a child never blocks on a lock a parent thread held at
// the fork (a keyring reader or inserter, a file write or eviction). A busy
// thread derives keys for new tenants and fills a small file backend (every
// write past 90 % evicts) while the main thread forks, round after round;
// each child adds a tenant, seals and opens, and writes and reads the
// backend. Timing decides which lock a fork meets; alarm() turns a hang into
// a failure.
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "cache_test_util.hpp"
#include "../redis/bounded_child.hpp"

namespace {

constexpr unsigned kChildAlarmSeconds = 10;
constexpr int kRounds = 24;
constexpr int kChildWriteAttempts = 20;
const char *const kMasterHex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

struct Fixture {
    std::string dir;
    cachekit_keyring *keyring = nullptr;
    cachekit_backend *backend = nullptr;

    Fixture() {
        char tmpl[] = "/tmp/cachekit-fork-file-XXXXXX";
        if (!mkdtemp(tmpl)) fail_msg("mkdtemp failed");
        dir = tmpl;
        CT_OK(cachekit_keyring_new(&keyring, kMasterHex, nullptr));
        cachekit_backend_options o = CACHEKIT_BACKEND_OPTIONS_INIT;
        o.file_max_entries = 64;  // small: the busy thread's writes keep evicting
        o.fail_closed = 1;
        const std::string url = "file://" + dir;
        CT_OK(cachekit_backend_open(&backend, url.c_str(), &o));
    }
    ~Fixture() {
        cachekit_backend_free(backend);
        cachekit_keyring_free(keyring);
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }
};

bool fingerprint_of(const cachekit_keyring *kr, const std::string &tenant) {
    unsigned char fp[CACHEKIT_FINGERPRINT_SIZE];
    return cachekit_keyring_fingerprint(kr, fp, tenant.c_str()) == CACHEKIT_OK;
}

int child_uses_both(const Fixture &f) {
    alarm(kChildAlarmSeconds);
    if (!fingerprint_of(f.keyring, "a tenant of the child")) return 2;
    const std::string plain = "child's secret", key = "child:key";
    cachekit_buf sealed = CACHEKIT_BUF_INIT, opened = CACHEKIT_BUF_INIT;
    int status = 0;
    if (cachekit_keyring_encrypt(f.keyring, &sealed, "a tenant of the child", key.data(), key.size(), plain.data(),
                                 plain.size()) != CACHEKIT_OK)
        status = 3;
    else if (cachekit_keyring_decrypt(f.keyring, &opened, nullptr, "a tenant of the child", nullptr, key.data(),
                                      key.size(), sealed.ptr, sealed.size) != CACHEKIT_OK ||
             std::string(reinterpret_cast<const char *>(opened.ptr), opened.size) != plain)
        status = 4;
    cachekit_buf_dispose(&sealed);
    cachekit_buf_dispose(&opened);
    if (status) return status;
    // The parent's busy thread keeps evicting from the same directory (the
    // oldest by a coarse mtime), so it may remove the child's fresh entry
    // between the write and the read: that miss is legitimate. A wrong value
    // or any other error is not; nor is never reading the value back.
    const std::string value = ct::mp_str("child's value");
    for (int attempt = 0; attempt < kChildWriteAttempts; ++attempt) {
        if (cachekit_backend_set(f.backend, key.data(), key.size(), value.data(), value.size(), 0) != CACHEKIT_OK)
            return 5;
        cachekit_buf got = CACHEKIT_BUF_INIT;
        const int rc = cachekit_backend_get(f.backend, &got, key.data(), key.size());
        const bool same = rc == CACHEKIT_OK && std::string(reinterpret_cast<const char *>(got.ptr), got.size) == value;
        cachekit_buf_dispose(&got);
        if (same) return 0;
        if (rc != CACHEKIT_ENOTFOUND) return 6;
    }
    return 7;
}

void test_children_of_a_busy_parent_use_the_keyring_and_file_backend(void **) {
#if defined(__SANITIZE_THREAD__)
    skip();  // TSan does not support threads in a child of a threaded process
#elif defined(__SANITIZE_ADDRESS__)
    skip();  // the busy thread allocates: GCC's ASan allocator is not locked around fork()
#endif
    Fixture f;
    std::atomic<bool> stop{false};
    std::thread busy([&] {
        const std::string value = ct::mp_str("busy");
        for (unsigned i = 0; !stop.load(std::memory_order_relaxed); ++i) {
            fingerprint_of(f.keyring, "tenant-" + std::to_string(i));  // a new tenant: an insert
            const std::string key = "busy:" + std::to_string(i % 512);
            cachekit_backend_set(f.backend, key.data(), key.size(), value.data(), value.size(), 0);
        }
    });
    int status = 0;
    const int bad_round = cachekit::testing::first_failed_round(
        kRounds, [](int) { std::this_thread::sleep_for(std::chrono::milliseconds(2)); },
        [&] { return child_uses_both(f); }, &status);
    stop = true;
    busy.join();
    if (bad_round >= 0)
        fail_msg("round %d: %s", bad_round, cachekit::testing::describe_child_status(status).c_str());
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_children_of_a_busy_parent_use_the_keyring_and_file_backend),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
