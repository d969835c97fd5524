// Private Redis Sentinels for tests: `redis-server <conf> --sentinel` (the
// redis-sentinel program is the same binary) on a free loopback port, each
// with its own writable config file (Sentinel rewrites it) in a temp dir,
// monitoring master "m" on 127.0.0.1. Stopped by the destructor; they die
// with the test process whatever happens (PR_SET_PDEATHSIG).
#pragma once

#include <hiredis/hiredis.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "redis_server.hpp"

namespace cachekit::testing {

class SentinelProcess {
public:
    // `extra`: more config lines (TLS settings); quorum: for `sentinel monitor`.
    SentinelProcess(const std::string &dir, int master_port, int quorum = 2, const std::string &extra = "") {
        const std::string binary = RedisServer::find_binary();
        if (binary.empty()) throw std::runtime_error("redis-server is not installed");
        for (int attempt = 0; attempt < 5 && pid_ < 0; ++attempt) {
            port_ = free_port();
            const std::string conf = dir + "/sentinel-" + std::to_string(port_) + ".conf";
            std::ofstream(conf) << "port " << port_ << "\nbind 127.0.0.1\ndaemonize no\ndir " << dir
                                << "\nlogfile " << dir << "/sentinel-" << port_ << ".log\n"
                                << extra << "sentinel monitor m 127.0.0.1 " << master_port << " " << quorum
                                << "\n"
                                << "sentinel down-after-milliseconds m 1000\n"
                                << "sentinel failover-timeout m 3000\n";
            pid_ = spawn_tied({binary, conf, "--sentinel"});
            if (!wait_ready()) stop();  // lost the port race: again
        }
        if (pid_ < 0) throw std::runtime_error("redis-server --sentinel did not start (see " + dir + ")");
    }
    ~SentinelProcess() { stop(); }
    SentinelProcess(const SentinelProcess &) = delete;
    SentinelProcess &operator=(const SentinelProcess &) = delete;

    int port() const { return port_; }

    void stop() {
        if (pid_ <= 0) return;
        ::kill(pid_, SIGTERM);
        for (int i = 0; i < 300; ++i) {
            if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
                pid_ = -1;
                return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        ::kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
        pid_ = -1;
    }

    // A field of SENTINEL MASTER m ("" when not answered).
    std::string master_field(const std::string &field) const {
        std::string out;
        timeval tv{0, 500000};
        redisContext *c = redisConnectWithTimeout("127.0.0.1", port_, tv);
        if (c != nullptr && c->err == 0) {
            redisSetTimeout(c, tv);
            auto *r = static_cast<redisReply *>(redisCommand(c, "SENTINEL MASTER m"));
            if (r != nullptr && r->type == REDIS_REPLY_ARRAY)
                for (size_t i = 0; i + 1 < r->elements; i += 2)
                    if (r->element[i]->str != nullptr && field == r->element[i]->str && r->element[i + 1]->str)
                        out = r->element[i + 1]->str;
            if (r != nullptr) freeReplyObject(r);
        }
        if (c != nullptr) redisFree(c);
        return out;
    }

private:
    bool wait_ready() {
        for (int i = 0; i < 500; ++i) {
            int status;
            if (waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = -1;
                return false;
            }
            timeval tv{0, 200000};
            redisContext *c = redisConnectWithTimeout("127.0.0.1", port_, tv);
            bool ok = false;
            if (c != nullptr && c->err == 0) {
                redisSetTimeout(c, tv);
                auto *r = static_cast<redisReply *>(redisCommand(c, "PING"));
                ok = r != nullptr && r->type == REDIS_REPLY_STATUS;
                if (r != nullptr) freeReplyObject(r);
            }
            if (c != nullptr) redisFree(c);
            if (ok) return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return false;
    }

    int port_ = 0;
    pid_t pid_ = -1;
};

}  // namespace cachekit::testing
