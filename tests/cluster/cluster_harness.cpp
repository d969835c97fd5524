#include "cluster_harness.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

namespace cachekit::testing {
namespace {

std::string find_cli() {
    for (const char *candidate : {"/usr/bin/redis-cli", "/usr/local/bin/redis-cli"})
        if (access(candidate, X_OK) == 0) return candidate;
    std::string server = RedisServer::find_binary();
    if (!server.empty()) {
        std::string cli = server.substr(0, server.rfind('/') + 1) + "redis-cli";
        if (access(cli.c_str(), X_OK) == 0) return cli;
    }
    return "";
}

std::string text_of(const redisReply *r) {
    if (r && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS || r->type == REDIS_REPLY_ERROR))
        return std::string(r->str, r->len);
    return "";
}

}  // namespace

void RedisCluster::require_or_skip(const char *program) {
    RedisServer::require_or_skip(program);
    if (find_cli().empty()) {
        std::printf("%s: redis-cli is not installed; skipping\n", program);
        std::fflush(stdout);
        std::exit(77);
    }
}

RedisCluster::RedisCluster(int node_timeout_ms, std::string password, std::string tls_dir)
    : tls_dir_(std::move(tls_dir)), cli_(find_cli()), password_(std::move(password)) {
    if (cli_.empty()) throw std::runtime_error("redis-cli is not installed");
    for (int i = 0; i < kNodes; ++i) {
        RedisServerOptions options;
        const int cluster_port = free_port();  // the bus port (the default, port + 10000, may be taken or > 65535)
        cluster_ports_.push_back(cluster_port);
        options.extra_args = {"--cluster-enabled", "yes", "--cluster-port", std::to_string(cluster_port),
                              "--cluster-node-timeout", std::to_string(node_timeout_ms),
                              "--cluster-require-full-coverage", "no"};
        if (!password_.empty()) {
            options.password = password_;  // --requirepass
            options.extra_args.insert(options.extra_args.end(), {"--masterauth", password_});
        }
        if (!tls_dir_.empty()) {
            tls_ports_.push_back(free_port());
            options.extra_args.insert(options.extra_args.end(),
                                      {"--tls-port", std::to_string(tls_ports_.back()), "--tls-cluster", "yes",
                                       "--tls-replication", "yes", "--tls-cert-file", tls_dir_ + "/server.crt",
                                       "--tls-key-file", tls_dir_ + "/server.key", "--tls-ca-cert-file",
                                       tls_dir_ + "/ca.crt", "--tls-auth-clients", "yes"});
        }
        nodes_.push_back(std::make_unique<RedisServer>(options));
    }
    std::vector<std::string> args = {"--cluster", "create"};
    for (auto &n : nodes_) args.push_back("127.0.0.1:" + std::to_string(n->port()));
    args.insert(args.end(), {"--cluster-replicas", "1", "--cluster-yes"});
    if (cli(args) != 0) throw std::runtime_error("redis-cli --cluster create failed (see " + nodes_[0]->dir() + ")");
    if (!wait_ok(std::chrono::seconds(20))) throw std::runtime_error("the cluster did not become ok");
}

RedisCluster::~RedisCluster() = default;  // each RedisServer stops its process

std::string RedisCluster::url(const std::string &query) const {
    std::string out = "redis-cluster://" + (password_.empty() ? "" : ":" + password_ + "@") + "127.0.0.1:" +
                      std::to_string(nodes_[0]->port()) + ",127.0.0.1:" +
                      std::to_string(nodes_[1]->port());
    if (!query.empty()) out += "?" + query;
    return out;
}

std::string RedisCluster::tls_url(const std::string &query) const {
    if (tls_dir_.empty()) throw std::runtime_error("tls_url: the cluster was built without TLS");
    std::string out = "rediss-cluster://" + (password_.empty() ? "" : ":" + password_ + "@") + "127.0.0.1:" +
                      std::to_string(tls_ports_[0]) + ",127.0.0.1:" + std::to_string(tls_ports_[1]) +
                      "?ssl_ca_certs=" + tls_dir_ + "/ca.crt&ssl_certfile=" + tls_dir_ +
                      "/client.crt&ssl_keyfile=" + tls_dir_ + "/client.key";
    if (!query.empty()) out += "&" + query;
    return out;
}

int RedisCluster::tls_port_of(int port) const {
    for (size_t i = 0; i < nodes_.size() && i < tls_ports_.size(); ++i)
        if (nodes_[i]->port() == port) return tls_ports_[i];
    throw std::runtime_error("no TLS node on port " + std::to_string(port));
}

RedisServer &RedisCluster::server_on(int port) {
    for (auto &n : nodes_)
        if (n->port() == port) return *n;
    throw std::runtime_error("no node on port " + std::to_string(port));
}

std::unique_ptr<redisReply, void (*)(void *)> RedisCluster::command(int port, const std::vector<std::string> &args) const {
    std::unique_ptr<redisReply, void (*)(void *)> none(nullptr, freeReplyObject);
    timeval tv{2, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (!c || c->err) {
        if (c) redisFree(c);
        return none;
    }
    redisSetTimeout(c, tv);
    if (!password_.empty()) freeReplyObject(redisCommand(c, "AUTH %s", password_.c_str()));
    std::vector<const char *> argv;
    std::vector<size_t> lens;
    for (auto &a : args) {
        argv.push_back(a.data());
        lens.push_back(a.size());
    }
    void *r = redisCommandArgv(c, static_cast<int>(argv.size()), argv.data(), lens.data());
    redisFree(c);
    return {static_cast<redisReply *>(r), freeReplyObject};
}

int RedisCluster::cli(const std::vector<std::string> &args) const {
    const std::string log = nodes_[0]->dir() + "/redis-cli.log";
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        FILE *out = std::freopen(log.c_str(), "a", stdout);
        (void)out;
        dup2(STDOUT_FILENO, STDERR_FILENO);
        std::vector<char *> argv;
        argv.push_back(const_cast<char *>(cli_.c_str()));
        // Options first: after a plain command (redis-cli -c SET ...) they would be its arguments.
        std::string pw = password_, no_warning = "--no-auth-warning", dash_a = "-a";
        if (!pw.empty()) {
            argv.push_back(dash_a.data());
            argv.push_back(pw.data());
            argv.push_back(no_warning.data());
        }
        for (auto &a : args) argv.push_back(const_cast<char *>(a.c_str()));
        argv.push_back(nullptr);
        execv(argv[0], argv.data());
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::vector<ClusterNodeInfo> RedisCluster::nodes(int asked_port) const {
    std::vector<ClusterNodeInfo> out;
    auto reply = command(asked_port, {"CLUSTER", "NODES"});
    std::istringstream lines(text_of(reply.get()));
    std::string line;
    while (std::getline(lines, line)) {
        std::istringstream fields(line);
        std::string id, address, flags, primary;
        fields >> id >> address >> flags >> primary;
        if (id.empty()) continue;
        ClusterNodeInfo info;
        info.id = id;
        info.port = std::atoi(address.substr(address.find(':') + 1).c_str());
        info.primary = flags.find("master") != std::string::npos;
        info.failed = flags.find("fail") != std::string::npos;
        info.primary_id = primary == "-" ? "" : primary;
        out.push_back(info);
    }
    return out;
}

std::vector<int> RedisCluster::primary_ports() const {
    for (auto &n : nodes_) {
        if (!n->running()) continue;
        std::vector<int> ports;
        for (auto &info : nodes(n->port()))
            if (info.primary && !info.failed) ports.push_back(info.port);
        if (!ports.empty()) return ports;
    }
    return {};
}

std::string RedisCluster::id_of(int port) const {
    for (auto &n : nodes_) {
        if (!n->running()) continue;
        for (auto &info : nodes(n->port()))
            if (info.port == port) return info.id;
    }
    return "";
}

int RedisCluster::owner_of(unsigned slot) const {
    for (auto &n : nodes_) {
        if (!n->running()) continue;
        auto reply = command(n->port(), {"CLUSTER", "SLOTS"});
        if (!reply || reply->type != REDIS_REPLY_ARRAY) continue;
        for (size_t i = 0; i < reply->elements; ++i) {
            const redisReply *range = reply->element[i];
            if (range->elements >= 3 && slot >= unsigned(range->element[0]->integer) &&
                slot <= unsigned(range->element[1]->integer))
                return static_cast<int>(range->element[2]->element[1]->integer);
        }
        return 0;
    }
    return 0;
}

bool RedisCluster::wait_ok(std::chrono::milliseconds budget) const {
    const auto until = std::chrono::steady_clock::now() + budget;
    while (std::chrono::steady_clock::now() < until) {
        bool ok = true;
        std::string agreed;
        for (auto &n : nodes_) {
            if (!n->running()) continue;
            auto info = command(n->port(), {"CLUSTER", "INFO"});
            const std::string text = text_of(info.get());
            if (text.find("cluster_state:ok") == std::string::npos ||
                text.find("cluster_slots_ok:16384") == std::string::npos) {
                ok = false;
                break;
            }
            // A replica counts once its copy is in sync (CLUSTER SHARDS says "online" from then on).
            auto replication = command(n->port(), {"INFO", "replication"});
            const std::string role = text_of(replication.get());
            if (role.find("role:slave") != std::string::npos &&
                role.find("master_link_status:up") == std::string::npos) {
                ok = false;
                break;
            }
            // Every node sees the same primaries owning the same slots.
            auto slots = command(n->port(), {"CLUSTER", "SLOTS"});
            std::string summary;
            if (slots && slots->type == REDIS_REPLY_ARRAY) {
                std::map<long long, long long> owners;
                for (size_t i = 0; i < slots->elements; ++i) {
                    const redisReply *r = slots->element[i];
                    if (r->elements >= 3) owners[r->element[0]->integer] = r->element[2]->element[1]->integer;
                }
                for (auto &[first, port] : owners) summary += std::to_string(first) + ":" + std::to_string(port) + ",";
            }
            if (agreed.empty()) agreed = summary;
            if (summary != agreed) {
                ok = false;
                break;
            }
        }
        if (ok && !agreed.empty()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
}

void RedisCluster::kill(int port) { server_on(port).kill(); }

void RedisCluster::stop_all() {
    for (auto &n : nodes_) n->stop();
}

void RedisCluster::start_all() {
    for (auto &n : nodes_) {
        n->resume();  // a no-op unless paused
        if (!n->running()) n->restart();
    }
}

}  // namespace cachekit::testing
