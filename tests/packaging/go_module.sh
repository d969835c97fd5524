#!/usr/bin/env bash
# The Go module as a user resolves it, with no libcachekit installed:
#   - scripts/go-module-release materializes the module (the core copied in);
#   - tests/packaging/go_module/modzip zips it as a proxy does and serves it
#     from a GOPROXY=file:// directory, as version vX.Y.Z-pkgtest.<digest>
#     (a digest of the tree: the module cache never holds stale bytes under it);
#   - a fresh module outside the repository: go get, go build, go test (L1
#     and a Redis round trip), the binary linking no libcachekit.so;
#   - with -tags cachekit_system and no library, the build names what to do.
# Prints the zip's size and each step's time. TAP. Exit 77 (skip) when the
# Go module proxy cannot be reached. GOCACHE/GOMODCACHE: the environment's,
# shared with the go suite.
#   go_module.sh SOURCE_ROOT
set -uo pipefail
src=${1:?source root}
module_path=github.com/libcachekit/libcachekit/wrappers/go
unset LD_LIBRARY_PATH PKG_CONFIG_PATH CGO_LDFLAGS CGO_CFLAGS CGO_CXXFLAGS GOFLAGS
export CGO_ENABLED=1
go_bin=$(command -v go || true)
[[ -z $go_bin && -x /usr/local/go/bin/go ]] && go_bin=/usr/local/go/bin/go
if [[ -z $go_bin ]]; then
    echo "Bail out! the Go toolchain is missing (not on PATH, not at /usr/local/go/bin/go)"
    exit 1
fi
export PATH="$(dirname "$go_bin"):$PATH"
work=$(mktemp -d)
modcache=$("$go_bin" env GOMODCACHE)
# Each tree is its own version: drop it from the shared module cache at the
# end (read-only files there), so the cache does not grow by a copy a run.
cleanup() {
    if [[ -n ${version:-} ]]; then
        chmod -R u+w "$modcache/$module_path@$version" 2>/dev/null
        rm -rf "$modcache/$module_path@$version" "$modcache/cache/download/$module_path/@v/$version".*
    fi
    rm -rf "$work"
}
trap cleanup EXIT
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
fail() { n=$((n + 1)); echo "not ok $n - $*"; echo "1..$n"; exit 1; }
# timed LOG COMMAND...: run with output to LOG; sets $took (seconds)
timed() {
    local log=$1 start
    shift
    start=$(date +%s.%N)
    "$@" >"$log" 2>&1
    local rc=$?
    took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    return $rc
}
echo "# go: $("$go_bin" version); GOPROXY=$("$go_bin" env GOPROXY); GOCACHE=$("$go_bin" env GOCACHE)"
cold=$([[ -z $(ls -A "$("$go_bin" env GOCACHE)" 2>/dev/null) ]] && echo "cold: GOCACHE was empty" || echo "GOCACHE as found")

# The zip tool, from its go.sum: also the probe of the proxy.
if ! timed "$work/modzip.log" "$go_bin" build -C "$src/tests/packaging/go_module/modzip" -mod=readonly \
        -o "$work/modzip" .; then
    cat "$work/modzip.log"
    if grep -qiE 'SECURITY ERROR|checksum mismatch|verifying' "$work/modzip.log"; then
        fail "a module of tests/packaging/go_module/modzip does not match its go.sum"
    fi
    echo "1..0 # SKIP the Go module proxy ($("$go_bin" env GOPROXY)) cannot be reached for golang.org/x/mod"
    exit 77
fi
ok "the zip tool builds from its go.sum (${took} s)"

timed "$work/release.log" "$src/scripts/go-module-release" "$work/module" ||
    { cat "$work/release.log"; fail "scripts/go-module-release materializes the module"; }
find "$work/module" -type l | grep -q . && fail "the materialized module holds no symlinks"
digest=$(cd "$work/module" && find . -type f | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-12)
base=$(sed -n "s/^project([^)]*version: *'\([0-9.]*\)'.*/\1/p" "$src/meson.build" | head -1)
[[ -z $base ]] && base=$(sed -n "s/^ *version: *'\([0-9.]*\)'.*/\1/p" "$src/meson.build" | head -1)
version=v$base-pkgtest.h$digest
ok "go-module-release: $(find "$work/module" -type f | wc -l) files, $(du -sh "$work/module" | cut -f1) (${took} s)"

proxy=$work/proxy
timed "$work/zip.log" "$work/modzip" "$work/module" "$module_path" "$version" "$proxy" ||
    { cat "$work/zip.log"; fail "the module zips as a proxy serves it"; }
zip=$proxy/$module_path/@v/$version.zip
ok "module zip $module_path@$version: $(stat -c %s "$zip") bytes, $(unzip -l "$zip" 2>/dev/null | tail -1 | awk '{print $2}') files (${took} s)"

# A user's module: our module from the file proxy, msgpack from the real one.
export GOPROXY="file://$proxy,$("$go_bin" env GOPROXY)"
export GONOSUMDB=github.com/libcachekit/libcachekit GOFLAGS=-mod=mod
user=$work/consumer
mkdir -p "$user"
cp "$src/tests/packaging/go_module/consumer/"*.go "$user/"
cd "$user" || exit 1
"$go_bin" mod init example.com/consumer >/dev/null 2>&1 || fail "go mod init"
pkg-config --exists cachekit 2>/dev/null && echo "# note: pkg-config finds a cachekit here; the default build does not use it"
timed "$work/get.log" "$go_bin" get "$module_path@$version" ||
    { cat "$work/get.log"; fail "go get $module_path@$version"; }
ok "go get $module_path@$version (${took} s)"
timed "$work/build.log" "$go_bin" build -p 2 -o "$work/consumer-bin" . ||
    { cat "$work/build.log"; fail "go build of the consumer (the bundled core compiled by cgo)"; }
ok "go build -p 2: the bundled core and the consumer (${took} s, $cold)"
if ldd "$work/consumer-bin" | grep -q libcachekit; then
    fail "the binary links no libcachekit.so: $(ldd "$work/consumer-bin" | grep libcachekit)"
fi
out=$("$work/consumer-bin" 2>&1) || fail "the consumer runs: $out"
ok "the binary links no libcachekit.so and runs: $out"
timed "$work/test.log" "$go_bin" test -count=1 -v . ||
    { cat "$work/test.log"; fail "go test of the consumer"; }
grep -q -- '--- PASS: TestRedis' "$work/test.log" || { cat "$work/test.log"; fail "the Redis round trip ran"; }
ok "go test: L1 and a Redis round trip pass (${took} s)"

# The system-library build with no library: the failure says what to do.
if ! pkg-config --exists cachekit 2>/dev/null; then
    if "$go_bin" build -tags cachekit_system -o /dev/null . >"$work/tag.log" 2>&1; then
        fail "-tags cachekit_system built with no libcachekit"
    fi
    grep -q 'cachekit_hint=the cachekit_system build tag links an installed libcachekit' "$work/tag.log" ||
        { cat "$work/tag.log"; fail "the cachekit_system failure names the remedy"; }
    ok "-tags cachekit_system with no libcachekit fails naming the remedy"
fi
echo "1..$n"
