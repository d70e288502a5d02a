#!/bin/sh
# difftest reproducer (generated, then put in one xfs_io session by hand:
# a separate xfs_io for the direct read closes the file first, and the
# close frees the post-EOF preallocation the bug needs, xfs_release()).
# divergence (return) on xfs (xfs): return: expected 4096 (OK), target returned -5 (EIO)
# usage: sh repro.sh [DIR]   (DIR on a xfs mount; as root for drop_caches/remount)
# exit status: 1 and "BUG REPRODUCED" when the kernel still diverges, 0 when not
# expected values: the model's intended semantics (difftest --strict),
# without the kernel errata of refmodel/ERRATA.md
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
echo '--- the ops, in one xfs_io: file 1 is the O_DIRECT descriptor'
out=$(printf '%s\n' "open -d $F0" "file 0" "falloc 3633152 19050" \
	"pwrite -q -S 0x5c 10366976 32768" "fzero 10403840 4096" \
	"file 1" "pread -q -b 53248 10403840 53248" |
	$XFS_IO "$F0" 2>&1 >/dev/null | grep -v -e '^Cannot read termcap' -e '^using dumb terminal')
echo "$out"
bug=0
# expected: success (4096 bytes, the block up to EOF)
echo "$out" | grep -q ": " && bug=1
rm -f "$F0"
if [ $bug = 1 ]; then echo 'BUG REPRODUCED'; exit 1; fi
echo 'not reproduced'; exit 0
