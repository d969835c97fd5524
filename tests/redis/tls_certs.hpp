// Throwaway TLS material for the rediss:// tests and benchmark, made with
// the openssl CLI in a fresh temp dir: CA "ca" and "other-ca"; from ca a
// server cert for 127.0.0.1 and localhost ("server"), one for other.example
// only ("wrong") and a client cert ("client"); from other-ca a client cert
// ("stranger"). EC P-256 keys: fast to make. Files: <dir>/<name>.crt/.key.
#pragma once

#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "redis_server.hpp"

namespace cachekit::testing {

inline bool run_shell(const std::string &command) { return std::system(command.c_str()) == 0; }

// The directory, or "" when the openssl CLI failed.
inline std::string make_tls_certs() {
    char tmpl[] = "/tmp/cachekit-tls-XXXXXX";
    if (!mkdtemp(tmpl)) return "";
    const std::string dir = tmpl;
    const std::string key = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    const std::string cd = "cd " + dir + " && ";
    auto ca = [&](const std::string &name) {
        return run_shell(cd + "openssl req -x509 " + key + " -keyout " + name + ".key -out " + name +
                         ".crt -days 2 -subj /CN=" + name + " >/dev/null 2>&1");
    };
    auto leaf = [&](const std::string &name, const std::string &issuer, const std::string &ext) {
        return run_shell(cd + "printf '" + ext + "\\n' > " + name + ".ext && openssl req " + key + " -keyout " +
                         name + ".key -out " + name + ".csr -subj /CN=" + name +
                         " >/dev/null 2>&1 && openssl x509 -req -in " + name + ".csr -CA " + issuer +
                         ".crt -CAkey " + issuer + ".key -CAcreateserial -days 2 -out " + name + ".crt -extfile " +
                         name + ".ext >/dev/null 2>&1");
    };
    const bool ok = ca("ca") && ca("other-ca") &&
                    leaf("server", "ca", "subjectAltName=DNS:localhost,IP:127.0.0.1") &&
                    leaf("wrong", "ca", "subjectAltName=DNS:other.example") &&
                    leaf("client", "ca", "extendedKeyUsage=clientAuth") &&
                    leaf("stranger", "other-ca", "extendedKeyUsage=clientAuth");
    if (!ok) {
        run_shell("rm -rf " + dir);
        return "";
    }
    return dir;
}

// A private redis-server with a TLS port too (the plain port stays, for the
// harness's readiness check and raw clients).
struct TlsServer {
    std::unique_ptr<RedisServer> server;
    int tls_port = 0;
};

inline TlsServer start_tls_server(const std::string &dir, const std::string &cert, bool auth_clients,
                                  const std::string &password = "") {
    TlsServer s;
    s.tls_port = free_port();
    RedisServerOptions options;
    options.password = password;
    options.extra_args = {"--tls-port", std::to_string(s.tls_port), "--tls-cert-file", dir + "/" + cert + ".crt",
                          "--tls-key-file", dir + "/" + cert + ".key", "--tls-ca-cert-file", dir + "/ca.crt",
                          "--tls-auth-clients", auth_clients ? "yes" : "no"};
    s.server = std::make_unique<RedisServer>(options);
    return s;
}

// The three servers the rediss:// suites share, over one certificate dir:
// main (password s3cret, a cert for 127.0.0.1 and localhost), mutual
// (tls-auth-clients yes) and wrong_name (a cert for other.example only).
struct TlsServers {
    std::string dir;
    TlsServer main, mutual, wrong_name;

    // false (and a line on stderr) when the openssl CLI made no certificates.
    bool start() {
        dir = make_tls_certs();
        if (dir.empty()) {
            std::fprintf(stderr, "cannot make test certificates with the openssl CLI\n");
            return false;
        }
        main = start_tls_server(dir, "server", false, "s3cret");
        mutual = start_tls_server(dir, "server", true);
        wrong_name = start_tls_server(dir, "wrong", false);
        return true;
    }

    void stop() {
        main.server.reset();
        mutual.server.reset();
        wrong_name.server.reset();
        run_shell("rm -rf " + dir);
    }
};

}  // namespace cachekit::testing
