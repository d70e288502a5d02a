#!/bin/sh
# difftest reproducer (generated; runs the real xfs_io).
# divergence (data) on ext4:data=journal (ext4): data: first differing byte at offset 459961: expected 0x82, target has 0x00 (pread of 131072 bytes returned 131072, model 131072)
# usage: sh repro.sh [DIR]   (DIR on a ext4 mount; as root for drop_caches/remount)
# exit status: 1 and "BUG REPRODUCED" when the kernel still diverges, 0 when not
# found on /dev/vda: a bug in cached pages may need the same kind of device
set -u
DIR=${1:-/mnt/ext4}
XFS_IO=${XFS_IO:-xfs_io}
# needs configuration ext4:data=journal: mkfs.ext4 -b 4096 DEV; mount -t ext4 -o data=journal DEV DIR
# REPRO_DEV=DEV sh repro.sh DIR makes that file system on DEV (erasing it)
# and mounts it on DIR first
if [ -n "${REPRO_DEV:-}" ]; then
	umount "$DIR" 2>/dev/null; mkdir -p "$DIR"
	mkfs.ext4 -F -q -b 4096 "$REPRO_DEV" && mount -t ext4 -o data=journal "$REPRO_DEV" "$DIR" ||
		{ echo "repro.sh: making ext4:data=journal on $REPRO_DEV failed" >&2; exit 2; }
fi
if [ "$(stat -f -c %S "$DIR")" != 4096 ]; then
	echo "repro.sh: $DIR has $(stat -f -c %S "$DIR")-byte blocks; this needs ext4:data=journal (give REPRO_DEV)" >&2; exit 2
fi
F0="$DIR/difftest-repro-f0"
rm -f "$F0"; : > "$F0"
remount() {
	set -- $(awk -v m="$DIR" '$2 == m { d=$1; t=$3; o=$4 } END { print d, t, o }' /proc/mounts)
	if [ $# -eq 3 ]; then sync; umount "$DIR" && mount -t "$2" -o "$3" "$1" "$DIR"; else sync; echo 3 > /proc/sys/vm/drop_caches; fi
}
# after each op, the reads difftest's checks made (they fill the page cache)
$XFS_IO -c "falloc 0 668857" -c "pread -q -b 8192 0 8192" -c "pread -q -b 5305 663552 5305" -c "mmap -rw 520192 86712" -c "mwrite -S 0x82 522154 84750" -c "munmap" -c "pread -q -b 90808 520192 90808" "$F0"
echo '--- the op that diverges:'
out=$($XFS_IO -c "fcollapse 176128 77824" "$F0" 2>&1); echo "$out"
F="$F0"
bug=0
b=$(od -An -tx1 -j 459961 -N1 "$F" | tr -d ' \n')
echo "byte at 459961: $b (expected 82)"
[ "$b" = 82 ] || bug=1
rm -f "$F0"
if [ $bug = 1 ]; then echo 'BUG REPRODUCED'; exit 1; fi
echo 'not reproduced'; exit 0
