#!/bin/sh
# difftest reproducer (generated; runs the real xfs_io).
# divergence (map) on xfs (xfs): block map: bytes 4096..32768 (blocks 1..7) are . on the target, the model allows {D}
# usage: sh repro.sh [DIR]   (DIR on a xfs mount; as root for drop_caches/remount)
# exit status: 1 and "BUG REPRODUCED" when the kernel still diverges, 0 when not
set -u
DIR=${1:-/mnt/xfs}
XFS_IO=${XFS_IO:-xfs_io}
# needs configuration xfs: mkfs.xfs -b size=4096 DEV; mount -t xfs DEV DIR
# REPRO_DEV=DEV sh repro.sh DIR makes that file system on DEV (erasing it)
# and mounts it on DIR first
if [ -n "${REPRO_DEV:-}" ]; then
	umount "$DIR" 2>/dev/null; mkdir -p "$DIR"
	mkfs.xfs -f -q -b size=4096 "$REPRO_DEV" && mount -t xfs "$REPRO_DEV" "$DIR" ||
		{ echo "repro.sh: making xfs on $REPRO_DEV failed" >&2; exit 2; }
fi
if [ "$(stat -f -c %S "$DIR")" != 4096 ]; then
	echo "repro.sh: $DIR has $(stat -f -c %S "$DIR")-byte blocks; this needs xfs (give REPRO_DEV)" >&2; exit 2
fi
F0="$DIR/difftest-repro-f0"
rm -f "$F0"; : > "$F0"
remount() {
	set -- $(awk -v m="$DIR" '$2 == m { d=$1; t=$3; o=$4 } END { print d, t, o }' /proc/mounts)
	if [ $# -eq 3 ]; then sync; umount "$DIR" && mount -t "$2" -o "$3" "$1" "$DIR"; else sync; echo 3 > /proc/sys/vm/drop_caches; fi
}
$XFS_IO -c "pwrite -q -S 0x41 0 4096" -c "reflink -q $F0 0 262144 4096" -c "pwrite -q -S 0x77 0 32768" -c "fpunch 262144 4096" -c "funshare 131072 4096" -c "fsync" "$F0"
remount
out=
F="$F0"
bug=0
# allowed states per block 1..7 before write-back (D data, U unwritten, . hole, L delayed allocation)
allowed=" D D D D D D D"
filefrag -v -b4096 "$F"
filefrag -v -b4096 "$F" | awk -v lo=1 -v allowed="$allowed" '
/^ *[0-9]+: +[0-9]+\.\./ { a = $2; b = $3; gsub(/[^0-9]/, "", a); gsub(/[^0-9]/, "", b);
  st = index($0, "unwritten") ? "U" : index($0, "delalloc") ? "L" : "D";
  for (k = a + 0; k <= b + 0; k++) state[k] = st }
END { n = split(allowed, al, " "); bad = 0;
  for (k = 1; k <= n; k++) { b = lo + k - 1; s = (b in state) ? state[b] : ".";
    if (index(al[k], s) == 0) { printf "block %d: kernel %s, allowed {%s}\n", b, s, al[k]; bad = 1 } }
  exit bad }' || bug=1
rm -f "$F0"
if [ $bug = 1 ]; then echo 'BUG REPRODUCED'; exit 1; fi
echo 'not reproduced'; exit 0
