// parse_cluster_url: redis-cluster://[user:password@]host:port[,host:port...][?query].
// Each seed is parsed by parse_redis_url (host syntax, IPv6 brackets, ports),
// so both schemes accept the same hosts. Messages never show the password.
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

void parse_query(std::string_view query, ClusterConfig &config) {
    while (!query.empty()) {
        const size_t amp = query.find('&');
        std::string_view param = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
        if (param.empty()) continue;
        const size_t eq = param.find('=');
        if (eq == std::string_view::npos) bad_url("query parameter \"" + std::string(param) + "\" has no value");
        std::string_view name = param.substr(0, eq), value = param.substr(eq + 1);
        if (name == "read_from_replicas")
            config.read_from_replicas = parse_yes_no(name, value);
        else if (name == "refresh_ms")
            config.refresh_interval = std::chrono::milliseconds(parse_number(name, value, 100, 3600000));
        else if (name == "l1_coherence") {
            if (!coherence_mode_named(value, &config.node.l1_coherence))
                bad_url("l1_coherence \"" + std::string(value) + "\" is not one of auto, tracking, pubsub, off");
        } else
            bad_url("unknown query parameter \"" + std::string(name) +
                    "\" (known: read_from_replicas, refresh_ms, l1_coherence)");
    }
}

}  // namespace

ClusterConfig parse_cluster_url(std::string_view url) {
    constexpr std::string_view kScheme = "redis-cluster://";
    if (!starts_with_nocase(url, kScheme)) bad_url("want redis-cluster://host:port[,host:port...]");
    std::string_view rest = url.substr(kScheme.size());
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
        RedisConfig parsed;
        try {
            parsed = parse_redis_url("redis://" + userinfo + std::string(seed));
        } catch (const Error &e) {
            // parse_redis_url's message, under this scheme's name.
            std::string why = e.what();
            const std::string lead = "invalid Redis URL: ";
            if (why.compare(0, lead.size(), lead) == 0) why.erase(0, lead.size());
            bad_url(why);
        }
        if (first) {
            config.node.username = parsed.username;
            config.node.password = parsed.password;
            first = false;
        }
        config.seeds.push_back({parsed.host, parsed.port});
        if (comma == std::string_view::npos) break;
        rest = rest.substr(comma + 1);
    }
    parse_query(query, config);
    return config;
}

}  // namespace cachekit::l2
