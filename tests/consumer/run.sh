#!/usr/bin/env bash
# wick as a dependency, the ways a project takes it: installs BUILD (a built wick
# tree) to a fresh prefix and builds tests/consumer against it with find_package(wick);
# builds it against BUILD itself (wick_DIR); compiles the same main.cpp with
# `pkg-config --cflags --libs wick`; builds it with wick as a subproject
# (tests/consumer/subdir, add_subdirectory).
# Each program runs and checks its values. Also checked: the installed CLI runs, and
# no installed binary holds BUILD's path.
#   tests/consumer/run.sh BUILD [WORK (default BUILD/consumer)]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:?usage: tests/consumer/run.sh BUILD [WORK]}" && pwd)
work=${2:-$build/consumer}
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
args=(-G Ninja -DCMAKE_BUILD_TYPE=Release)
if command -v ccache >/dev/null; then args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
fail() { echo "consumer: $*" >&2; exit 1; }

echo "-- install $build to $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; exit 1; }
lib=$(find "$prefix" -name 'libwick.so' | head -n1)
[ -n "$lib" ] || fail "no libwick.so under $prefix"
libdir=$(dirname "$lib")
readelf -d "$lib" | grep -q "SONAME.*libwick\.so\.[0-9]" || fail "libwick.so has no versioned SONAME"
for f in "$libdir"/libwick*.so* "$prefix/bin/wick"; do
  if [ -f "$f" ] && grep -a -q -F "$build" "$f"; then fail "$f holds the build path $build"; fi
done
"$prefix/bin/wick" devices >"$work/devices.log" || { cat "$work/devices.log"; fail "the installed CLI failed"; }

echo "-- find_package(wick)"
cmake -S "$root/tests/consumer" -B "$work/find_package" "${args[@]}" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/find_package" >/dev/null
"$work/find_package/consumer"

echo "-- find_package(wick) from the build tree"
cmake -S "$root/tests/consumer" -B "$work/build_tree" "${args[@]}" -Dwick_DIR="$build" >/dev/null
cmake --build "$work/build_tree" >/dev/null
"$work/build_tree/consumer"

echo "-- pkg-config wick"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
read -r -a flags <<<"$(pkg-config --cflags --libs wick)"
"${CXX:-c++}" -std=c++20 "$root/tests/consumer/main.cpp" "${flags[@]}" \
  -Wl,-rpath,"$(pkg-config --variable=libdir wick)" -o "$work/pkg-config-consumer"
"$work/pkg-config-consumer"

echo "-- add_subdirectory(wick)"
# as a subproject wick needs neither GoogleTest, Google Benchmark nor CLI11; it builds with
# BUILD's WICK_WERROR, so the library's flags (and ccache's objects) are BUILD's
werror=$(sed -n 's/^WICK_WERROR:BOOL=//p' "$build/CMakeCache.txt")
cmake -S "$root/tests/consumer/subdir" -B "$work/subdir" "${args[@]}" -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON -DWICK_WERROR="${werror:-OFF}" >/dev/null
cmake --build "$work/subdir" >/dev/null
"$work/subdir/consumer"
