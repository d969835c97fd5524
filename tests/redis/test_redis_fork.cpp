// Fork safety of the Redis backend: a forked child never uses a connection
// it inherited (gunicorn/Celery prefork workers sharing a backend built at
// import time). It drops them without sending a byte and opens its own, and
// its pool works even when a parent thread had a connection checked out at
// fork time.
#include <hiredis/hiredis.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>

#include "fake_server.hpp"
#include "redis_test_support.hpp"

namespace {

using cachekit::Buffer;
using cachekit::testing::FakeServer;
using cachekit::testing::RedisServer;

// Reads `key` `rounds` times; the number of answers that were not `want` (errors count).
int wrong_reads(cachekit::l2::Backend &backend, const char *key, const char *want, int rounds) {
    int wrong = 0;
    Buffer out;
    for (int i = 0; i < rounds; ++i) {
        try {
            if (!backend.get(key, out.get(), rt::soon()) || out.view() != want) ++wrong;
        } catch (const cachekit::Error &e) {
            ++wrong;
        }
    }
    return wrong;
}

int exit_code(pid_t pid) {
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void test_parent_and_children_read_their_own_keys(void **) {
#if defined(__SANITIZE_ADDRESS__)
    // GCC 12's ASan allocator is not locked around fork(): a child forked while
    // the reader thread allocates can stop in it. The plain build runs this.
    skip();
#endif
    RedisServer server;
    auto backend = rt::open_url(server.url(), std::chrono::milliseconds(2000), 2);
    backend->set("user:1", "one", std::nullopt, rt::soon());
    backend->set("user:2", "two", std::nullopt, rt::soon());
    Buffer out;
    assert_true(backend->get("user:1", out.get(), rt::soon()));  // an idle connection to inherit

    // A parent thread keeps reading while children are forked under it, so
    // connections are idle, checked out or mid-reply at fork time.
    std::atomic<bool> stop{false};
    std::atomic<int> parent_wrong{0};
    std::thread reader([&] {
        while (!stop) parent_wrong += wrong_reads(*backend, "user:1", "one", 50);
    });
    for (int child = 0; child < 4; ++child) {
        pid_t pid = fork();
        if (pid == 0) {
            int wrong = wrong_reads(*backend, "user:2", "two", 1000);
            if (wrong) std::fprintf(stderr, "child: %d wrong reads\n", wrong);
            _exit(wrong == 0 ? 0 : 1);
        }
        parent_wrong += wrong_reads(*backend, "user:1", "one", 500);
        assert_int_equal(exit_code(pid), 0);
    }
    stop = true;
    reader.join();
    assert_int_equal(parent_wrong.load(), 0);
}

// The CLIENT LIST line of connection `id` ("" when gone), through a connection of its own.
std::string client_line(int port, const std::string &marker) {
    redisContext *admin = redisConnect("127.0.0.1", port);
    assert_true(admin != nullptr && admin->err == 0);
    auto *reply = static_cast<redisReply *>(redisCommand(admin, "CLIENT LIST"));
    assert_non_null(reply);
    std::string all(reply->str, reply->len), line;
    freeReplyObject(reply);
    redisFree(admin);
    size_t at = all.find(marker);
    if (at == std::string::npos) return "";
    size_t begin = all.rfind('\n', at);
    begin = begin == std::string::npos ? 0 : begin + 1;
    return all.substr(begin, all.find('\n', at) - begin);
}

std::string field(const std::string &line, const char *name) {
    const std::string key = std::string(" ") + name + "=";
    size_t at = (" " + line).find(key);
    if (at == std::string::npos) return "";
    size_t begin = at + key.size() - 1;
    return line.substr(begin, line.find(' ', begin) - begin);
}

void test_child_sends_nothing_on_the_inherited_connection(void **) {
    RedisServer server;
    auto backend = rt::open_url(server.url(), std::chrono::milliseconds(2000), 1);
    // The pool's one connection; its last command is EXISTS.
    assert_false(backend->exists("marker", rt::soon()));
    const std::string before = client_line(server.port(), "cmd=exists");
    assert_false(before.empty());
    const std::string id = field(before, "id");

    pid_t pid = fork();
    if (pid == 0) {
        Buffer out;
        bool ok = false;
        try {
            backend->set("from-child", "c", std::nullopt, rt::soon());
            ok = backend->get("from-child", out.get(), rt::soon()) && out.view() == "c";
        } catch (const cachekit::Error &e) {
            std::fprintf(stderr, "child: %s\n", e.what());
        }
        _exit(ok ? 0 : 1);
    }
    assert_int_equal(exit_code(pid), 0);

    // The parent's connection is still open and received nothing from the
    // child: its last command is still EXISTS (the child used a connection of its own).
    const std::string after = client_line(server.port(), "id=" + id + " ");
    print_message("parent's connection after the child: %s\n", after.c_str());
    assert_false(after.empty());
    assert_string_equal(field(after, "cmd").c_str(), "exists");
    // And it still works for the parent, in step.
    Buffer out;
    assert_true(backend->get("from-child", out.get(), rt::soon()));
    assert_true(out.view() == "c");
    assert_string_equal(field(client_line(server.port(), "id=" + id + " "), "cmd").c_str(), "get");
}

void test_child_pool_usable_when_a_parent_thread_held_the_connection(void **) {
    // Connection 0 never answers (a parent thread stays blocked on it);
    // later ones answer every request with "ok".
    FakeServer fake([&](int fd, int index) {
        while (fake.read_some(fd))
            if (index > 0 && !FakeServer::write_all(fd, "$2\r\nok\r\n")) return;
    });
    auto backend = rt::open_url(fake.url(), std::chrono::milliseconds(1500), 1);
    std::thread holder([&] {
        Buffer out;
        rt::error_of([&] { backend->get("k", out.get(), rt::soon()); });
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the holder is inside its read

    pid_t pid = fork();
    if (pid == 0) {
        // The pool of one is "full" with the parent thread's connection; the
        // child must not wait for it (it will never come back here).
        Buffer out;
        bool ok = false;
        try {
            ok = backend->get("k", out.get(), rt::Deadline::after(std::chrono::milliseconds(1000))) && out.view() == "ok";
        } catch (const cachekit::Error &e) {
            std::fprintf(stderr, "child: %s\n", e.what());
        }
        _exit(ok ? 0 : 1);
    }
    assert_int_equal(exit_code(pid), 0);
    holder.join();
}

}  // namespace

int main() {
    RedisServer::require_or_skip("test_redis_fork");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parent_and_children_read_their_own_keys),
        cmocka_unit_test(test_child_sends_nothing_on_the_inherited_connection),
        cmocka_unit_test(test_child_pool_usable_when_a_parent_thread_held_the_connection),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
