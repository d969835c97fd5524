// A private redis-server for tests and benchmarks: loopback only, a free
// port, its own temp dir, no persistence. Shared by tests/redis and
// bench/redis. Never talks to anything but 127.0.0.1 or its unix socket.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace cachekit::testing {

// A free loopback port, asked of the kernel (closed again at once: callers
// retry on the short race with other processes).
int free_port();

// Starts args (args[0] the program's path) as a child that dies with this
// process (PDEATHSIG); its pid. Throws std::runtime_error when fork fails.
pid_t spawn_tied(std::vector<std::string> args);

struct RedisServerOptions {
    std::string password;       // --requirepass when non-empty
    bool unix_socket = false;   // also listen on <dir>/redis.sock
    std::vector<std::string> extra_args;  // more "--name value" pairs (e.g. the cluster tests' --cluster-enabled yes)
};

class RedisServer {
public:
    // The redis-server binary, or "" when it is not installed.
    static std::string find_binary();
    // If redis-server is missing: print why and exit(77) (Meson's "skip").
    static void require_or_skip(const char *program);

    explicit RedisServer(RedisServerOptions options = {});
    ~RedisServer();
    RedisServer(const RedisServer &) = delete;
    RedisServer &operator=(const RedisServer &) = delete;

    int port() const { return port_; }
    const std::string &socket_path() const { return socket_path_; }
    const std::string &dir() const { return dir_; }
    // redis://[:password@]127.0.0.1:port[/db]
    std::string url(int db = 0) const;
    // unix:///dir/redis.sock?db=N (needs options.unix_socket)
    std::string unix_url(int db = 0) const;

    bool running() const { return pid_ > 0; }
    // Fork-safe: in a forked child (which may run exit handlers and global
    // destructors) the destructor and stop()/kill()/pause()/resume() do nothing.
    void pause();    // SIGSTOP
    void resume();   // SIGCONT
    void kill();     // SIGKILL now (a crash); the port is kept for restart()
    void stop();     // SIGCONT + SIGTERM, SIGKILL after 3 s
    void restart();  // stop if running, then start on the same port

private:
    void start(bool any_port);
    bool wait_ready(int timeout_ms);

    RedisServerOptions options_;
    std::string binary_;
    std::string dir_;
    std::string socket_path_;
    int port_ = 0;
    pid_t pid_ = -1;
    pid_t owner_ = -1;  // the process that started the server; a forked child never stops it
    bool paused_ = false;
};

}  // namespace cachekit::testing
