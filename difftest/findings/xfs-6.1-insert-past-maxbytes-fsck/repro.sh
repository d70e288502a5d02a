#!/bin/sh
# difftest reproducer (generated; runs the real xfs_io).
# divergence (fsck) on xfs (xfs): fsck after unmount: xfs_repair -n /dev/vdb exited 1: | inode 131 - extent exceeds max offset - start 2251799813685488, count 1, physical block 11 | correcting nextents for inode 131 | bad data fork in inode 131 | would have cleared inode 131
# usage: sh repro.sh [DIR]   (DIR on a xfs mount; as root for drop_caches/remount)
# exit status: 1 and "BUG REPRODUCED" when the kernel still diverges, 0 when not
set -u
DIR=${1:-/mnt/xfs}
XFS_IO=${XFS_IO:-xfs_io}
F0="$DIR/difftest-repro-f0"
rm -f "$F0"; : > "$F0"
remount() {
	set -- $(awk -v m="$DIR" '$2 == m { d=$1; t=$3; o=$4 } END { print d, t, o }' /proc/mounts)
	if [ $# -eq 3 ]; then sync; umount "$DIR" && mount -t "$2" -o "$3" "$1" "$DIR"; else sync; echo 3 > /proc/sys/vm/drop_caches; fi
}
$XFS_IO -c "pwrite -q -S 0x22 0 4096" -c "falloc -k 9223372036854710272 4096" -c "finsert 0 1048576" "$F0"
remount
out=
F="$F0"
bug=0
# the last remount's fsck found corruption: unmount, fsck -n, mount again
set -- $(awk -v m="$DIR" '$2 == m { d=$1; t=$3; o=$4 } END { print d, t, o }' /proc/mounts)
sync; umount "$DIR" || { echo "cannot unmount $DIR"; exit 2; }
if [ "$2" = xfs ]; then xfs_repair -n "$1" || bug=1; else e2fsck -fn "$1" || bug=1; fi
mount -t "$2" -o "$3" "$1" "$DIR"
rm -f "$F0"
if [ $bug = 1 ]; then echo 'BUG REPRODUCED'; exit 1; fi
echo 'not reproduced'; exit 0
