// parse_sentinel_url: redis[s]-sentinel://[user:password@]h[:p][,h[:p]...]/master[/db][?params].
// Each sentinel host, the credentials, the database and the ssl_* params
// are checked by parse_redis_url (so every Redis scheme accepts the same
// hosts and TLS settings); this file splits the URL and keeps what is
// Sentinel's own. Messages never show a password.
#include <string>
#include <string_view>

#include "l2/sentinel/redis_sentinel_backend.hpp"
#include "l2/url_text.hpp"
#include "util/error.hpp"

namespace cachekit::l2 {
namespace {

[[noreturn]] void bad_url(const std::string &problem) {
    fail(CACHEKIT_EINVAL, "invalid Redis Sentinel URL: " + problem);
}

// True when a host[:port] names its port ([v6]:port or name:port).
bool has_port(std::string_view host) {
    if (!host.empty() && host.front() == '[') {
        const size_t close = host.find(']');
        return close != std::string_view::npos && close + 1 < host.size();
    }
    return host.find(':') != std::string_view::npos;
}

std::string decode(std::string_view text, const char *what) {
    std::optional<std::string> out = percent_decode(text, true);
    if (!out) bad_url(std::string("bad percent-escape in the ") + what + " (want %XX, no %00)");
    return *out;
}

// Sentinel's own params are taken out; l1_coherence and the ssl_* ones are left in `passed`
// ("?a=b&c=d") for parse_redis_url to check, as a data URL's.
void parse_query(std::string_view query, SentinelConfig &config, bool tls, std::string &passed) {
    each_query_param(query, [&](std::string_view name, std::string_view value, std::string_view param) {
        if (name == "sentinel_password") {
            config.sentinel_password = decode(value, "sentinel_password");
        } else if (name == "sentinel_username") {
            config.sentinel_username = decode(value, "sentinel_username");
        } else if (name == "read_from_replicas") {
            if (value == "yes" || value == "true" || value == "1") config.read_from_replicas = true;
            else if (value == "no" || value == "false" || value == "0") config.read_from_replicas = false;
            else bad_url("query parameter read_from_replicas takes yes or no, got \"" + std::string(value) + "\"");
        } else if (name == "l1_coherence") {
            CoherenceMode mode;
            if (!coherence_mode_named(value, &mode))
                bad_url("l1_coherence \"" + std::string(value) + "\" is not one of auto, tracking, pubsub, off");
            (void)mode;  // the data URL's, as redis://'s (the feed watches the current primary)
            passed += (passed.empty() ? "?" : "&") + std::string(param);
        } else if (name.substr(0, 4) == "ssl_") {
            if (!tls) bad_url("\"" + std::string(name) + "\" needs TLS: use rediss-sentinel://");
            passed += (passed.empty() ? "?" : "&") + std::string(param);
        } else {
            bad_url("unknown query parameter \"" + std::string(name) +
                    "\" (known: sentinel_username, sentinel_password, read_from_replicas, l1_coherence" +
                    (tls ? ", ssl_cert_reqs, ssl_ca_certs, ssl_ca_path, ssl_certfile, ssl_keyfile, ssl_check_hostname"
                         : "") +
                    "; put the database in the path: /master/N)");
        }
    }, [](std::string_view part) { bad_url("query parameter \"" + std::string(part) + "\" has no value"); });
}

}  // namespace

SentinelConfig parse_sentinel_url(std::string_view url, const RedisTls &base) {
    bool tls = base.enabled;  // the caller's tls option, or the scheme
    std::string_view rest;
    if (starts_with_nocase(url, "rediss-sentinel://")) {
        tls = true;
        rest = url.substr(18);
    } else if (starts_with_nocase(url, "redis-sentinel://")) {
        rest = url.substr(17);
    } else {
        bad_url("want redis-sentinel://host[:port][,host[:port]...]/master[/db] or rediss-sentinel://...");
    }
    for (char c : url) {
        const unsigned char u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u == 0x7f) bad_url("it contains a space or control character");
    }
    if (rest.find('#') != std::string_view::npos) bad_url("fragments are not supported");

    const size_t q = rest.find('?');
    std::string_view query = q == std::string_view::npos ? std::string_view() : rest.substr(q + 1);
    rest = rest.substr(0, q);
    const size_t slash = rest.find('/');
    std::string_view authority = rest.substr(0, slash);
    std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);

    std::string userinfo;  // "user:password@" as written, decoded by parse_redis_url
    if (size_t at = authority.rfind('@'); at != std::string_view::npos) {
        userinfo = std::string(authority.substr(0, at + 1));
        authority = authority.substr(at + 1);
    }

    SentinelConfig config;
    if (authority.empty()) bad_url("no sentinel host (want host[:port][,host[:port]...])");
    while (true) {
        const size_t comma = authority.find(',');
        std::string_view host = authority.substr(0, comma);
        if (host.empty()) bad_url("an empty host in the sentinel list");
        if (config.sentinels.size() == kSentinelMaxHosts)
            bad_url("more than " + std::to_string(kSentinelMaxHosts) + " sentinel hosts");
        RedisConfig parsed = parse_redis_url_part("redis://" + std::string(host), "Redis Sentinel");
        config.sentinels.push_back({parsed.host, has_port(host) ? parsed.port : kSentinelDefaultPort});
        if (comma == std::string_view::npos) break;
        authority = authority.substr(comma + 1);
    }

    // /master[/db]
    if (!path.empty() && path.back() == '/') path.remove_suffix(1);
    const size_t db_slash = path.find('/');
    std::string_view master = path.substr(0, db_slash);
    std::string_view db = db_slash == std::string_view::npos ? std::string_view() : path.substr(db_slash + 1);
    if (master.empty()) bad_url("no master name (want .../<master-name>[/db] after the hosts)");
    config.master_name = decode(master, "master name");
    if (config.master_name.empty() || config.master_name.size() > 256)
        bad_url("the master name must be 1..256 bytes");
    if (db.find('/') != std::string_view::npos) bad_url("the path is /<master-name>[/db], got more segments");

    std::string passed;  // l1_coherence and the ssl_* params, for the data URL
    parse_query(query, config, tls, passed);
    if (!config.sentinel_username.empty() && config.sentinel_password.empty())
        bad_url("sentinel_username needs sentinel_password");

    // The data connections' settings, from a redis[s]:// URL with a
    // placeholder host (discovery sets the real one).
    config.data = parse_redis_url_part(std::string(tls ? "rediss://" : "redis://") + userinfo + "localhost/" +
                                           std::string(db) + passed,
                                       "Redis Sentinel", base);
    return config;
}

}  // namespace cachekit::l2
