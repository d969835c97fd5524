// file-backend.json (the reference Python SDK's FileBackend format): for every
// vector, the file name of the key, the header bytes a write produces (write
// then read the raw file; rows the writer cannot produce - unknown flags or
// reserved bits - are built directly), and the reader's action at
// reader_now_unix_seconds (default 0) through the clock hook. Vectors come
// from CACHEKIT_VECTORS_DIR, else CACHEKIT_VECTORS_DIR_DEFAULT; a missing
// folder or file is a SKIP (exit 77).
#include <sys/stat.h>

#include "codec/json_text.hpp"
#include "l2/file/file_backend.hpp"
#include "l2/file/file_backend_options.hpp"
#include "l2/file/file_format.hpp"

#include "l2_test_support.hpp"

using namespace cachekit;
using namespace cachekit::l2;
using l2test::soon;

namespace {

struct Vector {
    std::string name, key, filename, header, payload, file, action;
    uint64_t expiry = 0, flags = 0, reserved = 0;
    double reader_now = 0;
};

std::vector<Vector> g_vectors;
int g_passed = 0;

std::string text_of(const json::Value &obj, const char *field) {
    const json::Value *v = obj.find(field);
    if (!v || v->type != json::Value::Type::String) throw std::runtime_error(std::string("missing ") + field);
    return v->text;
}

double number_of(const json::Value &obj, const char *field, double fallback) {
    const json::Value *v = obj.find(field);
    if (!v) return fallback;
    if (v->type != json::Value::Type::Number) throw std::runtime_error(std::string("bad ") + field);
    return std::stod(v->text);
}

uint64_t u64_of(const json::Value &obj, const char *field) {
    const json::Value *v = obj.find(field);
    if (!v) return 0;
    return std::stoull(v->text);
}

std::unique_ptr<Backend> open_with_now(const std::string &dir, double now_s) {
    FileConfig c;
    c.directory = dir;
    FileOptions o;
    auto ms = int64_t(now_s * 1000);
    o.now = [ms] { return std::chrono::system_clock::time_point(std::chrono::milliseconds(ms)); };
    return open_file(c, o);
}

void check_vector(void **state) {
    const Vector &v = *static_cast<const Vector *>(*state);
    std::printf("vector %s (%s)\n", v.name.c_str(), v.action.c_str());

    // File name.
    assert_string_equal(filefmt::entry_name(v.key).c_str(), v.filename.c_str());
    // Header encoding, and the file is header + payload.
    auto h = filefmt::encode_header(v.expiry, uint8_t(v.reserved), uint16_t(v.flags));
    assert_true(std::string(h.data(), h.size()) == v.header);
    assert_true(v.header + v.payload == v.file);

    // A write produces exactly these bytes (rows with flags/reserved are
    // beyond what this writer emits).
    if (v.flags == 0 && v.reserved == 0) {
        l2test::TempDir t;
        // For an expiring row, write at expiry - 100 s with a 100 s TTL.
        double now = v.expiry ? double(v.expiry) - 100 : 1700000000;
        auto b = open_with_now(t.path(), now);
        Ttl ttl = v.expiry ? Ttl(std::chrono::seconds(100)) : std::nullopt;
        b->set(v.key, v.payload, ttl, soon());
        std::string raw = l2test::read_file(t / v.filename);
        assert_true(raw == v.file);
        struct stat st;
        assert_int_equal(::stat((t / v.filename).c_str(), &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
    }

    // The reader's action at reader_now on the file as given.
    l2test::TempDir t;
    l2test::write_file(t / v.filename, v.file);
    auto b = open_with_now(t.path(), v.reader_now);
    Buffer out;
    bool hit = b->get(v.key, out.get(), soon());
    if (v.action == "return_payload") {
        assert_true(hit);
        assert_true(out.view() == v.payload);
        assert_true(b->exists(v.key, soon()));
    } else if (v.action == "miss_preserve") {
        assert_false(hit);
        assert_false(b->exists(v.key, soon()));
        assert_true(l2test::read_file(t / v.filename) == v.file);  // kept as it was
    } else if (v.action == "miss_expired") {
        assert_false(hit);
        assert_false(b->exists(v.key, soon()));
        // One second earlier it is still live.
        l2test::write_file(t / v.filename, v.file);
        auto earlier = open_with_now(t.path(), v.reader_now - 1);
        Buffer out2;
        assert_true(earlier->get(v.key, out2.get(), soon()));
        assert_true(out2.view() == v.payload);
    } else {
        fail_msg("unknown reader_action %s", v.action.c_str());
    }
    // Reached only when every assertion above held (cmocka leaves the test
    // at the first that fails).
    std::printf("ok file-backend.json:%s (%s)\n", v.name.c_str(), v.action.c_str());
    ++g_passed;
}

[[noreturn]] void skip_run(const std::string &why) {
    std::printf("SKIP file-backend.json: %s\n", why.c_str());
    std::exit(77);
}

}  // namespace

int main() {
    const char *dir = std::getenv("CACHEKIT_VECTORS_DIR");
    if (!dir || !*dir) dir = std::getenv("CACHEKIT_VECTORS_DIR_DEFAULT");
    if (!dir || !*dir) skip_run("no vector folder (set CACHEKIT_VECTORS_DIR)");
    struct stat st;
    if (::stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) skip_run(std::string("vector folder ") + dir + " is absent");
    std::string path = std::string(dir) + "/file-backend.json";
    if (!l2test::file_exists(path)) skip_run(path + " is absent");
    std::printf("vectors: %s\n", path.c_str());

    json::Value root = json::parse(l2test::read_file(path), CACHEKIT_EINVAL, 16);
    const json::Value *list = root.find("vectors");
    if (!list || list->type != json::Value::Type::Array || list->items.empty()) {
        std::printf("file-backend.json has no vectors\n");
        return 1;
    }
    for (const auto &item : list->items) try {
        Vector v;
        v.name = text_of(item, "name");
        v.key = text_of(item, "key_utf8");
        v.filename = text_of(item, "filename");
        v.header = l2test::hex_decode(text_of(item, "header_hex"));
        v.payload = l2test::hex_decode(text_of(item, "payload_hex"));
        v.file = l2test::hex_decode(text_of(item, "file_hex"));
        v.action = text_of(item, "reader_action");
        v.expiry = u64_of(item, "expiry_unix_seconds");
        v.flags = u64_of(item, "flags");
        v.reserved = u64_of(item, "reserved");
        v.reader_now = number_of(item, "reader_now_unix_seconds", 0);
        g_vectors.push_back(std::move(v));
    } catch (const std::exception &e) {
        // A row this test cannot read is a failure of the run, named.
        const json::Value *name = item.find("name");
        std::printf("FAIL file-backend.json:%s: unreadable row: %s\n",
                    name && name->type == json::Value::Type::String ? name->text.c_str() : "?", e.what());
        return 1;
    }
    std::vector<CMUnitTest> tests;
    for (auto &v : g_vectors) {
        CMUnitTest t{};
        t.name = v.name.c_str();
        t.test_func = check_vector;
        t.initial_state = &v;
        tests.push_back(t);
    }
    int rc = _cmocka_run_group_tests("file-backend.json", tests.data(), tests.size(), nullptr, nullptr);
    const int total = int(g_vectors.size());
    std::printf("conformance file-backend.json: %d vectors passed, %d failed, 0 listed as covered elsewhere (%d total)\n",
                g_passed, total - g_passed, total);
    return rc;
}
