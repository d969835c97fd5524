/* Fork safety of keyring nonces (issue 12): a parent and three forked
 * children seal 10,000 messages each with one keyring created before the
 * fork, and each also creates a keyring after the fork and seals with it.
 * Every nonce (the first 12 bytes of each ciphertext) goes to the parent
 * through a pipe; all of them must be distinct. Public API only. */
#include <errno.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit_support.h"

#define CHILDREN 3
#define PROCESSES (CHILDREN + 1)
#define SEALS 10000
#define SEALS_NEW 100 /* with the keyring made after the fork */
#define PER_PROCESS (SEALS + SEALS_NEW)
#define NONCE CACHEKIT_NONCE_SIZE

static const char *const kKeyHex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

/* Seal `count` messages (each different) and append their nonces to out. */
static int seal_nonces(const cachekit_keyring *ring, int count, int process, uint8_t *out) {
    cachekit_buf ct = CACHEKIT_BUF_INIT;
    for (int i = 0; i < count; ++i) {
        char msg[64];
        int n = snprintf(msg, sizeof msg, "process %d message %d", process, i);
        if (cachekit_keyring_encrypt(ring, &ct, NULL, "aad", 3, msg, (size_t)n) != CACHEKIT_OK || ct.size < NONCE) {
            cachekit_buf_dispose(&ct);
            return -1;
        }
        memcpy(out + (size_t)i * NONCE, ct.ptr, NONCE);
    }
    cachekit_buf_dispose(&ct);
    return 0;
}

/* This process's share: the inherited keyring, then a new one. */
static int seal_share(const cachekit_keyring *inherited, int process, uint8_t *out) {
    if (seal_nonces(inherited, SEALS, process, out) != 0) return -1;
    cachekit_keyring *fresh = NULL;
    if (cachekit_keyring_new(&fresh, kKeyHex, NULL) != CACHEKIT_OK) return -1;
    int rc = seal_nonces(fresh, SEALS_NEW, process, out + (size_t)SEALS * NONCE);
    cachekit_keyring_free(fresh);
    return rc;
}

static int read_all(int fd, uint8_t *p, size_t n) {
    while (n > 0) {
        ssize_t got = read(fd, p, n);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return -1;
        p += got;
        n -= (size_t)got;
    }
    return 0;
}

static int write_all(int fd, const uint8_t *p, size_t n) {
    while (n > 0) {
        ssize_t put = write(fd, p, n);
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) return -1;
        p += put;
        n -= (size_t)put;
    }
    return 0;
}

static int compare_nonces(const void *a, const void *b) { return memcmp(a, b, NONCE); }

static void test_forked_processes_never_repeat_a_nonce(void **state) {
    (void)state;
    cachekit_keyring *ring = NULL;
    assert_ok(cachekit_keyring_new(&ring, kKeyHex, NULL));
    uint8_t *all = malloc((size_t)PROCESSES * PER_PROCESS * NONCE);
    assert_non_null(all);
    /* Sealed once before the fork, so the children inherit a live counter. */
    assert_int_equal(seal_nonces(ring, 1, 99, all), 0);

    int fds[CHILDREN];
    pid_t pids[CHILDREN];
    for (int c = 0; c < CHILDREN; ++c) {
        int p[2];
        assert_int_equal(pipe(p), 0);
        pids[c] = fork();
        assert_true(pids[c] >= 0);
        if (pids[c] == 0) {
            close(p[0]);
            uint8_t *mine = malloc((size_t)PER_PROCESS * NONCE);
            int ok = mine && seal_share(ring, c + 1, mine) == 0 &&
                     write_all(p[1], mine, (size_t)PER_PROCESS * NONCE) == 0;
            free(mine);
            _exit(ok ? 0 : 1);  /* never back into cmocka */
        }
        close(p[1]);
        fds[c] = p[0];
    }
    assert_int_equal(seal_share(ring, 0, all), 0);
    for (int c = 0; c < CHILDREN; ++c) {
        assert_int_equal(read_all(fds[c], all + (size_t)(c + 1) * PER_PROCESS * NONCE, (size_t)PER_PROCESS * NONCE), 0);
        close(fds[c]);
        int status = 0;
        assert_int_equal(waitpid(pids[c], &status, 0), pids[c]);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    const size_t total = (size_t)PROCESSES * PER_PROCESS;
    qsort(all, total, NONCE, compare_nonces);
    size_t repeats = 0;
    for (size_t i = 1; i < total; ++i) repeats += memcmp(all + (i - 1) * NONCE, all + i * NONCE, NONCE) == 0;
    if (repeats) print_error("%zu of %zu nonces repeat another process's\n", repeats, total);
    assert_int_equal(repeats, 0);
    free(all);
    cachekit_keyring_free(ring);
}

/* A child that forks again (a grandchild) also gets its own prefix. */
static void test_grandchild_gets_its_own_prefix(void **state) {
    (void)state;
    cachekit_keyring *ring = NULL;
    assert_ok(cachekit_keyring_new(&ring, kKeyHex, NULL));
    uint8_t mine[NONCE];
    assert_int_equal(seal_nonces(ring, 1, 0, mine), 0);
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        close(p[0]);
        uint8_t two[2 * NONCE];
        int ok = seal_nonces(ring, 1, 1, two) == 0;
        pid_t grandchild = ok ? fork() : -1;
        if (grandchild == 0) {
            ok = seal_nonces(ring, 1, 2, two + NONCE) == 0 && write_all(p[1], two + NONCE, NONCE) == 0;
            _exit(ok ? 0 : 1);
        }
        int status = 0;
        ok = ok && grandchild > 0 && waitpid(grandchild, &status, 0) == grandchild && WIFEXITED(status) &&
             WEXITSTATUS(status) == 0 && write_all(p[1], two, NONCE) == 0;
        _exit(ok ? 0 : 1);
    }
    close(p[1]);
    uint8_t theirs[2 * NONCE];
    assert_int_equal(read_all(p[0], theirs, sizeof theirs), 0);
    close(p[0]);
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* Three processes, three different 8-byte prefixes. */
    assert_memory_not_equal(mine, theirs, 8);
    assert_memory_not_equal(mine, theirs + NONCE, 8);
    assert_memory_not_equal(theirs, theirs + NONCE, 8);
    cachekit_keyring_free(ring);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forked_processes_never_repeat_a_nonce),
        cmocka_unit_test(test_grandchild_gets_its_own_prefix),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
