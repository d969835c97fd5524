#include "l2/redis/feed_loop.hpp"

#include <poll.h>
#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <system_error>
#include <vector>

#include "util/fork_hooks.hpp"

namespace cachekit::l2::feed {

Loop::Loop() : pid_(fork_hooks::pid()) { thread_.start([this] { run(); }); }

Loop::~Loop() {
    if (pid_ != fork_hooks::pid()) {
        // A forked child: the thread is the parent's, its mutex may be held
        // forever. Leave everything (the sockets' copies stay open, unused).
        thread_.abandon();
        (void)new std::map<Id, Entry>(std::move(sessions_));
        return;
    }
    {
        std::lock_guard lock(mu_);
        stop_ = true;
    }
    thread_.finish();
}

Loop::Handle Loop::add(const RedisConfig &config, const WatchRequest &request) {
    Handle h;
    auto session = std::make_shared<Session>(config, request);
    h.session = session;
    {
        std::lock_guard lock(mu_);
        h.id = next_id_++;
        sessions_[h.id].session = std::move(session);
    }
    wake();
    return h;
}

void Loop::remove(Id id) {
    if (pid_ != fork_hooks::pid()) return;  // the parent's thread: not here to answer
    std::unique_lock lock(mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end()) return;
    it->second.leaving = true;
    wake();
    gone_cv_.wait(lock, [&] { return sessions_.count(id) == 0; });
}

void Loop::wake() noexcept { thread_.wake(); }

void Loop::run() noexcept {
    (void)pthread_setname_np(pthread_self(), kThreadName);  // for top -H, gdb, /proc/<pid>/task/*/comm
    for (;;) {
        try {
            pass();
        } catch (...) {
            // Nothing may leave the thread; a pass that could not allocate
            // its poll list is tried again a little later.
            ::poll(nullptr, 0, 10);
        }
        std::lock_guard lock(mu_);
        if (stop_ && sessions_.empty()) return;
    }
}

// One pass: sessions come and go, timers fire, then one poll over every
// socket and the eventfd, bounded by the nearest deadline, then the ready
// sockets are served. mu_ is held except in poll, so remove() returns
// between passes; every handler call happens on this thread under mu_.
void Loop::pass() {
    std::vector<pollfd> fds;
    std::vector<Session *> polled;
    int timeout_ms = 1000;
    {
        std::lock_guard lock(mu_);
        bool erased = false;
        for (auto it = sessions_.begin(); it != sessions_.end();) {
            if (stop_ || it->second.leaving) {
                it->second.session->stop();
                it = sessions_.erase(it);
                erased = true;
            } else {
                ++it;
            }
        }
        if (erased) gone_cv_.notify_all();
        if (stop_) return;
        const Clock::time_point now = Clock::now();
        fds.reserve(sessions_.size() + 1);
        polled.reserve(sessions_.size());
        fds.push_back({thread_.fd(), POLLIN, 0});
        Clock::time_point nearest = now + std::chrono::milliseconds(timeout_ms);
        for (auto &[id, e] : sessions_) {
            Session &s = *e.session;
            if (!e.started) {
                e.started = true;
                s.start(now);
            } else {
                s.on_time(now);
            }
            nearest = std::min(nearest, s.next_wake());
            if (s.fd() >= 0) {
                fds.push_back({s.fd(), s.events(), 0});
                polled.push_back(&s);
            }
        }
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(nearest - now).count();
        timeout_ms = int(std::clamp<long long>(left, 0, timeout_ms));
    }
    const int ready = ::poll(fds.data(), fds.size(), timeout_ms);
    if (ready < 0 && errno != EINTR) throw std::system_error(errno, std::generic_category(), "poll");
    if (fds[0].revents & POLLIN) thread_.drain();
    if (ready <= 0) return;
    std::lock_guard lock(mu_);
    const Clock::time_point now = Clock::now();
    // Only this thread erases, so the pointers still stand; a session being
    // removed is left for the next pass to stop.
    for (size_t i = 0; i < polled.size(); ++i) {
        if (fds[i + 1].revents == 0) continue;
        polled[i]->on_ready(fds[i + 1].revents, now);
    }
}

}  // namespace cachekit::l2::feed
