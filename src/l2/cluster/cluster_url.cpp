// parse_cluster_url: redis[s]-cluster://[user:password@]host:port[,host:port...][?query].
// Each seed is parsed by parse_redis_url (host syntax, IPv6 brackets, ports),
// and so are the ssl_* parameters of rediss-cluster:// (as one rediss://
// URL's), so every scheme accepts the same hosts and TLS settings. Messages
// never show the password.
#include <string>
#include <string_view>

#include "l2/cluster/redis_cluster_backend.hpp"
#include "l2/url_text.hpp"
#include "util/error.hpp"

namespace cachekit::l2 {
namespace {

[[noreturn]] void bad_url(const std::string &problem) { fail(CACHEKIT_EINVAL, "invalid Redis Cluster URL: " + problem); }

bool parse_yes_no(std::string_view name, std::string_view value) {
    if (value == "yes" || value == "true" || value == "1") return true;
    if (value == "no" || value == "false" || value == "0") return false;
    bad_url("query parameter " + std::string(name) + " takes yes or no, got \"" + std::string(value) + "\"");
}

long long parse_number(std::string_view name, std::string_view value, long long min, long long max) {
    long long n = 0;
    if (value.empty() || value.size() > 10) n = -1;
    for (char c : value) {
        if (c < '0' || c > '9') {
            n = -1;
            break;
        }
        n = n * 10 + (c - '0');
    }
    if (n < min || n > max)
        bad_url("query parameter " + std::string(name) + " must be a number in " + std::to_string(min) + ".." +
                std::to_string(max) + ", got \"" + std::string(value) + "\"");
    return n;
}

// With tls, the ssl_* parameters go to *ssl_params, joined again, for
// parse_redis_url to read.
void parse_query(std::string_view query, ClusterConfig &config, bool tls, std::string *ssl_params) {
    each_query_param(query, [&](std::string_view name, std::string_view value, std::string_view param) {
        if (name == "read_from_replicas")
            config.read_from_replicas = parse_yes_no(name, value);
        else if (name == "refresh_ms")
            config.refresh_interval = std::chrono::milliseconds(parse_number(name, value, 100, 3600000));
        else if (name == "l1_coherence") {
            if (!coherence_mode_named(value, &config.node.l1_coherence))
                bad_url("l1_coherence \"" + std::string(value) + "\" is not one of auto, tracking, pubsub, off");
        } else if (tls && (name == "ssl_cert_reqs" || name == "ssl_ca_certs" || name == "ssl_ca_path" ||
                           name == "ssl_certfile" || name == "ssl_keyfile" || name == "ssl_check_hostname")) {
            *ssl_params += (ssl_params->empty() ? "" : "&") + std::string(param);
        } else if (!tls && name.substr(0, 4) == "ssl_") {
            bad_url("\"" + std::string(name) + "\" needs TLS: use rediss-cluster://");
        } else
            bad_url("unknown query parameter \"" + std::string(name) +
                    "\" (known: read_from_replicas, refresh_ms, l1_coherence" +
                    (tls ? ", ssl_cert_reqs, ssl_ca_certs, ssl_ca_path, ssl_certfile, ssl_keyfile, ssl_check_hostname)"
                         : ")"));
    }, [](std::string_view part) { bad_url("query parameter \"" + std::string(part) + "\" has no value"); });
}

}  // namespace

ClusterConfig parse_cluster_url(std::string_view url, const RedisTls &base) {
    const bool rediss = starts_with_nocase(url, "rediss-cluster://");
    if (!rediss && !starts_with_nocase(url, "redis-cluster://"))
        bad_url("want redis-cluster://host:port[,host:port...] or rediss-cluster://...");
    const bool tls = rediss || base.enabled;
    if (!tls && base.any_set())
        fail(CACHEKIT_EINVAL, "TLS options (tls_*) on a redis-cluster:// URL without TLS: set tls = 1 or use rediss-cluster://");
    std::string_view rest = url.substr(rediss ? 17 : 16);
    if (rest.find('#') != std::string_view::npos) bad_url("fragments are not supported");
    const size_t q = rest.find('?');
    std::string_view query = q == std::string_view::npos ? std::string_view() : rest.substr(q + 1);
    rest = rest.substr(0, q);
    if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
    if (rest.find('/') != std::string_view::npos)
        bad_url("a cluster has only database 0: no path after the hosts");

    std::string userinfo;
    if (size_t at = rest.rfind('@'); at != std::string_view::npos) {
        userinfo = std::string(rest.substr(0, at + 1));
        rest = rest.substr(at + 1);
    }
    ClusterConfig config;
    bool first = true;
    while (true) {
        const size_t comma = rest.find(',');
        std::string_view seed = rest.substr(0, comma);
        if (seed.empty()) bad_url("an empty host in the seed list");
        const RedisConfig parsed = parse_redis_url_part("redis://" + userinfo + std::string(seed), "Redis Cluster");
        if (first) {
            config.node.username = parsed.username;
            config.node.password = parsed.password;
            first = false;
        }
        config.seeds.push_back({parsed.host, parsed.port});
        if (comma == std::string_view::npos) break;
        rest = rest.substr(comma + 1);
    }
    std::string ssl_params;
    parse_query(query, config, tls, &ssl_params);
    if (tls) {
        // The TLS settings (and their checks) of rediss://; every node's
        // certificate is checked against the address the slot map gives it.
        config.node.tls = parse_redis_url_part("rediss://localhost/?" + ssl_params, "Redis Cluster", base).tls;
    }
    return config;
}

}  // namespace cachekit::l2
