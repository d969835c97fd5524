// The server side of the fault cases (test_redis_faults.cpp), so the same
// case bodies run against the single-node backend (suite redis) and the
// cluster backend (suite cluster, `test_redis_faults cluster`):
// - Single: a private redis-server per case; over plain TCP (suite redis)
//   or over TLS (`test_redis_faults tls`, suite redis): then the URLs are
//   rediss:// to the server's TLS port (a certificate for 127.0.0.1 from a
//   test CA made once per run, tls_certs.hpp), every fault hits the TLS
//   connections, and restart() comes back on the same TLS port.
// - Cluster: one private 6-node cluster shared by every case (built on first
//   use, emptied for each case, with a password: a case that asks for none
//   gets the password URL anyway). "The server" of a case is every node at once: pause(), kill()
//   and restart() hit all six, so every key of the case is affected as on
//   one server. cluster-node-timeout is long (15 s) so no pause or kill of
//   a case ends in a failover: the shards come back as they were.
#pragma once

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>

#include "cluster_harness.hpp"
#include "l2/cluster/redis_cluster_backend.hpp"
#include "l2/redis/redis_backend.hpp"
#include "redis_server.hpp"
#include "tls_certs.hpp"

namespace cachekit::testing {

class FaultTarget {
public:
    virtual ~FaultTarget() = default;
    // The backend URL with the target's own credentials.
    virtual std::string url() const = 0;
    // The same with other credentials: "user:pw@", ":pw@" or "" (none).
    virtual std::string url_with(const std::string &userinfo) const = 0;
    virtual void pause() = 0;    // SIGSTOP
    virtual void resume() = 0;   // SIGCONT
    virtual void kill() = 0;     // SIGKILL (a crash)
    virtual void restart() = 0;  // back on the same port(s), serving
    // A raw backend (no resilience layer, errors thrown): this command
    // timeout, this many pooled connections (per node on a cluster).
    virtual std::unique_ptr<l2::Backend> open(const std::string &url, std::chrono::milliseconds command_timeout,
                                              unsigned pool_size) const = 0;
    // One breaker for the whole L2 (one server), or one per node (a cluster:
    // the whole-L2 breaker stays closed by design, docs/redis.md).
    virtual bool whole_l2_breaker() const = 0;
};

// The test CA and server certificate of the TLS target: made on first use,
// removed at exit.
inline const std::string &fault_tls_certs() {
    struct Certs {
        std::string dir = make_tls_certs();
        ~Certs() {
            if (!dir.empty()) run_shell("rm -rf " + dir);
        }
    };
    static Certs certs;
    if (certs.dir.empty()) throw std::runtime_error("cannot make test certificates with the openssl CLI");
    return certs.dir;
}

class SingleTarget final : public FaultTarget {
public:
    SingleTarget(const std::string &password, bool tls) : password_(password) {
        if (tls) {
            TlsServer s = start_tls_server(fault_tls_certs(), "server", false, password);
            server_ = std::move(s.server);
            tls_port_ = s.tls_port;
        } else {
            server_ = std::make_unique<RedisServer>(RedisServerOptions{password, false});
        }
    }
    std::string url() const override { return url_with(password_.empty() ? "" : ":" + password_ + "@"); }
    std::string url_with(const std::string &userinfo) const override {
        if (tls_port_ == 0) return "redis://" + userinfo + "127.0.0.1:" + std::to_string(server_->port());
        return "rediss://" + userinfo + "127.0.0.1:" + std::to_string(tls_port_) +
               "/0?ssl_ca_certs=" + fault_tls_certs() + "/ca.crt";
    }
    void pause() override { server_->pause(); }
    void resume() override { server_->resume(); }
    void kill() override { server_->kill(); }
    void restart() override { server_->restart(); }
    std::unique_ptr<l2::Backend> open(const std::string &url, std::chrono::milliseconds command_timeout,
                                      unsigned pool_size) const override {
        l2::RedisConfig config = l2::parse_redis_url(url);
        config.command_timeout = command_timeout;
        config.connect_timeout = std::chrono::milliseconds(2000);
        config.pool_size = pool_size;
        return l2::open_redis(config);
    }
    bool whole_l2_breaker() const override { return true; }

private:
    std::string password_;
    std::unique_ptr<RedisServer> server_;
    int tls_port_ = 0;  // 0: plain TCP
};

class ClusterTarget final : public FaultTarget {
public:
    static constexpr const char *kPassword = "s3cret-pass";
    // The shared cluster, whole again (a failed case may have left it paused or stopped).
    static ClusterTarget &shared() {
        static ClusterTarget target;
        target.cluster_.start_all();
        if (!target.cluster_.wait_ok(std::chrono::seconds(30))) throw std::runtime_error("the cluster is not ok");
        for (int port : target.cluster_.primary_ports()) target.cluster_.command(port, {"FLUSHALL"});  // as new
        return target;
    }
    std::string url() const override { return cluster_.url(); }
    std::string url_with(const std::string &userinfo) const override {
        return "redis-cluster://" + userinfo + "127.0.0.1:" + std::to_string(cluster_.port(0)) + ",127.0.0.1:" +
               std::to_string(cluster_.port(1));
    }
    void pause() override {
        for (int i = 0; i < RedisCluster::kNodes; ++i) cluster_.server_on(cluster_.port(i)).pause();
    }
    void resume() override {
        for (int i = 0; i < RedisCluster::kNodes; ++i) cluster_.server_on(cluster_.port(i)).resume();
    }
    void kill() override {
        for (int i = 0; i < RedisCluster::kNodes; ++i) cluster_.kill(cluster_.port(i));
    }
    void restart() override {
        for (int i = 0; i < RedisCluster::kNodes; ++i) cluster_.server_on(cluster_.port(i)).restart();
        if (!cluster_.wait_ok(std::chrono::seconds(30))) throw std::runtime_error("the cluster did not come back");
    }
    std::unique_ptr<l2::Backend> open(const std::string &url, std::chrono::milliseconds command_timeout,
                                      unsigned pool_size) const override {
        l2::ClusterConfig config = l2::parse_cluster_url(url);
        config.node.command_timeout = command_timeout;
        config.node.connect_timeout = std::chrono::milliseconds(2000);
        config.node.pool_size = pool_size;
        config.node_resilience.breaker_enabled = false;  // raw, as open_redis: every error shows
        config.node_resilience.fail_open = false;
        return l2::open_redis_cluster(config);
    }
    bool whole_l2_breaker() const override { return false; }

private:
    ClusterTarget() : cluster_(15000, kPassword) {}
    RedisCluster cluster_;
};

}  // namespace cachekit::testing
