#!/bin/sh
# difftest reproducer (generated; runs the real xfs_io).
# divergence (return) on ext4 (ext4): return: expected 0 (OK), target returned -22 (EINVAL)
# (found when the model was wrong; the checks below are the corrected model's,
# so a correct 6.1 kernel prints "not reproduced")
# usage: sh repro.sh [DIR]   (DIR on a ext4 mount; as root for drop_caches/remount)
# exit status: 1 and "BUG REPRODUCED" when the kernel still diverges, 0 when not
set -u
DIR=${1:-/mnt/ext4}
XFS_IO=${XFS_IO:-xfs_io}
F0="$DIR/difftest-repro-f0"
rm -f "$F0"; : > "$F0"
remount() {
	set -- $(awk -v m="$DIR" '$2 == m { d=$1; t=$3; o=$4 } END { print d, t, o }' /proc/mounts)
	if [ $# -eq 3 ]; then sync; umount "$DIR" && mount -t "$2" -o "$3" "$1" "$DIR"; else sync; echo 3 > /proc/sys/vm/drop_caches; fi
}
$XFS_IO -c "fzero 3280896 61411" -c "fzero -k 3305472 163840" "$F0"
echo '--- the op that diverges:'
out=$($XFS_IO -c "finsert 745472 17592182587392" "$F0" 2>&1); echo "$out"
F="$F0"
bug=0
# expected (the model as fixed, refmodel/RULES.md D-DT5): EINVAL, with the
# size grown by the insert length (3342307 + 17592182587392)
echo "$out" | grep -q "Invalid argument" || bug=1
[ "$(stat -c %s "$F")" = 17592185929699 ] || bug=1
rm -f "$F0"
if [ $bug = 1 ]; then echo 'BUG REPRODUCED'; exit 1; fi
echo 'not reproduced'; exit 0
