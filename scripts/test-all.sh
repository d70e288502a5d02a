#!/usr/bin/env bash
# test-all.sh - set everything up on a fresh Debian 12 machine and run every test.
#
# Stages (each prints a banner; the first failure stops the run):
#   1. install missing Debian packages (scripts/deps.sh)
#   2. build and run the cmocka suites under ctest, plain (Release)
#   3. the same under AddressSanitizer + UndefinedBehaviorSanitizer
#   4. every libFuzzer harness for a bounded time (scripts/fuzz, clang)
#   5. build the patched Linux 6.1 and 6.12 kernels and initramfs (cached),
#      boot each in QEMU and run the in-guest tests (vm/test-guest); the
#      proposed kernel fixes (kernel-patches/fixes): checked, built, the
#      emitted xfstests of difftest's findings on each kernel with and
#      without them, the seed tests on the fixed 6.1 one
#   6. a CI-sized difftest campaign against ext4, XFS and fusefs in QEMU,
#      on each kernel
#   7. the cheapest mutants of the mutation campaign, end to end, on each
#      kernel
#   8. a sharded difftest campaign through GNU parallel and through a
#      one-node Slurm cluster started for it, each merged report compared
#      with one difftest command's (difftest/cluster/test-cluster, host only)
#
# Build products live in $RANGESHIFT_CACHE (default /var/cache/rangeshift),
# never in the repository.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
export RANGESHIFT_CACHE=${RANGESHIFT_CACHE:-/var/cache/rangeshift}
jobs=$(nproc)

stage() { printf '\n==== %s ====\n' "$*"; }
. scripts/lib.sh
cache_lock

stage "1/8 Debian packages"
bash scripts/deps.sh

stage "2/8 build + unit tests (Release)"
cmake_configure "$RANGESHIFT_CACHE/build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$RANGESHIFT_CACHE/build" -j"$jobs"
ctest --test-dir "$RANGESHIFT_CACHE/build" --output-on-failure --timeout 900 -j"$jobs"

stage "3/8 build + unit tests (ASan + UBSan)"
cmake_configure "$RANGESHIFT_CACHE/build-asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRS_SANITIZE=ON
cmake --build "$RANGESHIFT_CACHE/build-asan" -j"$jobs"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	ctest --test-dir "$RANGESHIFT_CACHE/build-asan" --output-on-failure --timeout 1800 -j"$jobs"

stage "4/8 fuzzing: every harness, ${RS_CI_FUZZ_SECONDS:-30} s each (scripts/fuzz)"
scripts/fuzz --seconds "${RS_CI_FUZZ_SECONDS:-30}" --seed "${RS_CI_FUZZ_SEED:-1}"

stage "5/8 kernel patches, kernel builds, in-guest tests (QEMU): 6.1 and 6.12"
kernel-patches/check-series
vm/test-guest --build-dir "$RANGESHIFT_CACHE/build"
kernel-patches/check-series --kernel 6.12
vm/test-guest --kernel 6.12 --build-dir "$RANGESHIFT_CACHE/build"
# each finding's fstest/expect says pass or fail per kernel (about 4 min:
# fixes/check 40 s, the fixes' incremental build 1 min, three boots)
kernel-patches/fixes/check
fixed=$(vm/build-kernel --fixes)
initrd_args() { echo --initrd "$(vm/build-initramfs --kernel-dir "$(dirname "$1")" \
	--build-dir "$RANGESHIFT_CACHE/build")"; }
unfixed=$(vm/build-kernel)
vm/run --kernel "$unfixed" $(initrd_args "$unfixed") --timeout 900 -- /rangeshift/test-fstests unfixed
vm/run --kernel "$fixed" $(initrd_args "$fixed") --timeout 900 -- /rangeshift/test-fstests fixed
vm/run --kernel "$fixed" $(initrd_args "$fixed") --timeout 1800 -- /rangeshift/run-all test-seeds test-findings
# the same emitted tests on 6.12, without and with fixes/6.12 (two boots)
fixed=$(vm/build-kernel --kernel 6.12 --fixes)
unfixed=$(vm/build-kernel --kernel 6.12)
vm/run --kernel "$unfixed" $(initrd_args "$unfixed") --timeout 900 -- /rangeshift/test-fstests unfixed
vm/run --kernel "$fixed" $(initrd_args "$fixed") --timeout 900 -- /rangeshift/test-fstests fixed

stage "6/8 difftest in QEMU: ext4, XFS, fusefs (CI size), 6.1 and 6.12; 1 KiB blocks"
out=$RANGESHIFT_CACHE/ci/difftest
rm -rf "$out" "$out-6.12"
difftest/difftest-vm --vm-build-dir "$RANGESHIFT_CACHE/build" --out "$out" \
	-N "${RS_CI_OPS:-20000}" -S "${RS_CI_SEED:-1}" -t ext4 -t xfs -t fusefs
# 6.12 with kernel-patches/fixes/6.12, so --strict (no kernel errata):
# observer-free, this seed reaches the series kernel's XFS data loss of
# shifts near s_maxbytes (finding xfs-6.12-shift-near-maxbytes-drops-dirty-pages,
# pinned by its emitted test in stage 5)
difftest/difftest-vm --kernel 6.12 --vm-kernel "$(vm/build-kernel --kernel 6.12 --fixes)" \
	--strict --vm-build-dir "$RANGESHIFT_CACHE/build" --out "$out-6.12" \
	-N "${RS_CI_OPS:-20000}" -S "${RS_CI_SEED:-1}" -t ext4 -t xfs -t fusefs
# blocks smaller than the page (one boot, 96 s host wall at load 10-12; measured
# clean at 2,000 ops, bench/RESULTS.md "Configurations")
rm -rf "$out-config"
difftest/difftest-vm --vm-build-dir "$RANGESHIFT_CACHE/build" --out "$out-config" \
	-N "${RS_CI_CONFIG_OPS:-2000}" -S "${RS_CI_SEED:-1}" -t ext4:bs=1024 -t fusefs:bs=1024

stage "7/8 mutation campaign, the cheapest mutants (CI size), 6.1 and 6.12"
kernel-patches/mutants/campaign --build-dir "$RANGESHIFT_CACHE/build" \
	--out "$RANGESHIFT_CACHE/ci/campaign" -N "${RS_CI_MUTANT_OPS:-20000}" --no-clean 08 12
kernel-patches/mutants/campaign --kernel 6.12 --build-dir "$RANGESHIFT_CACHE/build" \
	--out "$RANGESHIFT_CACHE/ci/campaign-6.12" -N "${RS_CI_MUTANT_OPS:-20000}" --no-clean 08 12

stage "8/8 difftest campaigns on Slurm and GNU parallel (host, no QEMU)"
difftest/cluster/test-cluster "$RANGESHIFT_CACHE/build/difftest/difftest"

echo
echo "test-all: every stage passed"
