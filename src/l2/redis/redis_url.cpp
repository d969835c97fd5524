// parse_redis_url: redis[s]://[user:password@]host[:port][/db][?params] and
// unix:///path/to.sock[?db=N&username=U&password=P]. Everything malformed is
// CACHEKIT_EINVAL with a message naming the problem (never the password).
#include <cctype>
#include <climits>
#include <string>
#include <string_view>

#include "l2/redis/redis_backend.hpp"
#include "l2/url_text.hpp"
#include "util/error.hpp"

namespace cachekit::l2 {
namespace {

[[noreturn]] void bad_url(const std::string &problem) {
    fail(CACHEKIT_EINVAL, "invalid Redis URL: " + problem);
}

std::string percent_decode(std::string_view text, const char *what) {
    std::optional<std::string> out = l2::percent_decode(text, false);
    if (!out) bad_url(std::string("bad percent-escape in the ") + what + " (want %XX)");
    return *out;
}

// A non-negative decimal that fits in an int; nullopt-like -1 when not.
long long parse_decimal(std::string_view text, long long max) {
    if (text.empty() || text.size() > 10) return -1;
    long long value = 0;
    for (char c : text) {
        if (c < '0' || c > '9') return -1;
        value = value * 10 + (c - '0');
    }
    return value <= max ? value : -1;
}

int parse_db(std::string_view text) {
    long long db = parse_decimal(text, INT_MAX);
    if (db < 0) bad_url("database \"" + std::string(text) + "\" is not a non-negative integer");
    return static_cast<int>(db);
}

bool valid_hostname(std::string_view host) {
    for (char c : host) {
        unsigned char u = static_cast<unsigned char>(c);
        if (!(std::isalnum(u) || c == '.' || c == '-' || c == '_')) return false;
    }
    return true;
}

// An IPv6 literal (hex digits, ':' and '.'), optionally with a zone id after
// '%' (already percent-decoded: [fe80::1%25eth0] -> fe80::1%eth0).
bool valid_ipv6(std::string_view host) {
    size_t zone = host.find('%');
    std::string_view address = host.substr(0, zone);
    bool colon = false;
    for (char c : address) {
        if (c == ':') colon = true;
        else if (!(hex_value(c) >= 0 || c == '.')) return false;
    }
    if (zone != std::string_view::npos) {
        std::string_view id = host.substr(zone + 1);
        if (id.empty() || !valid_hostname(id)) return false;
    }
    return colon;
}

void check_chars(std::string_view url) {
    for (char c : url) {
        unsigned char u = static_cast<unsigned char>(c);
        if (u <= 0x20 || u == 0x7f) bad_url("it contains a space or control character");
    }
}

CoherenceMode parse_coherence(std::string_view value) {
    CoherenceMode mode;
    if (coherence_mode_named(value, &mode)) return mode;
    bad_url("l1_coherence \"" + std::string(value) + "\" is not one of auto, tracking, pubsub, off");
}

bool parse_bool(std::string_view name, std::string_view value) {
    if (value == "true" || value == "1" || value == "yes") return true;
    if (value == "false" || value == "0" || value == "no") return false;
    bad_url(std::string(name) + " \"" + std::string(value) + "\" is not true or false");
}

// A file or directory parameter: non-empty, percent-decoded, no NUL.
std::string parse_path(std::string_view name, std::string_view value) {
    std::string path = percent_decode(value, std::string(name).c_str());
    if (path.empty()) bad_url(std::string(name) + " is empty");
    if (path.find('\0') != std::string::npos) bad_url(std::string(name) + " contains a NUL byte");
    return path;
}

RedisTls::CertReqs parse_cert_reqs(std::string_view value) {
    if (value == "required") return RedisTls::CertReqs::Required;
    if (value == "optional") return RedisTls::CertReqs::Optional;
    if (value == "none") return RedisTls::CertReqs::None;
    bad_url("ssl_cert_reqs \"" + std::string(value) + "\" is not one of required, optional, none");
}

// name=value&... ; `unix` also takes db, username and password.
void parse_query(std::string_view query, RedisConfig &config, bool unix) {
    const bool tls = config.tls.enabled;
    each_query_param(query, [&](std::string_view name, std::string_view value, std::string_view) {
        if (name == "l1_coherence") config.l1_coherence = parse_coherence(value);
        // rediss:// only: redis-py's names.
        else if (tls && name == "ssl_cert_reqs") config.tls.cert_reqs = parse_cert_reqs(value);
        else if (tls && name == "ssl_ca_certs") config.tls.ca_certs = parse_path(name, value);
        else if (tls && name == "ssl_ca_path") config.tls.ca_path = parse_path(name, value);
        else if (tls && name == "ssl_certfile") config.tls.certfile = parse_path(name, value);
        else if (tls && name == "ssl_keyfile") config.tls.keyfile = parse_path(name, value);
        else if (tls && name == "ssl_check_hostname") config.tls.check_hostname = parse_bool(name, value) ? 1 : 0;
        else if (unix && name == "db") config.db = parse_db(value);
        else if (unix && name == "password") config.password = percent_decode(value, "password");
        else if (unix && name == "username") config.username = percent_decode(value, "username");
        else if (unix)
            bad_url("unknown query parameter \"" + std::string(name) + "\" (known: db, username, password, l1_coherence)");
        else if (tls)
            bad_url("unknown query parameter \"" + std::string(name) +
                    "\" (known: l1_coherence, ssl_cert_reqs, ssl_ca_certs, ssl_ca_path, ssl_certfile, ssl_keyfile, "
                    "ssl_check_hostname; put the database in the path: /N)");
        else if (name.substr(0, 4) == "ssl_")
            bad_url("\"" + std::string(name) + "\" needs TLS: use rediss:// (or the tls option)");
        else
            bad_url("unknown query parameter \"" + std::string(name) + "\" (known: l1_coherence; put the database in the path: /N)");
    }, [](std::string_view part) { bad_url("query parameter \"" + std::string(part) + "\" has no value"); });
}

RedisConfig parse_tcp(std::string_view rest, bool tls, const RedisTls &base) {
    RedisConfig config;
    config.tls = base;  // the query's ssl_* parameters override these
    config.tls.enabled = tls || base.enabled;
    // authority = everything up to the path, query or fragment.
    size_t end = rest.find_first_of("/?#");
    std::string_view authority = rest.substr(0, end);
    std::string_view tail = end == std::string_view::npos ? std::string_view() : rest.substr(end);

    size_t at = authority.rfind('@');
    if (at != std::string_view::npos) {
        std::string_view userinfo = authority.substr(0, at);
        authority = authority.substr(at + 1);
        size_t colon = userinfo.find(':');
        if (colon == std::string_view::npos) {
            config.username = percent_decode(userinfo, "username");
        } else {
            config.username = percent_decode(userinfo.substr(0, colon), "username");
            config.password = percent_decode(userinfo.substr(colon + 1), "password");
        }
    }

    std::string_view host;
    std::string decoded_host;
    std::string_view port_text;
    bool has_port = false;
    if (!authority.empty() && authority.front() == '[') {
        size_t close = authority.find(']');
        if (close == std::string_view::npos) bad_url("IPv6 host has no closing ']'");
        host = authority.substr(1, close - 1);
        if (host.empty()) bad_url("empty host");
        decoded_host = percent_decode(host, "IPv6 zone id");
        host = decoded_host;
        if (!valid_ipv6(host)) bad_url("\"" + decoded_host + "\" is not an IPv6 address");
        std::string_view after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') bad_url("unexpected text after the IPv6 host");
            has_port = true;
            port_text = after.substr(1);
        }
    } else {
        size_t colon = authority.find(':');
        host = authority.substr(0, colon);
        if (colon != std::string_view::npos) {
            has_port = true;
            port_text = authority.substr(colon + 1);
            if (port_text.find(':') != std::string_view::npos)
                bad_url("too many ':' in the host (write IPv6 addresses in brackets: [::1])");
        }
        if (host.empty()) bad_url("empty host");
        if (!valid_hostname(host)) bad_url("\"" + std::string(host) + "\" is not a valid host name");
    }
    config.host = std::string(host);
    if (has_port) {
        long long port = parse_decimal(port_text, 65535);
        if (port_text.empty()) bad_url("empty port after ':'");
        if (port <= 0) bad_url("port \"" + std::string(port_text) + "\" is not a number in 1..65535");
        config.port = static_cast<int>(port);
    }

    if (tail.find('#') != std::string_view::npos) bad_url("fragments are not supported in redis:// URLs");
    if (size_t q = tail.find('?'); q != std::string_view::npos) {
        parse_query(tail.substr(q + 1), config, false);
        tail = tail.substr(0, q);
    }
    if (!tail.empty()) {
        std::string_view path = tail.substr(1);  // after '/'
        if (!path.empty()) {
            if (path.find('/') != std::string_view::npos)
                bad_url("the path must be a single database number, got \"/" + std::string(path) + "\"");
            config.db = parse_db(path);
        }
    }
    return config;
}

RedisConfig parse_unix(std::string_view rest) {
    RedisConfig config;
    config.host.clear();
    config.port = 0;
    size_t hash = rest.find('#');
    if (hash != std::string_view::npos) bad_url("fragments are not supported in unix:// URLs");
    size_t q = rest.find('?');
    std::string_view path = rest.substr(0, q);
    std::string_view query = q == std::string_view::npos ? std::string_view() : rest.substr(q + 1);
    if (path.empty() || path.front() != '/')
        bad_url("unix:// needs an absolute socket path (unix:///path/to.sock)");
    config.unix_path = percent_decode(path, "socket path");
    if (config.unix_path.size() <= 1 || config.unix_path.back() == '/')
        bad_url("unix:// socket path names no file");
    if (config.unix_path.find('\0') != std::string::npos) bad_url("the socket path contains a NUL byte");

    parse_query(query, config, true);
    return config;
}

}  // namespace

RedisConfig parse_redis_url(std::string_view url, const RedisTls &tls) {
    if (url.empty()) bad_url("empty URL");
    check_chars(url);
    const bool rediss = starts_with_nocase(url, "rediss://");
    if (rediss || starts_with_nocase(url, "redis://")) {
        RedisConfig config = parse_tcp(url.substr(rediss ? 9 : 8), rediss, tls);
        // The options alone must not leave a plain connection the caller meant to secure.
        if (!config.tls.enabled) {
            if (tls.any_set())
                fail(CACHEKIT_EINVAL, "TLS options (tls_*) on a redis:// URL without TLS: set tls = 1 or use rediss://");
            return config;
        }
        if (config.tls.cert_reqs == RedisTls::CertReqs::None && config.tls.check_hostname > 0)
            bad_url("ssl_check_hostname=true needs ssl_cert_reqs=required or optional");
        if (!config.tls.keyfile.empty() && config.tls.certfile.empty()) bad_url("ssl_keyfile needs ssl_certfile");
        return config;
    }
    if (starts_with_nocase(url, "unix://")) {
        if (tls.any_set()) fail(CACHEKIT_EINVAL, "TLS options (tls_*) do not apply to a unix:// socket");
        return parse_unix(url.substr(7));
    }
    size_t colon = url.find("://");
    if (colon == std::string_view::npos)
        bad_url("no scheme (want redis://host[:port][/db], rediss://... or unix:///path/to.sock)");
    std::string scheme(url.substr(0, colon));
    bad_url("unknown scheme \"" + scheme + "://\" (want redis://, rediss:// or unix://)");
}

RedisConfig parse_redis_url_part(const std::string &url, const char *kind, const RedisTls &tls) {
    try {
        return parse_redis_url(url, tls);
    } catch (const Error &e) {
        std::string why = e.what();
        const std::string lead = "invalid Redis URL: ";
        if (why.compare(0, lead.size(), lead) == 0) why.erase(0, lead.size());
        fail(e.code(), "invalid " + std::string(kind) + " URL: " + why);
    }
}

}  // namespace cachekit::l2
