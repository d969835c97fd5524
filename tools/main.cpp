// `cachekit`: the command-line tool installed with libcachekit. Dispatches
// to the subcommands; everything it does goes through the public C API.
#include <cstdio>
#include <string_view>

#include "tool.hpp"

namespace {

void print_usage(FILE *out) {
    std::fputs("usage: cachekit <command> [options]\n"
               "\n"
               "commands:\n"
               "  codec      JSON-lines codec harness: one request per line on stdin,\n"
               "             one response per line on stdout (the conformance protocol)\n"
               "  inspect    describe a stored value (frame, envelope, MessagePack,\n"
               "             ciphertext), given as bytes or as KEY --backend URL;\n"
               "             `cachekit inspect --help` for its options\n"
               "  get        print a raw entry of a backend: get KEY --backend URL\n"
               "  set        write a raw entry: set KEY --hex HEX --backend URL [--ttl S]\n"
               "  del        delete an entry: del KEY --backend URL\n"
               "\n"
               "options:\n"
               "  --version  print the library version\n"
               "  --help     print this help\n"
               "\n"
               "See docs/cli.md.\n",
               out);
}

}  // namespace

int main(int argc, char **argv) {
    using namespace cachekit_tool;
    if (argc < 2) {
        print_usage(stdout);
        return kExitOk;
    }
    const std::string_view command = argv[1];
    if (command == "--help" || command == "-h" || command == "help") {
        print_usage(stdout);
        return kExitOk;
    }
    if (command == "--version" || command == "-V" || command == "version") {
        std::printf("cachekit %s\n", cachekit_version_string());
        return kExitOk;
    }
    if (command == "codec") return run_codec(argc, argv);
    if (command == "inspect") return run_inspect(argc, argv);
    if (command == "get" || command == "set" || command == "del") return run_backend_command(argc, argv);
    std::fprintf(stderr, "cachekit: unknown command '%s'\n", argv[1]);
    print_usage(stderr);
    return kExitUsage;
}
