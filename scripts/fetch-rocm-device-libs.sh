#!/usr/bin/env bash
# Fetches the AMD device bitcode libraries that WICK_ROCM_TOOLCHAIN=clang links
# (-DWICK_ROCM_DEVICE_LIBS): Debian 13's rocm-device-libs-17 package (bitcode for LLVM
# 17, which clang 19 reads; targets gfx900-90c, gfx940-942, gfx1010-1036, gfx1100-1103,
# gfx1150/1151), unpacked into a folder. Debian 12's own rocm-device-libs (5.2) stop at
# gfx90a / gfx1030.
#
#   scripts/fetch-rocm-device-libs.sh DIR    prints the bitcode folder (DIR/bitcode)
#
# apt fetches the package from the trixie suite with a private sources list, state and
# cache under DIR/apt (the index signed by the Debian archive keys apt trusts): nothing
# of the system's apt configuration, package lists or installed packages changes, and
# nothing is installed (dpkg -x unpacks the .deb; the package has no dependencies).
# Needs no root. A second run finds the folder complete and fetches nothing.
#   WICK_DEVICE_LIBS_MIRROR  the Debian mirror (default http://deb.debian.org/debian)
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: $0 DIR" >&2
  exit 2
fi
mkdir -p "$1"
dir=$(cd "$1" && pwd)
out="$dir/bitcode"
pkg=rocm-device-libs-17
# One library a file: the common ones, and the ISA library of a target the CI builds for.
if [ -f "$out/ockl.bc" ] && [ -f "$out/ocml.bc" ] && [ -f "$out/oclc_isa_version_1151.bc" ]; then
  echo "$out"
  exit 0
fi

mirror=${WICK_DEVICE_LIBS_MIRROR:-http://deb.debian.org/debian}
apt="$dir/apt"
rm -rf "$apt" "$dir/root" "$out"
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/etc/sources.list.d" "$apt/etc/preferences.d" \
  "$apt/debs"
echo "deb $mirror trixie main" >"$apt/etc/sources.list"
: >"$apt/status"
opts=(-q -o "Dir::Etc::SourceList=$apt/etc/sources.list" -o "Dir::Etc::SourceParts=$apt/etc/sources.list.d"
  -o "Dir::Etc::Preferences=$apt/etc/preferences" -o "Dir::Etc::PreferencesParts=$apt/etc/preferences.d"
  -o "Dir::State=$apt" -o "Dir::State::Lists=$apt/lists" -o "Dir::State::Status=$apt/status"
  -o "Dir::Cache=$apt/cache" -o "Acquire::Languages=none" -o "APT::Get::List-Cleanup=false")
# As root, apt would hand the download to its unprivileged _apt user, which cannot
# write here; as another user it downloads as that user.
if [ "$(id -u)" = 0 ]; then opts+=(-o "APT::Sandbox::User=root"); fi

apt-get "${opts[@]}" update >&2
(cd "$apt/debs" && apt-get "${opts[@]}" download "$pkg" >&2)
deb=$(ls "$apt/debs"/"$pkg"_*.deb)
dpkg-deb -x "$deb" "$dir/root"
found=$(dirname "$(find "$dir/root" -name ockl.bc -path '*amdgcn/bitcode/*' | head -n 1)")
if [ ! -f "$found/oclc_isa_version_1151.bc" ]; then
  echo "fetch-rocm-device-libs: $(basename "$deb") has no bitcode for gfx1151 under $dir/root" >&2
  exit 1
fi
ln -s "${found#"$dir"/}" "$out"
rm -rf "$apt/lists" "$apt/cache"
echo "fetch-rocm-device-libs: $(basename "$deb") unpacked in $dir/root" >&2
echo "$out"
