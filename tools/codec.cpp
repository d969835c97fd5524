// `cachekit codec`: one JSON request per line on stdin, one JSON response per
// line on stdout, in order, flushed after each. This is the conformance
// harness other SDKs drive, so every operation is a direct call of the public
// C API and every failure is reported with the library's stable error name.
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "tool.hpp"

namespace cachekit_tool {
namespace {

using Json = nlohmann::ordered_json;

// Longest request line accepted: room for the hex of a 512 MiB envelope
// (CACHEKIT_ENVELOPE_MAX_SIZE) plus the JSON around it.
constexpr size_t kMaxLineBytes = size_t(1280) << 20;
// Deepest JSON nesting accepted in a request, checked before parsing.
constexpr size_t kMaxJsonDepth = 64;

// A request the tool cannot make sense of: answered with "BadRequest".
struct BadRequest {
    std::string message;
};

// A failure with a C API status: answered with cachekit_error_name(code).
struct ApiError {
    int code;
    std::string message;
};

// Throw the library's last error when a call failed.
void check(int rc) {
    if (rc != CACHEKIT_OK) throw ApiError{rc, cachekit_error_last_message()};
}

[[noreturn]] void invalid_argument(std::string message) { throw ApiError{CACHEKIT_EINVAL, std::move(message)}; }

// ---- request fields ----

const Json *find(const Json &req, const char *name) {
    auto it = req.find(name);
    return it == req.end() ? nullptr : &*it;
}

std::string string_value(const Json &v, const char *name) {
    std::string s = v.get<std::string>();
    if (s.find('\0') != std::string::npos)
        throw BadRequest{std::string("field \"") + name + "\" contains a NUL character"};
    return s;
}

// A required string field.
std::string need_string(const Json &req, const char *name) {
    const Json *v = find(req, name);
    if (!v) throw BadRequest{std::string("missing field \"") + name + "\""};
    if (!v->is_string()) throw BadRequest{std::string("field \"") + name + "\" must be a string"};
    return string_value(*v, name);
}

// An optional string field: absent or null gives nullopt.
std::optional<std::string> opt_string(const Json &req, const char *name) {
    const Json *v = find(req, name);
    if (!v || v->is_null()) return std::nullopt;
    if (!v->is_string()) throw BadRequest{std::string("field \"") + name + "\" must be a string or null"};
    return string_value(*v, name);
}

const char *c_str_or_null(const std::optional<std::string> &s) { return s ? s->c_str() : nullptr; }

bool need_bool(const Json &req, const char *name) {
    const Json *v = find(req, name);
    if (!v) throw BadRequest{std::string("missing field \"") + name + "\""};
    if (!v->is_boolean()) throw BadRequest{std::string("field \"") + name + "\" must be a boolean"};
    return v->get<bool>();
}

std::string decode_hex(const std::string &hex, const char *name) {
    std::string out;
    if (!from_hex(hex, out)) throw BadRequest{std::string("field \"") + name + "\" is not valid hex"};
    return out;
}

// A required hex field, decoded.
std::string need_hex(const Json &req, const char *name) { return decode_hex(need_string(req, name), name); }

// An optional hex field (absent or null gives nullopt), decoded.
std::optional<std::string> opt_hex(const Json &req, const char *name) {
    std::optional<std::string> s = opt_string(req, name);
    if (!s) return std::nullopt;
    return decode_hex(*s, name);
}

bool present(const Json &req, const char *name) {
    const Json *v = find(req, name);
    return v && !v->is_null();
}

// ---- operations ----

struct KeyringDeleter {
    void operator()(cachekit_keyring *k) const { cachekit_keyring_free(k); }
};
using KeyringPtr = std::unique_ptr<cachekit_keyring, KeyringDeleter>;

void op_key_auto(const Json &req, Json &resp) {
    const std::optional<std::string> ns = opt_string(req, "namespace");
    const std::string module = need_string(req, "module");
    const std::string qualname = need_string(req, "qualname");
    const std::string args = need_hex(req, "args");
    const bool integrity = need_bool(req, "integrity");
    // A missing, null or non-string serializer goes to the library as NULL,
    // which rejects it (InvalidArgument): the vectors expect that error.
    std::optional<std::string> identity;
    if (const Json *s = find(req, "serializer"); s && s->is_string()) {
        identity = string_value(*s, "serializer");
        static constexpr std::pair<std::string_view, const char *> kLetters[] = {
            {"s", "std"}, {"a", "auto"}, {"o", "orjson"}, {"w", "arrow"}, {"l", "local"}};
        for (const auto &[letter, name] : kLetters)
            if (*identity == letter) identity = name;
    }
    Buf key;
    check(cachekit_key_auto(key.get(), c_str_or_null(ns), module.c_str(), qualname.c_str(), args.data(), args.size(),
                            integrity ? 1 : 0, c_str_or_null(identity)));
    resp["key"] = key.str();
}

void op_key_interop(const Json &req, Json &resp) {
    const std::string ns = need_string(req, "namespace");
    const std::string operation = need_string(req, "operation");
    const std::string args = need_hex(req, "args");
    Buf key, canonical;
    check(cachekit_key_interop(key.get(), canonical.get(), ns.c_str(), operation.c_str(), args.data(), args.size()));
    resp["key"] = key.str();
    resp["canonical"] = to_hex(canonical.view());
}

void op_msgpack_canonical(const Json &req, Json &resp) {
    const std::string profile_name = need_string(req, "profile");
    const std::string data = need_hex(req, "data");
    // An unknown profile name goes to the library as 0, which rejects it.
    int profile = 0;
    if (profile_name == "args") profile = CACHEKIT_PROFILE_ARGS;
    else if (profile_name == "value") profile = CACHEKIT_PROFILE_VALUE;
    else if (profile_name == "auto_args") profile = CACHEKIT_PROFILE_AUTO_ARGS;
    Buf out;
    check(cachekit_msgpack_canonical(out.get(), data.data(), data.size(), profile));
    resp["data"] = to_hex(out.view());
}

void op_msgpack_check(const Json &req, Json &) {
    const std::string data = need_hex(req, "data");
    uint32_t max_depth = CACHEKIT_MSGPACK_MAX_DEPTH;
    if (const Json *d = find(req, "max_depth"); d && !d->is_null()) {
        if (!d->is_number_unsigned() || d->get<uint64_t>() > UINT32_MAX)
            throw BadRequest{"field \"max_depth\" must be a non-negative integer"};
        max_depth = static_cast<uint32_t>(d->get<uint64_t>());
    }
    check(cachekit_msgpack_check(data.data(), data.size(), max_depth));
}

void op_envelope_wrap(const Json &req, Json &resp) {
    const std::string data = need_hex(req, "data");
    const std::optional<std::string> format = opt_string(req, "format");
    Buf out;
    check(cachekit_envelope_wrap(out.get(), data.data(), data.size(), c_str_or_null(format)));
    resp["envelope"] = to_hex(out.view());
}

void op_envelope_unwrap(const Json &req, Json &resp) {
    const std::string envelope = need_hex(req, "envelope");
    Buf out, format;
    check(cachekit_envelope_unwrap(out.get(), format.get(), envelope.data(), envelope.size()));
    resp["data"] = to_hex(out.view());
    resp["format"] = format.str();
}

void op_frame_encode(const Json &req, Json &resp) {
    const std::string serializer = need_string(req, "serializer");
    const Json *metadata = find(req, "metadata");
    if (!metadata) throw BadRequest{"missing field \"metadata\""};
    if (!metadata->is_object()) throw BadRequest{"field \"metadata\" must be a JSON object"};
    const std::string metadata_text = metadata->dump();
    const std::string payload = need_hex(req, "payload");
    Buf out;
    check(cachekit_frame_encode(out.get(), serializer.c_str(), metadata_text.c_str(), payload.data(), payload.size()));
    resp["frame"] = to_hex(out.view());
}

void op_frame_decode(const Json &req, Json &resp) {
    const std::string frame = need_hex(req, "frame");
    Buf serializer, metadata;
    size_t payload_offset = 0;
    check(cachekit_frame_decode(serializer.get(), metadata.get(), &payload_offset, frame.data(), frame.size()));
    Json meta;
    try {
        meta = Json::parse(metadata.view());
    } catch (const std::exception &e) {
        throw ApiError{CACHEKIT_EINTERNAL,
                       std::string("cachekit_frame_decode returned metadata that is not JSON: ") + e.what()};
    }
    resp["serializer"] = serializer.str();
    resp["metadata"] = std::move(meta);
    resp["payload"] = to_hex(frame.data() + payload_offset, frame.size() - payload_offset);
    resp["version"] = static_cast<unsigned char>(frame[2]);
}

// Decode a master key given as hex with the library's strict decoder.
void master_key_from_hex(unsigned char out[CACHEKIT_KEY_SIZE], const std::string &hex) {
    check(cachekit_master_key_from_hex(out, hex.data(), hex.size()));
}

void op_crypto_derive(const Json &req, Json &resp) {
    const std::string master_hex = need_string(req, "master_key");
    const std::optional<std::string> tenant = opt_string(req, "tenant");
    unsigned char master[CACHEKIT_KEY_SIZE];
    master_key_from_hex(master, master_hex);
    cachekit_derived_keys keys;
    check(cachekit_crypto_derive(&keys, master, sizeof master, c_str_or_null(tenant)));
    resp["encryption_key"] = to_hex(keys.encryption, sizeof keys.encryption);
    resp["authentication_key"] = to_hex(keys.authentication, sizeof keys.authentication);
    resp["cache_keys_key"] = to_hex(keys.cache_keys, sizeof keys.cache_keys);
    resp["fingerprint"] = to_hex(keys.fingerprint, sizeof keys.fingerprint);
}

void op_crypto_aad(const Json &req, Json &resp) {
    const std::optional<std::string> tenant = opt_string(req, "tenant");
    const std::string cache_key = need_string(req, "cache_key");
    const std::string format = need_string(req, "format");
    const bool compressed = need_bool(req, "compressed");
    const std::optional<std::string> original_type = opt_string(req, "original_type");
    Buf out;
    check(cachekit_crypto_aad(out.get(), c_str_or_null(tenant), cache_key.c_str(), format.c_str(), compressed ? 1 : 0,
                              c_str_or_null(original_type)));
    resp["aad"] = to_hex(out.view());
}

// Which key a crypto request names: a master key (+ tenant) or a derived key.
bool uses_master_key(const Json &req) {
    const bool master = present(req, "master_key");
    const bool key = present(req, "key");
    if (master == key) throw BadRequest{"give exactly one of \"master_key\" and \"key\""};
    return master;
}

// The raw 32-byte AES key of a request's "key" field.
std::string derived_key(const Json &req) {
    std::string key = need_hex(req, "key");
    if (key.size() != CACHEKIT_KEY_SIZE)
        invalid_argument("\"key\" must be 32 bytes (64 hex digits); got " + std::to_string(key.size()) + " bytes");
    return key;
}

void op_crypto_encrypt(const Json &req, Json &resp) {
    const bool master = uses_master_key(req);
    const std::string aad = need_hex(req, "aad");
    const std::string plaintext = need_hex(req, "plaintext");
    const std::optional<std::string> nonce = opt_hex(req, "nonce");
    if (nonce && nonce->size() != CACHEKIT_NONCE_SIZE)
        invalid_argument("\"nonce\" must be 12 bytes (24 hex digits); got " + std::to_string(nonce->size()) + " bytes");
    unsigned char key[CACHEKIT_KEY_SIZE];
    if (master) {
        const std::string master_hex = need_string(req, "master_key");
        const std::optional<std::string> tenant = opt_string(req, "tenant");
        unsigned char master_key[CACHEKIT_KEY_SIZE];
        master_key_from_hex(master_key, master_hex);
        cachekit_derived_keys keys;
        check(cachekit_crypto_derive(&keys, master_key, sizeof master_key, c_str_or_null(tenant)));
        std::memcpy(key, keys.encryption, sizeof key);
    } else {
        const std::string raw = derived_key(req);
        std::memcpy(key, raw.data(), sizeof key);
    }
    Buf out;
    check(cachekit_crypto_encrypt(out.get(), key, aad.data(), aad.size(), plaintext.data(), plaintext.size(),
                                  nonce ? reinterpret_cast<const unsigned char *>(nonce->data()) : nullptr));
    resp["ciphertext"] = to_hex(out.view());
}

void op_crypto_decrypt(const Json &req, Json &resp) {
    const bool master = uses_master_key(req);
    const std::string aad = need_hex(req, "aad");
    const std::string ciphertext = need_hex(req, "ciphertext");
    Buf out;
    int key_index = 0;
    if (master) {
        const std::string master_hex = need_string(req, "master_key");
        const std::optional<std::string> tenant = opt_string(req, "tenant");
        std::string previous;
        if (const Json *p = find(req, "previous_keys"); p && !p->is_null()) {
            if (!p->is_array()) throw BadRequest{"field \"previous_keys\" must be an array of hex strings"};
            for (const Json &k : *p) {
                if (!k.is_string()) throw BadRequest{"field \"previous_keys\" must be an array of hex strings"};
                if (!previous.empty()) previous += ',';
                previous += string_value(k, "previous_keys");
            }
        }
        const std::optional<std::string> fingerprint = opt_hex(req, "fingerprint");
        if (fingerprint && fingerprint->size() != CACHEKIT_FINGERPRINT_SIZE)
            invalid_argument("\"fingerprint\" must be 16 bytes (32 hex digits); got " +
                             std::to_string(fingerprint->size()) + " bytes");
        cachekit_keyring *raw_ring = nullptr;
        check(cachekit_keyring_new(&raw_ring, master_hex.c_str(), previous.empty() ? nullptr : previous.c_str()));
        KeyringPtr ring(raw_ring);
        check(cachekit_keyring_decrypt(ring.get(), out.get(), &key_index, c_str_or_null(tenant),
                                       fingerprint ? reinterpret_cast<const unsigned char *>(fingerprint->data())
                                                   : nullptr,
                                       aad.data(), aad.size(), ciphertext.data(), ciphertext.size()));
    } else {
        const std::string key = derived_key(req);
        check(cachekit_crypto_decrypt(out.get(), reinterpret_cast<const unsigned char *>(key.data()), aad.data(),
                                      aad.size(), ciphertext.data(), ciphertext.size()));
    }
    resp["plaintext"] = to_hex(out.view());
    resp["key_index"] = key_index;
}

using Handler = void (*)(const Json &req, Json &resp);

struct Operation {
    std::string_view name;
    Handler handler;
};

constexpr Operation kOperations[] = {
    {"key.auto", op_key_auto},
    {"key.interop", op_key_interop},
    {"msgpack.canonical", op_msgpack_canonical},
    {"msgpack.check", op_msgpack_check},
    {"envelope.wrap", op_envelope_wrap},
    {"envelope.unwrap", op_envelope_unwrap},
    {"frame.encode", op_frame_encode},
    {"frame.decode", op_frame_decode},
    {"crypto.derive", op_crypto_derive},
    {"crypto.aad", op_crypto_aad},
    {"crypto.encrypt", op_crypto_encrypt},
    {"crypto.decrypt", op_crypto_decrypt},
};

Json failure(Json resp, const char *name, std::string_view message) {
    resp["ok"] = false;
    resp["error"] = name;
    resp["message"] = message;
    return resp;
}

// Answer one non-blank request line. Never throws.
Json answer(std::string_view line, bool too_long) {
    Json head = Json::object();  // {"id": ...} when the request carries one
    try {
        if (too_long)
            return failure(head, "BadRequest",
                           "request line longer than " + std::to_string(kMaxLineBytes) + " bytes");
        if (json_nesting_exceeds(line, kMaxJsonDepth))
            return failure(head, "BadRequest", "request nests JSON deeper than " + std::to_string(kMaxJsonDepth) +
                                                   " levels");
        Json req;
        try {
            req = Json::parse(line);
        } catch (const Json::exception &e) {
            return failure(head, "BadRequest", std::string("not JSON: ") + e.what());
        }
        if (!req.is_object()) return failure(head, "BadRequest", "a request must be a JSON object");
        if (const Json *id = find(req, "id")) head["id"] = *id;
        const Json *op = find(req, "op");
        if (!op) return failure(head, "BadRequest", "missing field \"op\"");
        if (!op->is_string()) return failure(head, "BadRequest", "field \"op\" must be a string");
        const std::string &name = op->get_ref<const std::string &>();
        for (const Operation &operation : kOperations) {
            if (name != operation.name) continue;
            Json resp = head;
            resp["ok"] = true;
            try {
                operation.handler(req, resp);
            } catch (const BadRequest &e) {
                return failure(head, "BadRequest", e.message);
            } catch (const ApiError &e) {
                return failure(head, cachekit_error_name(e.code), e.message);
            }
            return resp;
        }
        return failure(head, "BadRequest", "unknown op \"" + name + "\"");
    } catch (const std::bad_alloc &) {
        return failure(head, cachekit_error_name(CACHEKIT_ENOMEM), "out of memory");
    } catch (const std::exception &e) {
        return failure(head, cachekit_error_name(CACHEKIT_EINTERNAL), e.what());
    }
}

// Reads a file descriptor line by line, keeping at most kMaxLineBytes of a line (the rest
// is consumed and the line is flagged as too long).
class LineReader {
public:
    explicit LineReader(int fd) : fd_(fd), chunk_(size_t(1) << 16) {}

    // False at end of input with nothing read.
    bool next(std::string &line, bool &too_long) {
        line.clear();
        too_long = false;
        bool got_any = false;
        for (;;) {
            if (pos_ == len_) {
                pos_ = len_ = 0;
                if (!fill()) return got_any;
            }
            got_any = true;
            const char *start = chunk_.data() + pos_;
            const void *nl = std::memchr(start, '\n', len_ - pos_);
            const size_t take = nl ? size_t(static_cast<const char *>(nl) - start) : len_ - pos_;
            if (!too_long) {
                if (line.size() + take > kMaxLineBytes) {
                    too_long = true;
                    line.clear();
                    line.shrink_to_fit();
                } else {
                    line.append(start, take);
                }
            }
            pos_ += take;
            if (nl) {
                ++pos_;  // the newline
                return true;
            }
        }
    }

    bool failed() const { return failed_; }

private:
    // Read what is available now (not a whole chunk: requests arrive one at a
    // time from a driver that waits for each answer). False at EOF or error.
    bool fill() {
        for (;;) {
            const ssize_t n = ::read(fd_, chunk_.data(), chunk_.size());
            if (n > 0) {
                len_ = static_cast<size_t>(n);
                return true;
            }
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) failed_ = true;
            return false;
        }
    }

    int fd_;
    bool failed_ = false;
    std::vector<char> chunk_;
    size_t pos_ = 0;
    size_t len_ = 0;
};

void print_codec_usage(FILE *out) {
    std::fputs("usage: cachekit codec\n"
               "Reads one JSON request per line on standard input and writes one JSON\n"
               "response per line on standard output (see docs/cli.md).\n",
               out);
}

}  // namespace

std::string codec_answer_line(std::string_view line) {
    return answer(line, false).dump(-1, ' ', false, Json::error_handler_t::replace);
}

int run_codec(int argc, char **argv) {
    if (argc > 2) {
        const std::string_view arg = argv[2];
        if (arg == "--help" || arg == "-h") {
            print_codec_usage(stdout);
            return kExitOk;
        }
        std::fprintf(stderr, "cachekit codec: unexpected argument '%s'\n", argv[2]);
        print_codec_usage(stderr);
        return kExitUsage;
    }
    // A driver that goes away gets a clean exit (1), not a SIGPIPE death.
    std::signal(SIGPIPE, SIG_IGN);
    LineReader reader(STDIN_FILENO);
    std::string line;
    bool too_long = false;
    while (reader.next(line, too_long)) {
        if (!too_long && is_blank(line)) continue;
        std::string text;
        try {
            text = too_long ? answer(line, true).dump(-1, ' ', false, Json::error_handler_t::replace)
                            : codec_answer_line(line);
        } catch (...) {
            text = std::string(R"({"ok":false,"error":")") + cachekit_error_name(CACHEKIT_EINTERNAL) +
                   R"(","message":"could not write the response"})";
        }
        text += '\n';
        if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
            std::fprintf(stderr, "cachekit codec: cannot write to standard output: %s\n", std::strerror(errno));
            return kExitFail;
        }
    }
    if (reader.failed()) {
        std::fprintf(stderr, "cachekit codec: cannot read standard input: %s\n", std::strerror(errno));
        return kExitFail;
    }
    return kExitOk;
}

}  // namespace cachekit_tool
