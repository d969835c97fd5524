// Helpers shared by the L2 white-box tests: temp directories, raw file
// access, and cmocka (included LAST: it defines a function-like fail() macro
// that clashes with libstdc++ and cachekit::fail).
#pragma once

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <dirent.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "l2/backend.hpp"
#include "util/buffer.hpp"
#include "util/error.hpp"

namespace l2test {

// A fresh private directory under $TMPDIR (or /tmp), removed on destruction.
class TempDir {
public:
    TempDir() {
        const char *base = std::getenv("TMPDIR");
        std::string tmpl = std::string(base && *base ? base : "/tmp") + "/cachekit-l2-XXXXXX";
        std::vector<char> buf(tmpl.begin(), tmpl.end());
        buf.push_back('\0');
        if (::mkdtemp(buf.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
        path_ = buf.data();
    }
    TempDir(const TempDir &) = delete;
    TempDir &operator=(const TempDir &) = delete;
    ~TempDir() { remove_tree(path_); }

    const std::string &path() const { return path_; }
    std::string operator/(std::string_view name) const { return path_ + "/" + std::string(name); }

    static void remove_tree(const std::string &path) {
        ::nftw(
            path.c_str(),
            [](const char *p, const struct stat *, int, struct FTW *) { return ::remove(p); }, 16,
            FTW_DEPTH | FTW_PHYS);
    }

private:
    std::string path_;
};

inline std::string read_file(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_file(const std::string &path, std::string_view bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
}

inline bool file_exists(const std::string &path) {
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0;
}

inline std::vector<std::string> list_dir(const std::string &path) {
    std::vector<std::string> names;
    if (DIR *d = ::opendir(path.c_str())) {
        while (struct dirent *de = ::readdir(d)) {
            std::string n = de->d_name;
            if (n != "." && n != "..") names.push_back(n);
        }
        ::closedir(d);
    }
    return names;
}

inline size_t count_entries(const std::string &dir) {
    size_t n = 0;
    for (const auto &name : list_dir(dir)) {
        bool hex = name.size() == 32;
        for (char c : name) hex = hex && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
        n += hex;
    }
    return n;
}

inline size_t count_temps(const std::string &dir) {
    size_t n = 0;
    for (const auto &name : list_dir(dir)) n += name.find(".tmp.") != std::string::npos;
    return n;
}

inline std::string hex_decode(std::string_view hex) {
    auto nib = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        throw std::invalid_argument("bad hex");
    };
    std::string out;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(char(nib(hex[i]) * 16 + nib(hex[i + 1])));
    return out;
}

inline cachekit::l2::Deadline soon() { return cachekit::l2::Deadline::after(std::chrono::seconds(10)); }

// The code of the cachekit::Error `fn` throws, or 0.
template <class Fn>
int code_of(Fn &&fn) {
    try {
        fn();
    } catch (const cachekit::Error &e) {
        return e.code();
    }
    return 0;
}

}  // namespace l2test

#include <csetjmp>
#include <cstdarg>
#include <cstddef>
#include <cstdint>

extern "C" {
#include <cmocka.h>
}
