#!/usr/bin/env bash
# main.sh - rangeshift's main job from a fresh Debian 12 machine: install what
# is missing, build the project, build the patched Linux kernel (6.1, or 6.12
# with --kernel 6.12) and its initramfs (cached in $RANGESHIFT_CACHE), boot it
# in QEMU and run difftest against ext4, XFS and fusefs there.
#
#   bash scripts/main.sh                 # small default: -N 2000 on ext4, xfs, fusefs
#   bash scripts/main.sh --ops 1e6       # the headline campaign (one VM: -j 2
#                                        # on 2 cores is 2.3x slower, see bench/RESULTS.md)
#   bash scripts/main.sh --kernel 6.12   # the same on Linux 6.12
#   bash scripts/main.sh --help          # difftest's and difftest-vm's options
#
# Arguments are difftest's (difftest/README.md); with no -t, all three targets.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
export RANGESHIFT_CACHE=${RANGESHIFT_CACHE:-/var/cache/rangeshift}
build=$RANGESHIFT_CACHE/build

case " $* " in
*" -h "*|*" --help "*)
	sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
	exec "$repo/difftest/difftest-vm" --help ;;
esac

. "$repo/scripts/lib.sh"
cache_lock
bash "$repo/scripts/deps.sh"
cmake_configure "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j"$(nproc)" >/dev/null

args=("$@")
[ ${#args[@]} -gt 0 ] || args=(-N 2000)
case " ${args[*]} " in
*" -t "*|*" --target "*) ;;
*) args+=(-t ext4 -t xfs -t fusefs) ;;
esac
exec "$repo/difftest/difftest-vm" --vm-build-dir "$build" --out "${DIFFTEST_OUT:-$PWD/difftest-out}" "${args[@]}"
