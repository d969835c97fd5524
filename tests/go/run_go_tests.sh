#!/usr/bin/env bash
# Meson glue for the Go binding (wrappers/go), suite 'go':
#   run_go_tests.sh <source root> <build dir>
# Builds and tests the module against the build tree's libcachekit (its
# meson-uninstalled pkg-config file and src/ library dir): go vet, go test
# -race, a CGO_ENABLED=0 build that must fail saying why, and a ~10 s run of
# every fuzz target. Exit 77 (skipped) when the Go module proxy cannot be
# reached for the pinned dependencies; exit 1 when go itself is missing.
set -uo pipefail

src=${1:?source root}
build=${2:?build dir}
module="$src/wrappers/go"

go_bin=$(command -v go || true)
if [[ -z "$go_bin" && -x /usr/local/go/bin/go ]]; then go_bin=/usr/local/go/bin/go; fi
if [[ -z "$go_bin" ]]; then
    echo "FAILED: the Go toolchain is missing (not on PATH, not at /usr/local/go/bin/go): install Go >= 1.22"
    exit 1
fi
export PATH="$(dirname "$go_bin"):$PATH"
export PKG_CONFIG_PATH="$build/meson-uninstalled${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export LD_LIBRARY_PATH="$build/src${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The library dir in CGO_LDFLAGS too: Go's build cache keys a cgo package on
# its sources and CGO_* flags, not on pkg-config's answer, so without it a
# package cached by another build tree (same sources) links with that tree's
# -L, which may be gone.
export CGO_LDFLAGS="-L$build/src ${CGO_LDFLAGS:--O2 -g}"
# The installed-library build (cachekit_system): this tree's library, not a
# second compile of the core by cgo (tests/packaging/go_module.sh builds that).
export GOFLAGS="-mod=readonly -tags=cachekit_system${GOFLAGS:+ $GOFLAGS}"
export CGO_ENABLED=1
if [[ -z "${CACHEKIT_VECTORS_DIR:-}" && -n "${CACHEKIT_VECTORS_DIR_DEFAULT:-}" ]]; then
    export CACHEKIT_VECTORS_DIR="$CACHEKIT_VECTORS_DIR_DEFAULT"
fi
cd "$module" || exit 1
echo "go: $("$go_bin" version); GOCACHE=$("$go_bin" env GOCACHE); GOMODCACHE=$("$go_bin" env GOMODCACHE)"

step() { # step NAME COMMAND...: run, report, stop the suite on failure
    local name=$1 start=$SECONDS
    shift
    echo "== $name: $*"
    if ! "$@"; then
        echo "FAILED: $name"
        exit 1
    fi
    echo "== $name: ok ($((SECONDS - start)) s)"
}

# The pinned modules (go.sum). A download failure that is not a checksum
# mismatch means the proxy is out of reach: skip, and say so.
start=$SECONDS
if ! out=$(timeout 300 "$go_bin" mod download -x 2>&1); then
    echo "$out" | tail -20
    if grep -qiE 'SECURITY ERROR|checksum mismatch|verifying' <<<"$out"; then
        echo "FAILED: a Go module does not match go.sum"
        exit 1
    fi
    echo "SKIPPED: the Go module proxy ($("$go_bin" env GOPROXY)) cannot be reached for the pinned modules of wrappers/go"
    exit 77
fi
echo "== go mod download: ok ($((SECONDS - start)) s)"

# Without cgo the package must not build, and must say why.
if out=$(CGO_ENABLED=0 "$go_bin" build . 2>&1); then
    echo "FAILED: the package built with CGO_ENABLED=0"
    exit 1
elif ! grep -q 'cachekit_needs_cgo' <<<"$out"; then
    echo "$out"
    echo "FAILED: the CGO_ENABLED=0 build failed without naming the reason"
    exit 1
fi
echo "== CGO_ENABLED=0 build: refused, naming cgo (ok)"

step "go vet" "$go_bin" vet ./...
step "go test -race" "$go_bin" test -race -count=1 ./...

# Each fuzz target briefly (go test -fuzz takes one target per run).
for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' ./*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
    step "fuzz $target" "$go_bin" test -run '^$' -fuzz "^${target}\$" -fuzztime 10s .
done
echo "go suite: ok"
