#!/usr/bin/env bash
# Installs this build tree into a throwaway DESTDIR and uses it as a user of
# the installed library would, with no LD_LIBRARY_PATH anywhere:
#   - the installed `cachekit` tool starts and loads the installed library
#     (its $ORIGIN-relative rpath);
#   - a CMake project finds the package (find_package + cachekit::cachekit);
#   - a C program built from pkg-config's flags starts (the .pc's rpath).
# Usage: installed_prefix.sh SOURCE_ROOT BUILD_ROOT PREFIX LIBDIR BINDIR
set -euo pipefail
src=$1 build=$2 prefix=$3 libdir=$4 bindir=$5
unset LD_LIBRARY_PATH
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root$prefix
n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
fail() { n=$((n + 1)); echo "not ok $n - $*"; exit 1; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
took() { echo "$(($(now_ms) - $1)) ms"; }  # took START_MS: the time since, for the TAP comments

t=$(now_ms)
meson install -C "$build" --no-rebuild --quiet --destdir "$work/root" >/dev/null
[[ -e $root/$libdir/libcachekit.so && -e $root/$libdir/cmake/cachekit/cachekitConfig.cmake ]] ||
  fail "meson install put the library and its CMake package under libdir"
ok "meson install put the library, cachekit.pc and the CMake package under $libdir"
lib_file=$(realpath "$root/$libdir/libcachekit.so")
echo "# installed: $(find "$work/root" -type f | wc -l) files, $(du -sk "$work/root" | cut -f1) KiB" \
  "($(basename "$lib_file") $(($(stat -c %s "$lib_file") / 1024)) KiB, bin/cachekit" \
  "$(($(stat -c %s "$root/$bindir/cachekit") / 1024)) KiB) in $(took "$t")"

# Loads the installed copy, not the build tree's (the build rpath is gone).
loaded_from() { realpath "$(ldd "$1" | awk '$1 ~ /^libcachekit\.so/ {print $3}')"; }
tool=$root/$bindir/cachekit
[[ $(loaded_from "$tool") == "$root/$libdir/"* ]] || fail "the installed tool resolves libcachekit under its prefix: $(loaded_from "$tool")"
"$tool" --version >/dev/null || fail "the installed tool starts"
ok "the installed tool starts and loads $libdir/libcachekit.so.* by its rpath"

t=$(now_ms)
cmake -S "$src/tests/packaging/cmake_consumer" -B "$work/cmake" -DCMAKE_PREFIX_PATH="$root" \
  -DCMAKE_BUILD_TYPE=Release >"$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; fail "cmake configures the consumer"; }
cmake --build "$work/cmake" >>"$work/cmake.log" 2>&1 || { cat "$work/cmake.log"; fail "cmake builds the consumer"; }
out=$("$work/cmake/consumer") || fail "the CMake-built consumer runs"
version=$(meson introspect "$build" --projectinfo | python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
[[ $out == "$version "* ]] || fail "the consumer reports version $version: $out"
ok "find_package(cachekit) + cachekit::cachekit: a C program builds and runs ($out)"
echo "# CMake consumer: configured, built and run in $(took "$t")"

t=$(now_ms)
pc=(pkg-config --define-variable=prefix="$root")
export PKG_CONFIG_PATH=$root/$libdir/pkgconfig
# shellcheck disable=SC2046 # pkg-config's flags are words
cc -o "$work/pc_consumer" "$src/tests/packaging/cmake_consumer/consumer.c" \
  $("${pc[@]}" --cflags cachekit) $("${pc[@]}" --libs cachekit) || fail "a C program compiles with pkg-config's flags"
pc_out=$("$work/pc_consumer") || fail "the pkg-config-built program starts with no LD_LIBRARY_PATH"
[[ $pc_out == "$out" ]] || fail "both consumers agree: $pc_out vs $out"
ok "pkg-config --cflags --libs cachekit: a C program builds and starts (rpath from the .pc)"
echo "# pkg-config consumer: built and run in $(took "$t")"
echo "1..$n"
