#!/bin/sh
# difftest reproducer (generated; runs the real xfs_io).
# divergence (map) on fusefs (rangeshift-fusefs): block map: bytes 2510848..2531328 (blocks 613..617) are U on the target, the model allows {.}
# usage: sh repro.sh [DIR]   (DIR on a rangeshift-fusefs mount; as root for drop_caches/remount)
# exit status: 1 and "BUG REPRODUCED" when the kernel still diverges, 0 when not
set -u
DIR=${1:-/mnt/fusefs}
XFS_IO=${XFS_IO:-xfs_io}
F0="$DIR/difftest-repro-f0"
rm -f "$F0"; : > "$F0"
remount() {
	set -- $(awk -v m="$DIR" '$2 == m { d=$1; t=$3; o=$4 } END { print d, t, o }' /proc/mounts)
	if [ $# -eq 3 ]; then sync; umount "$DIR" && mount -t "$2" -o "$3" "$1" "$DIR"; else sync; echo 3 > /proc/sys/vm/drop_caches; fi
}
$XFS_IO -c "truncate 2506753" -c "falloc -k 2502656 28672" "$F0"
echo '--- the op that diverges:'
out=$($XFS_IO -c "truncate 2506753" "$F0" 2>&1); echo "$out"
F="$F0"
bug=0
# allowed states per block 613..617 (D data, U unwritten, . hole)
allowed=" . . . . ."
$XFS_IO -r -c "fiemap -v" "$F"
$XFS_IO -r -c "fiemap -v" "$F" | awk -v lo=613 -v spb=8 -v allowed="$allowed" '
function hex(s,  i, v, c) { v = 0; s = tolower(s); sub(/^0x/, "", s);
  for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c }
  return v }
/^ *[0-9]+: \[/ { r = $2; gsub(/[^0-9.]/, "", r); split(r, ab, "\\.\\.");
  if ($3 == "hole") next; f = hex($NF); st = (f % 4096 >= 2048) ? "U" : "D";
  for (b = int(ab[1] / spb); b <= int(ab[2] / spb); b++) state[b] = st }
END { n = split(allowed, al, " "); bad = 0;
  for (k = 1; k <= n; k++) { b = lo + k - 1; s = (b in state) ? state[b] : ".";
    if (index(al[k], s) == 0) { printf "block %d: kernel %s, allowed {%s}\n", b, s, al[k]; bad = 1 } }
  exit bad }' || bug=1
rm -f "$F0"
if [ $bug = 1 ]; then echo 'BUG REPRODUCED'; exit 1; fi
echo 'not reproduced'; exit 0
