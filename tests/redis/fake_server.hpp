// A fake Redis server on 127.0.0.1 (a free port) for hostile-reply tests:
// it accepts connections and runs handler(fd, index) for each on its own
// thread (index counts connections from 0). The destructor stops it: it
// shuts every socket down, which ends any blocked read or write, and joins
// the threads. Never listens on anything but loopback. A forked child must
// leave with _exit (the object belongs to the parent).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace cachekit::testing {

class FakeServer {
public:
    using Handler = std::function<void(int fd, int index)>;

    explicit FakeServer(Handler handler) : handler_(std::move(handler)) {
        listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        if (listener_ < 0 || bind(listener_, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0 ||
            listen(listener_, 16) != 0 || getsockname(listener_, reinterpret_cast<sockaddr *>(&addr), &len) != 0)
            throw std::runtime_error("fake server: cannot listen on 127.0.0.1");
        port_ = ntohs(addr.sin_port);
        acceptor_ = std::thread([this] { accept_loop(); });
    }

    ~FakeServer() {
        stop_ = true;
        shutdown(listener_, SHUT_RDWR);
        acceptor_.join();
        {
            std::lock_guard<std::mutex> lock(mu_);
            for (int fd : fds_) shutdown(fd, SHUT_RDWR);
        }
        for (auto &t : threads_) t.join();
        for (int fd : fds_) close(fd);
        close(listener_);
    }
    FakeServer(const FakeServer &) = delete;
    FakeServer &operator=(const FakeServer &) = delete;

    int port() const { return port_; }
    std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
    bool stopping() const { return stop_; }

    // Handler helpers. Each returns false once the peer or the server is gone.
    bool read_some(int fd) const {
        char buf[4096];
        while (!stop_) {
            pollfd p{fd, POLLIN, 0};
            if (poll(&p, 1, 50) <= 0) continue;
            return recv(fd, buf, sizeof buf, 0) > 0;
        }
        return false;
    }
    static bool write_all(int fd, std::string_view bytes) {
        while (!bytes.empty()) {
            ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
            if (n <= 0) return false;
            bytes.remove_prefix(size_t(n));
        }
        return true;
    }
    bool pause(std::chrono::milliseconds ms) const {
        auto until = std::chrono::steady_clock::now() + ms;
        while (!stop_ && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        return !stop_;
    }

private:
    void accept_loop() {
        for (int index = 0; !stop_; ++index) {
            int fd = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
            if (fd < 0) return;
            std::lock_guard<std::mutex> lock(mu_);
            fds_.push_back(fd);
            threads_.emplace_back([this, fd, index] { handler_(fd, index); });
        }
    }

    Handler handler_;
    int listener_ = -1;
    int port_ = 0;
    std::atomic<bool> stop_{false};
    std::thread acceptor_;
    std::mutex mu_;
    std::vector<int> fds_;
    std::vector<std::thread> threads_;
};

}  // namespace cachekit::testing
