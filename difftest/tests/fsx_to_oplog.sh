#!/bin/sh
# fsx-to-oplog: an fsx op log (the first 60 ops of the 6.1 XFS run that
# found findings/xfs-6.1-unshare-drops-dirty-cow-data) becomes a difftest
# log that difftest parses and replays against the model; bad input is
# refused with exit 2 and nothing on stdout.
# usage: fsx_to_oplog.sh DIFFTEST_BIN
set -u
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
conv=$here/../fsx-to-oplog
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$conv" "$here/data/sample.fsxops" > "$tmp/log" || fail "conversion exit $?"
# skipped ops dropped, one line per other op (mapwrite past EOF: two)
ops=$(grep -c -v '^skip' "$here/data/sample.fsxops")
got=$(grep -c -v '^#' "$tmp/log")
[ "$got" -ge "$ops" ] || fail "$got ops for $ops fsx ops"
grep -q '^# target: xfs$' "$tmp/log" || fail "no target line"
grep -q '^# profile: xfs-6.1$' "$tmp/log" || fail "no profile line"
# the fields go where difftest wants them: the sample's first clone
grep -q '^f0 reflink f0 32768 167936 45056$' "$tmp/log" || fail "clone_range 0x8000 0xb000 0x29000 not converted"
grep -q '^f0 fmode 0x40 55346 42391$' "$tmp/log" || fail "fallocate ... unshare not converted"
"$bin" --replay "$tmp/log" -t model:xfs > "$tmp/out" 2>&1 || fail "replay: $(cat "$tmp/out")"
grep -q "no divergence" "$tmp/out" || fail "replay: $(cat "$tmp/out")"

# bad input: exit 2, a message naming the line, nothing on stdout
printf 'write 0x0 0x10 0x0\nbogus 0x1 0x2 0x3\n' > "$tmp/bad"
"$conv" "$tmp/bad" > "$tmp/o" 2> "$tmp/e"; rc=$?
[ $rc = 2 ] || fail "unknown op: exit $rc"
[ ! -s "$tmp/o" ] || fail "unknown op: output written"
grep -q ':2: unknown fsx op' "$tmp/e" || fail "unknown op: $(cat "$tmp/e")"
printf 'write 0x0 zz 0x0\n' > "$tmp/bad"
"$conv" "$tmp/bad" > /dev/null 2>&1; rc=$?
[ $rc = 2 ] || fail "bad number: exit $rc"
"$conv" -t btrfs "$here/data/sample.fsxops" > /dev/null 2>&1; rc=$?
[ $rc = 2 ] || fail "bad target: exit $rc"
"$conv" > /dev/null 2>&1; rc=$?
[ $rc = 2 ] || fail "no file: exit $rc"
echo "fsx_to_oplog: ok ($got ops)"
