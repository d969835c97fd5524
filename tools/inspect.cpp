// `cachekit inspect`: describe a stored value for an operator, through
// cachekit_inspect (optionally with a keyring to open encrypted values).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tool.hpp"

namespace cachekit_tool {
namespace {

using Json = nlohmann::ordered_json;

void print_inspect_usage(FILE *out) {
    std::fputs("usage: cachekit inspect (--hex HEX | --file PATH | - | KEY --backend URL) [--json]\n"
               "                        [--master-key HEX] [--previous-keys HEX,HEX]\n"
               "                        [--tenant T] [--cache-key KEY]\n"
               "\n"
               "Describes a stored value (CK frame, ByteStorage envelope, interop/v2\n"
               "container, MessagePack or ciphertext): its kind, size, whether its checks\n"
               "pass and the decoded value.\n"
               "\n"
               "  --hex HEX            the value as hex\n"
               "  --file PATH          the value as raw bytes in a file\n"
               "  -                    the value as raw bytes on standard input\n"
               "  KEY --backend URL    the value stored under KEY in a backend (redis://...,\n"
               "                       unix://..., file:///dir, memory://), with its TTL;\n"
               "                       KEY is also the cache key unless --cache-key is given\n"
               "  --json               print the report as one JSON object\n"
               "  --master-key HEX     open encrypted values (default: $CACHEKIT_MASTER_KEY)\n"
               "  --previous-keys L    comma-separated previous master keys\n"
               "                       (default: $CACHEKIT_PREVIOUS_MASTER_KEYS, used only\n"
               "                       when the master key also comes from the environment)\n"
               "  --tenant T           the tenant (default: from the frame, else \"default\")\n"
               "  --cache-key KEY      the cache key the value was stored under (needed to\n"
               "                       open ciphertext: it is part of the AAD)\n"
               "\n"
               "Exit status: 0 checks pass or not_checked, 1 checks fail, 2 usage error.\n",
               out);
}

struct Options {
    enum class Source { None, Hex, File, Stdin, Backend } source = Source::None;
    std::string source_arg;
    bool json = false;
    std::optional<std::string> master_key;
    std::optional<std::string> previous_keys;
    std::optional<std::string> tenant;
    std::optional<std::string> cache_key;
    std::optional<std::string> backend_url;
    std::optional<std::string> backend_key;
};

int usage_error(const std::string &message) {
    std::fprintf(stderr, "cachekit inspect: %s\n", message.c_str());
    print_inspect_usage(stderr);
    return kExitUsage;
}

bool read_stream(FILE *in, std::string &out) {
    char chunk[1 << 16];
    size_t n;
    while ((n = std::fread(chunk, 1, sizeof chunk, in)) > 0) out.append(chunk, n);
    return !std::ferror(in);
}

const char *c_str_or_null(const std::optional<std::string> &s) { return s ? s->c_str() : nullptr; }

void print_line(const char *label, std::string_view value) {
    std::printf("%-12s %.*s\n", label, static_cast<int>(value.size()), value.data());
}

std::string scalar_text(const Json &v) {
    return v.is_string() ? v.get<std::string>() : v.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// The readable form of a report.
void print_summary(const Json &report) {
    auto get = [&](const char *name) -> const Json * {
        auto it = report.find(name);
        return it == report.end() ? nullptr : &*it;
    };
    if (const Json *kind = get("kind")) print_line("kind:", scalar_text(*kind));
    if (const Json *size = get("size")) print_line("size:", scalar_text(*size) + " bytes");
    if (const Json *checks = get("checks")) print_line("checks:", scalar_text(*checks));
    if (const Json *error = get("error")) {
        std::string text = scalar_text(*error);
        if (const Json *message = get("message")) text += ": " + scalar_text(*message);
        print_line("error:", text);
    } else if (const Json *message = get("message")) {
        print_line("note:", scalar_text(*message));
    }
    for (const auto &[name, value] : report.items()) {
        if (name == "kind" || name == "size" || name == "checks" || name == "error" || name == "message" ||
            name == "value")
            continue;
        print_line((name + ":").c_str(), scalar_text(value));
    }
    if (const Json *value = get("value")) {
        std::printf("value:\n");
        std::string pretty = value->dump(2, ' ', false, Json::error_handler_t::replace);
        size_t start = 0;
        while (start <= pretty.size()) {
            size_t end = pretty.find('\n', start);
            if (end == std::string::npos) end = pretty.size();
            std::printf("  %.*s\n", static_cast<int>(end - start), pretty.data() + start);
            start = end + 1;
        }
    }
}

struct KeyringDeleter {
    void operator()(cachekit_keyring *k) const { cachekit_keyring_free(k); }
};

int inspect(int argc, char **argv) {
    Options opt;
    auto set_source = [&](Options::Source source, std::string arg) -> bool {
        if (opt.source != Options::Source::None) return false;
        opt.source = source;
        opt.source_arg = std::move(arg);
        return true;
    };
    for (int i = 2; i < argc; ++i) {
        std::string arg = argv[i];
        std::optional<std::string> inline_value;
        if (arg.rfind("--", 0) == 0) {
            if (const size_t eq = arg.find('='); eq != std::string::npos) {
                inline_value = arg.substr(eq + 1);
                arg.resize(eq);
            }
        }
        auto value = [&]() -> std::optional<std::string> {
            if (inline_value) return inline_value;
            if (i + 1 >= argc) return std::nullopt;
            return std::string(argv[++i]);
        };
        if (arg == "--help" || arg == "-h") {
            print_inspect_usage(stdout);
            return kExitOk;
        }
        if (arg == "--json" && !inline_value) {
            opt.json = true;
        } else if (arg == "-") {
            if (!set_source(Options::Source::Stdin, "")) return usage_error("give one input: --hex, --file or -");
        } else if (arg == "--hex" || arg == "--file") {
            std::optional<std::string> v = value();
            if (!v) return usage_error(arg + " needs a value");
            if (!set_source(arg == "--hex" ? Options::Source::Hex : Options::Source::File, *v))
                return usage_error("give one input: --hex, --file or -");
        } else if (arg == "--backend") {
            std::optional<std::string> v = value();
            if (!v) return usage_error("--backend needs a URL");
            opt.backend_url = v;
        } else if (!inline_value && !arg.empty() && arg[0] != '-' && !opt.backend_key) {
            opt.backend_key = arg;
        } else if (arg == "--master-key" || arg == "--previous-keys" || arg == "--tenant" || arg == "--cache-key") {
            std::optional<std::string> v = value();
            if (!v) return usage_error(arg + " needs a value");
            if (arg == "--master-key") opt.master_key = v;
            else if (arg == "--previous-keys") opt.previous_keys = v;
            else if (arg == "--tenant") opt.tenant = v;
            else opt.cache_key = v;
        } else {
            return usage_error("unexpected argument '" + std::string(argv[i]) + "'");
        }
    }
    if (opt.backend_key) {
        if (!set_source(Options::Source::Backend, *opt.backend_key))
            return usage_error("give one input: --hex, --file, - or KEY --backend URL");
        if (!opt.cache_key) opt.cache_key = opt.backend_key;
    } else if (opt.backend_url) {
        return usage_error("--backend needs a KEY");
    }
    if (opt.source == Options::Source::None) return usage_error("give one input: --hex, --file, - or KEY --backend URL");

    // Keys: the flags, else the environment (both keys from one place).
    if (!opt.master_key) {
        if (opt.previous_keys) return usage_error("--previous-keys needs --master-key");
        if (const char *env = std::getenv("CACHEKIT_MASTER_KEY"); env && *env) {
            opt.master_key = env;
            if (const char *prev = std::getenv("CACHEKIT_PREVIOUS_MASTER_KEYS"); prev && *prev)
                opt.previous_keys = prev;
        }
    }

    std::string data;
    std::optional<double> ttl_seconds;
    switch (opt.source) {
    case Options::Source::Backend:
        if (int rc = fetch_from_backend(opt.backend_url, opt.source_arg, data, ttl_seconds); rc != kExitOk) return rc;
        break;
    case Options::Source::Hex:
        if (!from_hex(opt.source_arg, data)) return usage_error("--hex: not valid hex");
        break;
    case Options::Source::File: {
        std::unique_ptr<FILE, int (*)(FILE *)> f(std::fopen(opt.source_arg.c_str(), "rb"), std::fclose);
        if (!f || !read_stream(f.get(), data))
            return usage_error("cannot read '" + opt.source_arg + "'");
        break;
    }
    case Options::Source::Stdin:
        if (!read_stream(stdin, data)) return usage_error("cannot read standard input");
        break;
    case Options::Source::None:
        break;
    }

    std::unique_ptr<cachekit_keyring, KeyringDeleter> ring;
    if (opt.master_key) {
        cachekit_keyring *raw = nullptr;
        const int rc = cachekit_keyring_new(&raw, opt.master_key->c_str(), c_str_or_null(opt.previous_keys));
        if (rc != CACHEKIT_OK)
            return usage_error(std::string("bad master key: ") + cachekit_error_name(rc) + ": " +
                               cachekit_error_last_message());
        ring.reset(raw);
    }

    Buf report;
    const int rc = cachekit_inspect(report.get(), data.data(), data.size(), ring.get(), c_str_or_null(opt.tenant),
                                    c_str_or_null(opt.cache_key));
    if (rc != CACHEKIT_OK) {
        std::fprintf(stderr, "cachekit inspect: %s: %s\n", cachekit_error_name(rc), cachekit_error_last_message());
        return kExitUsage;
    }

    std::optional<Json> parsed;
    try {
        parsed = Json::parse(report.view());
        if (ttl_seconds) (*parsed)["ttl_seconds"] = *ttl_seconds;  // -1: no expiry
    } catch (const std::exception &) {
        parsed.reset();
    }
    if (opt.json && parsed) {
        std::printf("%s\n", parsed->dump(-1, ' ', false, Json::error_handler_t::replace).c_str());
    } else if (!parsed) {
        std::fputs("cachekit inspect: the report is not valid JSON; printing it as is\n", stderr);
        std::printf("%.*s\n", static_cast<int>(report.size()), report.data());
    } else {
        print_summary(*parsed);
    }
    std::fflush(stdout);
    if (parsed) {
        auto it = parsed->find("checks");
        if (it != parsed->end() && it->is_string() && it->get<std::string>() == "fail") return kExitFail;
        return kExitOk;
    }
    return report.view().find("\"checks\": \"fail\"") != std::string_view::npos ? kExitFail : kExitOk;
}

}  // namespace

int run_inspect(int argc, char **argv) {
    try {
        return inspect(argc, argv);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "cachekit inspect: %s\n", e.what());
        return kExitFail;
    }
}

}  // namespace cachekit_tool
