#!/bin/sh
# difftest reproducer (generated; runs the real xfs_io).
# divergence (data) on xfs (xfs): data: pread returned 0x00 at offset 2101248, expected 0x62
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
$XFS_IO -c "truncate 9223372036854710271" -c "falloc -k 2097152 65536" -c "pwrite -q -S 0x62 2097152 65536" -c "finsert 1048576 4096" "$F0"
echo '--- the op that diverges:'
out=$($XFS_IO -c "pread -q 2101248 16" "$F0" 2>&1); echo "$out"
F="$F0"
bug=0
b=$(od -An -tx1 -j 2101248 -N1 "$F" | tr -d ' \n')
echo "byte at 2101248: $b (expected 62)"
[ "$b" = 62 ] || bug=1
rm -f "$F0"
if [ $bug = 1 ]; then echo 'BUG REPRODUCED'; exit 1; fi
echo 'not reproduced'; exit 0
