#include "redis_server.hpp"

#include <arpa/inet.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace cachekit::testing {
namespace {

bool executable(const std::string &path) { return access(path.c_str(), X_OK) == 0; }

}  // namespace

pid_t spawn_tied(std::vector<std::string> args) {
    std::vector<char *> argv;
    for (auto &arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        // Die with the test process, whatever happens to it.
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);
        execv(argv[0], argv.data());
        _exit(127);
    }
    return pid;
}

int free_port() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) throw std::runtime_error("socket() failed");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0 ||
        getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len) != 0) {
        close(fd);
        throw std::runtime_error("cannot bind a loopback port");
    }
    int port = ntohs(addr.sin_port);
    close(fd);
    return port;
}

std::string RedisServer::find_binary() {
    if (const char *env = std::getenv("CACHEKIT_REDIS_SERVER"); env && *env && executable(env)) return env;
    if (const char *path = std::getenv("PATH")) {
        std::string dirs(path);
        size_t start = 0;
        while (start <= dirs.size()) {
            size_t end = dirs.find(':', start);
            if (end == std::string::npos) end = dirs.size();
            std::string candidate = dirs.substr(start, end - start) + "/redis-server";
            if (end > start && executable(candidate)) return candidate;
            start = end + 1;
        }
    }
    for (const char *candidate : {"/usr/bin/redis-server", "/usr/local/bin/redis-server", "/usr/sbin/redis-server"})
        if (executable(candidate)) return candidate;
    return "";
}

void RedisServer::require_or_skip(const char *program) {
    if (find_binary().empty()) {
        std::printf("%s: redis-server is not installed; skipping (install redis-server to run this suite)\n", program);
        std::fflush(stdout);
        std::exit(77);
    }
}

RedisServer::RedisServer(RedisServerOptions options) : options_(std::move(options)) {
    owner_ = getpid();
    binary_ = find_binary();
    if (binary_.empty()) throw std::runtime_error("redis-server is not installed");
    char tmpl[] = "/tmp/cachekit-redis-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    if (options_.unix_socket) socket_path_ = dir_ + "/redis.sock";
    start(true);
}

RedisServer::~RedisServer() {
    if (getpid() != owner_) return;  // a forked child's copy
    stop();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
}

std::string RedisServer::url(int db) const {
    std::string out = "redis://";
    if (!options_.password.empty()) out += ":" + options_.password + "@";  // tests use URL-safe passwords
    out += "127.0.0.1:" + std::to_string(port_);
    if (db) out += "/" + std::to_string(db);
    return out;
}

std::string RedisServer::unix_url(int db) const {
    std::string out = "unix://" + socket_path_;
    if (db) out += "?db=" + std::to_string(db);
    return out;
}

void RedisServer::start(bool any_port) {
    for (int attempt = 0; attempt < 5; ++attempt) {
        if (any_port) port_ = free_port();
        std::vector<std::string> args = {binary_,
                                         "--port", std::to_string(port_),
                                         "--bind", "127.0.0.1",
                                         "--protected-mode", "yes",
                                         "--save", "",
                                         "--appendonly", "no",
                                         "--daemonize", "no",
                                         "--dir", dir_,
                                         "--logfile", dir_ + "/redis.log",
                                         "--loglevel", "warning"};
        if (!options_.password.empty()) {
            args.push_back("--requirepass");
            args.push_back(options_.password);
        }
        args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
        if (options_.unix_socket) {
            args.push_back("--unixsocket");
            args.push_back(socket_path_);
            args.push_back("--unixsocketperm");
            args.push_back("700");
        }
        pid_ = spawn_tied(std::move(args));
        paused_ = false;
        if (wait_ready(10000)) return;
        // Lost the port race, or the server would not start: try again.
        ::kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
        pid_ = -1;
        if (!any_port) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    throw std::runtime_error("redis-server did not start (see " + dir_ + "/redis.log)");
}

bool RedisServer::wait_ready(int timeout_ms) {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < until) {
        int status;
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            return false;  // exited (e.g. port taken)
        }
        timeval tv{0, 200000};
        redisContext *c = redisConnectWithTimeout("127.0.0.1", port_, tv);
        bool ok = false;
        if (c && !c->err) {
            redisSetTimeout(c, tv);
            auto *reply = static_cast<redisReply *>(
                options_.password.empty() ? redisCommand(c, "PING")
                                          : redisCommand(c, "AUTH %s", options_.password.c_str()));
            if (reply) {
                ok = reply->type != REDIS_REPLY_ERROR ||
                     std::strncmp(reply->str, "LOADING", 7) != 0;
                freeReplyObject(reply);
            }
        }
        if (c) redisFree(c);
        if (ok) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
}

void RedisServer::pause() {
    if (getpid() != owner_) return;
    if (pid_ > 0 && !paused_) {
        ::kill(pid_, SIGSTOP);
        paused_ = true;
    }
}

void RedisServer::resume() {
    if (getpid() != owner_) return;
    if (pid_ > 0 && paused_) {
        ::kill(pid_, SIGCONT);
        paused_ = false;
    }
}

void RedisServer::kill() {
    if (getpid() != owner_) return;
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
    paused_ = false;
}

void RedisServer::stop() {
    if (getpid() != owner_) return;
    if (pid_ <= 0) return;
    ::kill(pid_, SIGCONT);
    ::kill(pid_, SIGTERM);
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (std::chrono::steady_clock::now() < until) {
        if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
            pid_ = -1;
            paused_ = false;
            return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    kill();
}

void RedisServer::restart() {
    stop();
    start(false);
}

}  // namespace cachekit::testing
