#!/usr/bin/env bash
# The Rust crates as a user gets them (meson suite `packaging`, TAP):
#   1. `cargo package` of libcachekit-sys, libcachekit-macros and libcachekit from the
#      committed tree (--no-verify: see below), and the .crate files' sizes;
#   2. the .crate files unpacked into a temp dir, where libcachekit-sys carries the
#      core's sources (core/src, core/include) and every crate its LICENSE;
#   3. a fresh Cargo project outside the repository (tests/packaging/rust_app) that
#      depends on `libcachekit = "0.2"`, its [patch.crates-io] naming the unpacked
#      crates, seeded with wrappers/rust/Cargo.lock (the pinned versions), built with
#      no libcachekit anywhere (no PKG_CONFIG_PATH, LD_LIBRARY_PATH, CACHEKIT_*):
#      the default feature `bundled` compiles the core into the program;
#   4. the program: #[cached] on an L1-only cache (a miss, then a hit) and on the
#      default cache against a redis-server started here on a free loopback port
#      (a miss then a hit; a second process gets the value from Redis);
#   5. ldd: the program needs no libcachekit.so.
# Prints each step's time. Skipped (a TAP skip plan) when crates.io cannot be reached
# or redis-server is not installed: meson counts exit 77 of a TAP test as an error.
# Usage: rust_crates.sh SOURCE_ROOT [TARGET_DIR]
#   TARGET_DIR: cargo's target dir; the rust suite's (tests/rust: cargo-target) lets
#   the registry crates they share build once (the crates unpack beside it, in
#   TARGET_DIR/packaged-crates, so a rerun does not compile the core again). CARGO_HOME is the rust suite's too
#   (the caller's), so nothing is downloaded twice.
# CACHEKIT_PACKAGE_ALLOW_DIRTY=1 packages uncommitted changes too (cargo --allow-dirty).
set -uo pipefail
src=$(cd "$1" && pwd)
target_dir=${2:-}
work=$(mktemp -d)
redis_pid=
cleanup() {
  [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null && wait "$redis_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
fail() { n=$((n + 1)); echo "not ok $n - $*"; exit 1; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
timings=()
t_start=$SECONDS
# A failed cargo step: a skip when the registry cannot be reached, else a failure.
cargo_failed() {
  local what=$1 log=$2
  # A stale lock file is ours to fix, not the network's (its message says "network" too).
  if grep -q "because --locked was passed" "$log"; then
    tail -20 "$log" | sed 's/^/# /'
    fail "$what: wrappers/rust/Cargo.lock is out of date (cargo update -p <crate>, commit it)"
  fi
  if grep -qiE "failed to (download|get|query|fetch|load source)|could not resolve|network|timed out|spurious|connect" "$log" &&
    ! grep -qE "^error(\[E[0-9]+\])?: (could not compile|linking with)" "$log"; then
    tail -20 "$log" | sed 's/^/# /'
    skip_all "crates.io cannot be reached ($what needs the index or a download)"
  fi
  tail -60 "$log" | sed 's/^/# /'
  fail "$what"
}

cargo=$(command -v cargo || true)
if [ -z "$cargo" ] && [ -x "$HOME/.cargo/bin/cargo" ]; then cargo=$HOME/.cargo/bin/cargo; fi
[ -n "$cargo" ] || fail "cargo is on PATH or in ~/.cargo/bin (install a Rust toolchain: rustup)"
export PATH="$(dirname "$cargo"):$PATH" CARGO_TERM_COLOR=never
command -v redis-server >/dev/null || skip_all "redis-server is not installed (apt-get install redis-server)"
# Nothing of a libcachekit build or install may be visible to the build or the program.
unset PKG_CONFIG_PATH LD_LIBRARY_PATH CACHEKIT_SYSTEM CACHEKIT_LIB_DIR CACHEKIT_INCLUDE_DIR DOCS_RS
if [ -n "$target_dir" ]; then mkdir -p "$target_dir" && target_dir=$(cd "$target_dir" && pwd); fi

# 1. --no-verify: verifying would build each crate once more in target/package (the
# core a second time, minutes on 2 cores); step 3 is the stronger check: a project of
# the user's, outside the workspace, built from the unpacked files alone.
# With a shared target dir the crates land in a fixed folder beside it, so a rerun
# finds the core's objects fresh instead of compiling a package at a new path; a temp
# folder otherwise. Either way outside every workspace. The .crate's files all carry
# one fixed time, so sync_tree copies only the files whose bytes changed (new times:
# cargo rebuilds what they touch) and keeps the others' times (fresh).
crates=${target_dir:+$target_dir/packaged-crates}
crates=${crates:-$work/crates}
sync_tree() {
  local from=$1 to=$2 rel
  mkdir -p "$to"
  (cd "$from" && find . -type f) | while read -r rel; do
    cmp -s "$from/$rel" "$to/$rel" || { mkdir -p "$(dirname "$to/$rel")" && cp "$from/$rel" "$to/$rel"; }
  done
  (cd "$to" && find . -type f) | while read -r rel; do
    [ -f "$from/$rel" ] || rm -f "$to/$rel"
  done
}
allow=()
[ "${CACHEKIT_PACKAGE_ALLOW_DIRTY:-0}" = 1 ] && allow=(--allow-dirty)
t=$SECONDS
(cd "$src/wrappers/rust" && "$cargo" package --locked --no-verify "${allow[@]}" \
  -p libcachekit-sys -p libcachekit-macros -p libcachekit --target-dir "$work/package-target" \
  >"$work/package.log" 2>&1) || cargo_failed "cargo package of the three crates" "$work/package.log"
timings+=("cargo package (3 crates): $((SECONDS - t)) s")
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$src/wrappers/rust/Cargo.toml" | head -1)
mkdir -p "$crates" "$work/unpacked"
for crate in libcachekit-sys libcachekit-macros libcachekit; do
  file=$work/package-target/package/$crate-$version.crate
  [ -f "$file" ] || fail "cargo package wrote $crate-$version.crate"
  echo "# $crate-$version.crate: $(stat -c %s "$file") bytes, $(tar tzf "$file" | wc -l) files"
  tar xzf "$file" -C "$work/unpacked" || fail "unpack $crate-$version.crate"
  sync_tree "$work/unpacked/$crate-$version" "$crates/$crate"
  [ -f "$crates/$crate/LICENSE" ] || fail "$crate-$version.crate carries LICENSE"
done
ok "cargo package: libcachekit-sys, libcachekit-macros, libcachekit $version (each with LICENSE)"

# 2. Real files, not symlinks: the .crate must not point back into the repository.
sys=$crates/libcachekit-sys
[ -f "$sys/core/include/cachekit/cachekit.h" ] && [ -f "$sys/core/include/cachekit/version.h.in" ] &&
  [ -f "$sys/core/src/capi/cache_api.cpp" ] && [ ! -L "$sys/core/src" ] ||
  fail "libcachekit-sys's .crate carries core/src and core/include as files"
ok "libcachekit-sys carries the core: $(find "$sys/core/src" -name '*.cpp' | wc -l) .cpp files, core/include"

# 3. The fresh project.
app=$work/app
mkdir -p "$app"
cp -r "$src/tests/packaging/rust_app/src" "$app/"
sed "s|@CRATES@|$crates|" "$src/tests/packaging/rust_app/Cargo.toml.in" >"$app/Cargo.toml"
cp "$src/wrappers/rust/Cargo.lock" "$app/Cargo.lock"
export CARGO_TARGET_DIR=${target_dir:-$work/target}
t=$SECONDS
(cd "$app" && "$cargo" build >"$work/build.log" 2>&1) || cargo_failed "cargo build of the fresh project" "$work/build.log"
timings+=("cargo build of the fresh project (bundled core): $((SECONDS - t)) s")
pkgid=$(cd "$app" && "$cargo" pkgid --offline libcachekit-sys 2>&1)
[[ $pkgid == "path+file://$sys#"* ]] || fail "the fresh project's libcachekit-sys is the unpacked crate: $pkgid"
bin=$CARGO_TARGET_DIR/debug/rust-app
[ -x "$bin" ] || fail "cargo build wrote $bin"
# Every crate at the version Cargo.lock pins (the seed only loses the dev-dependencies).
lock_pairs() { awk '/^name = / {n = $3} /^version = / && n != "" {print n, $3}' "$1" | sort -u; }
drifted=$(comm -13 <(lock_pairs "$src/wrappers/rust/Cargo.lock") <(lock_pairs "$app/Cargo.lock") | grep -v '"rust-app"')
[ -z "$drifted" ] || fail "the fresh project resolves to the versions wrappers/rust/Cargo.lock pins, not: $drifted"
ok "a fresh project outside the repository builds against the packaged crates (libcachekit = \"0.2\", pinned versions)"

# 4. Redis on a free loopback port (the kernel picks one; redis-server takes it at once).
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
  --dir "$work" >"$work/redis.log" 2>&1 &
redis_pid=$!
for _ in $(seq 100); do
  [ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] && break
  kill -0 "$redis_pid" 2>/dev/null || { cat "$work/redis.log" | sed 's/^/# /'; fail "redis-server starts on port $port"; }
  sleep 0.1
done
export CACHEKIT_REDIS_URL=redis://127.0.0.1:$port/0
cd "$work" || fail "cd to the temp dir"
first=$("$bin" first) || fail "the program runs: $first"
echo "# $first"
[[ $first == *" local=49,49 local_calls=1 "* ]] || fail "L1-only #[cached]: a miss then a hit ($first)"
lib_version=${first#*version=}
ok "cached() on an L1-only cache: one call for two lookups (library version ${lib_version%% *})"
[[ $first == *" remote=hello_42,hello_42 remote_calls=1" ]] || fail "default cache: a miss then a hit ($first)"
second=$("$bin" second) || fail "the program runs a second time: $second"
echo "# $second"
[[ $second == *" remote=hello_42,hello_42 remote_calls=0" ]] || fail "a second process reads the value from Redis ($second)"
ok "cached() on the default cache (Redis on port $port): a miss, a hit, and a hit from a second process"

# 5. The core is in the program, not in a shared library.
deps=$(ldd "$bin") || fail "ldd $bin"
if grep -q libcachekit <<<"$deps"; then fail "the program needs no libcachekit.so: $deps"; fi
if grep -q "not found" <<<"$deps"; then fail "ldd finds every library: $deps"; fi
ok "ldd: no libcachekit.so ($(awk '/=>/ {print $1}' <<<"$deps" | tr '\n' ' '))"

timings+=("total: $((SECONDS - t_start)) s")
for line in "${timings[@]}"; do echo "# time: $line"; done
echo "1..$n"
