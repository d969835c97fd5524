// `cachekit get|set|del KEY --backend URL`: read, write and delete raw
// entries of an L2 backend, for operators (`inspect --backend` decodes them).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "tool.hpp"

namespace cachekit_tool {
namespace {

void print_backend_usage(FILE *out) {
    std::fputs("usage: cachekit get KEY [--backend URL] [--hex | --raw]\n"
               "       cachekit set KEY (--hex HEX | --file PATH | -) [--backend URL] [--ttl SECONDS]\n"
               "       cachekit del KEY [--backend URL]\n"
               "\n"
               "URL: redis://[user:password@]host[:port][/db], redis-cluster://host:port[,host:port...],\n"
               "unix:///path.sock[?db=N], "
               "file:///dir or memory://; without --backend, $CACHEKIT_REDIS_URL then $REDIS_URL.\n"
               "get prints the value as hex (default) or raw bytes (--raw); exit 1 when the\n"
               "key is missing. set takes the bytes as hex, from a file or from stdin; --ttl 0\n"
               "(the default) stores without expiry. Errors are never degraded here: a backend\n"
               "that is down is an error (exit 1), not a miss.\n",
               out);
}

struct BackendDeleter {
    void operator()(cachekit_backend *b) const { cachekit_backend_free(b); }
};

int fail_with(const char *what, int rc) {
    std::fprintf(stderr, "cachekit %s: %s: %s\n", what, cachekit_error_name(rc), cachekit_error_last_message());
    return kExitFail;
}

bool read_all(FILE *in, std::string &out) {
    char chunk[1 << 16];
    size_t n;
    while ((n = std::fread(chunk, 1, sizeof chunk, in)) > 0) out.append(chunk, n);
    return !std::ferror(in);
}

}  // namespace

int open_backend_for_tool(const char *command, const std::optional<std::string> &url, cachekit_backend **out) {
    cachekit_backend_options opts;
    cachekit_backend_options_init(&opts, sizeof opts);
    opts.fail_closed = 1;       // an operator wants to see errors, not misses
    opts.breaker_disabled = 1;  // one-shot calls: nothing to protect
    const int rc = cachekit_backend_open(out, url ? url->c_str() : nullptr, &opts);
    if (rc != CACHEKIT_OK) return fail_with(command, rc);
    return kExitOk;
}

int fetch_from_backend(const std::optional<std::string> &url, const std::string &key, std::string &data,
                       std::optional<double> &ttl_seconds) {
    cachekit_backend *raw = nullptr;
    if (int rc = open_backend_for_tool("inspect", url, &raw); rc != kExitOk) return rc;
    std::unique_ptr<cachekit_backend, BackendDeleter> backend(raw);
    Buf value;
    int rc = cachekit_backend_get(backend.get(), value.get(), key.data(), key.size());
    if (rc == CACHEKIT_ENOTFOUND) {
        std::fprintf(stderr, "cachekit inspect: no entry under that key\n");
        return kExitFail;
    }
    if (rc != CACHEKIT_OK) return fail_with("inspect", rc);
    data = value.str();
    double ttl = 0;
    rc = cachekit_backend_ttl(backend.get(), &ttl, key.data(), key.size());
    if (rc == CACHEKIT_OK) ttl_seconds = ttl;
    return kExitOk;
}

int run_backend_command(int argc, char **argv) {
    const std::string command = argv[1];
    std::optional<std::string> key, url, hex, file;
    bool from_stdin = false, raw_output = false, hex_output = false;
    double ttl = 0;
    for (int i = 2; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&]() -> std::optional<std::string> {
            if (i + 1 >= argc) return std::nullopt;
            return std::string(argv[++i]);
        };
        if (arg == "--help" || arg == "-h") {
            print_backend_usage(stdout);
            return kExitOk;
        } else if (arg == "--backend" || (arg == "--hex" && command == "set") || arg == "--file" || arg == "--ttl") {
            std::optional<std::string> v = value();
            if (!v) {
                std::fprintf(stderr, "cachekit %s: %s needs a value\n", command.c_str(), arg.c_str());
                return kExitUsage;
            }
            if (arg == "--backend") url = v;
            else if (arg == "--hex") hex = v;
            else if (arg == "--file") file = v;
            else {
                char *end = nullptr;
                ttl = std::strtod(v->c_str(), &end);
                if (end == v->c_str() || *end != '\0' || !std::isfinite(ttl) || ttl < 0) {
                    std::fprintf(stderr, "cachekit %s: --ttl takes seconds >= 0\n", command.c_str());
                    return kExitUsage;
                }
            }
        } else if (arg == "--hex" && command == "get") {
            hex_output = true;
        } else if (arg == "--raw" && command == "get") {
            raw_output = true;
        } else if (arg == "-" && command == "set") {
            from_stdin = true;
        } else if (!key && (arg.empty() || arg[0] != '-')) {
            key = arg;
        } else {
            std::fprintf(stderr, "cachekit %s: unexpected argument '%s'\n", command.c_str(), arg.c_str());
            print_backend_usage(stderr);
            return kExitUsage;
        }
    }
    if (!key || key->empty()) {
        std::fprintf(stderr, "cachekit %s: give a KEY\n", command.c_str());
        print_backend_usage(stderr);
        return kExitUsage;
    }
    if (raw_output && hex_output) {
        std::fprintf(stderr, "cachekit get: choose --hex or --raw\n");
        return kExitUsage;
    }
    std::string data;
    if (command == "set") {
        const int sources = int(bool(hex)) + int(bool(file)) + int(from_stdin);
        if (sources != 1) {
            std::fprintf(stderr, "cachekit set: give the value once: --hex, --file or -\n");
            return kExitUsage;
        }
        if (hex && !from_hex(*hex, data)) {
            std::fprintf(stderr, "cachekit set: --hex: not valid hex\n");
            return kExitUsage;
        }
        if (file) {
            std::unique_ptr<FILE, int (*)(FILE *)> f(std::fopen(file->c_str(), "rb"), std::fclose);
            if (!f || !read_all(f.get(), data)) {
                std::fprintf(stderr, "cachekit set: cannot read '%s'\n", file->c_str());
                return kExitUsage;
            }
        }
        if (from_stdin && !read_all(stdin, data)) {
            std::fprintf(stderr, "cachekit set: cannot read standard input\n");
            return kExitUsage;
        }
    }

    cachekit_backend *raw = nullptr;
    if (int rc = open_backend_for_tool(command.c_str(), url, &raw); rc != kExitOk) return rc;
    std::unique_ptr<cachekit_backend, BackendDeleter> backend(raw);
    if (command == "get") {
        Buf value;
        const int rc = cachekit_backend_get(backend.get(), value.get(), key->data(), key->size());
        if (rc == CACHEKIT_ENOTFOUND) {
            std::fprintf(stderr, "cachekit get: no entry under that key\n");
            return kExitFail;
        }
        if (rc != CACHEKIT_OK) return fail_with("get", rc);
        if (raw_output) std::fwrite(value.data(), 1, value.size(), stdout);
        else std::printf("%s\n", to_hex(value.view()).c_str());
        return kExitOk;
    }
    if (command == "set") {
        const int rc = cachekit_backend_set(backend.get(), key->data(), key->size(), data.data(), data.size(), ttl);
        return rc == CACHEKIT_OK ? kExitOk : fail_with("set", rc);
    }
    const int rc = cachekit_backend_delete(backend.get(), key->data(), key->size());
    if (rc == CACHEKIT_ENOTFOUND) {
        std::fprintf(stderr, "cachekit del: no entry under that key\n");
        return kExitFail;
    }
    return rc == CACHEKIT_OK ? kExitOk : fail_with("del", rc);
}

}  // namespace cachekit_tool
