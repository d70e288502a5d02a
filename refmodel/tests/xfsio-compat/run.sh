#!/bin/bash
# SPDX-License-Identifier: MIT
#
# run.sh RMIO [SCRIPT.cmds...] - the xfs_io comparison test: every script
# (one xfs_io command a line; '#' lines are comments, "#% needs: CMD..."
# names the fallocate commands it needs, "#% flags: -r" adds command-line
# flags for both programs) runs through the real xfs_io on a
# real file and through rmio, and stdout, stderr and the exit status must
# be equal after masking what the model cannot know:
#   - the timing line of pwrite/pread ("N bytes, M ops; T (R/sec ...)");
#   - physical blocks: fiemap's BLOCK-RANGE values and the padding after
#     that column (its width follows the disk addresses);
#   - stat.ino and the stat.[amc]time values;
#   - on XFS, fsxattr.xflags (has-xattr depends on the security xattrs a
#     file gets at creation, the prealloc flag is not modelled) and
#     fsxattr.nextents (it counts XFS's speculative preallocation past
#     EOF, a latitude the model leaves open).
#
# Where: the scratch directory under ${TMPDIR:-/tmp} when its file system is
# ext4 or XFS (the profile follows it); as root, also an ext4 and an XFS
# image on a loop device (so finsert/fcollapse are tested even where the
# host's /tmp is tmpfs).  A script whose fallocate commands the file system
# refuses (probed once per file system) is skipped with the reason.  Exit
# 0 all compared scripts equal, 1 a difference, 77 (ctest SKIP) when no
# script could be compared at all, with the reason.
set -u

RMIO=${1:?usage: run.sh RMIO [SCRIPT.cmds...]}
shift
HERE=$(cd "$(dirname "$0")" && pwd)
if [ $# -eq 0 ]; then
	set -- "$HERE"/*.cmds
fi
XFS_IO=${XFS_IO:-$(command -v xfs_io || echo /usr/sbin/xfs_io)}
T=60	# seconds any one xfs_io, rmio, mount or mkfs may take

if [ ! -x "$XFS_IO" ]; then
	echo "SKIP: xfs_io not found (Debian package xfsprogs; scripts/deps.sh installs it)"
	exit 77
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/xfsio-compat.XXXXXX")
MNTS=()
cleanup() {
	for m in "${MNTS[@]}"; do
		timeout $T umount "$m" 2>/dev/null
	done
	rm -rf "$WORK"
}
trap cleanup EXIT

compared=0
failed=0

# The masks: see the header.
mask() {
	sed -E \
	    -e 's/^[0-9.]+ ([KMGTPE]iB|bytes), [0-9]+ ops; .*$/TIMING/' \
	    -e 's/^( *[0-9]+: \[[0-9]+\.\.[0-9]+\]: +)[0-9]+\.\.[0-9]+ +/\1PHYS /' \
	    -e 's/^( *[0-9]+: \[[0-9]+\.\.[0-9]+\]: +)hole +/\1hole /' \
	    -e 's/^( EXT: FILE-OFFSET +)BLOCK-RANGE +/\1BLOCK-RANGE /' \
	    -e 's/^(	[0-9]+: \[[0-9]+\.\.[0-9]+\]: )[0-9]+\.\.[0-9]+/\1PHYS/' \
	    -e 's/^stat\.ino = [0-9]+$/stat.ino = INO/' \
	    -e 's/^stat\.([amc])time = .*$/stat.\1time = TIME/' \
	    -e 's/^fsxattr\.xflags = .*$/fsxattr.xflags = FLAGS/' \
	    -e 's/^fsxattr\.nextents = [0-9]+$/fsxattr.nextents = N/'
}

# probe DIR: which of the fallocate commands DIR's file system does.
probe() {
	local f=$1/.probe cmd ok=""
	for cmd in fpunch fzero finsert fcollapse; do
		rm -f "$f"
		if timeout $T "$XFS_IO" -f -c "pwrite -q 0 64k" -c "$cmd 4k 4k" "$f" \
			>/dev/null 2>&1; then
			ok="$ok $cmd"
		fi
	done
	rm -f "$f"
	echo "$ok"
}

# compare DIR PROFILE WHAT: every script on one file system.
compare() {
	local dir=$1 profile=$2 what=$3 bs have script name needs flags n cmds line
	shift 3
	bs=$(stat -f -c %S "$dir")
	have=$(probe "$dir")
	echo "== $what: $dir, profile $profile, block size $bs, fallocate modes:$have"
	for script in "$@"; do
		[ -f "$script" ] || continue
		name=$(basename "$script" .cmds)
		needs=$(sed -n 's/^#% needs://p' "$script")
		flags=$(sed -n 's/^#% flags://p' "$script")
		for n in $needs; do
			case " $have " in
			*" $n "*) ;;
			*) echo "SKIP $what/$name: the file system refuses $n"
			   continue 2 ;;
			esac
		done
		cmds=()
		while IFS= read -r line; do
			case "$line" in ''|'#'*) continue ;; esac
			cmds+=(-c "$line")
		done <"$script"
		# the same relative name for both, so fd.path and the fiemap
		# header match
		rm -f "$dir/$name"
		(cd "$dir" && timeout $T "$XFS_IO" -f $flags "${cmds[@]}" "$name" \
			>"$WORK/x.out" 2>"$WORK/x.err"; echo "exit $?" >>"$WORK/x.err")
		(cd "$dir" && timeout $T "$RMIO" -p "$profile" -b "$bs" -f $flags "${cmds[@]}" "$name" \
			>"$WORK/r.out" 2>"$WORK/r.err"; echo "exit $?" >>"$WORK/r.err")
		rm -f "$dir/$name"
		mask <"$WORK/x.out" >"$WORK/x.outm"
		mask <"$WORK/r.out" >"$WORK/r.outm"
		compared=$((compared + 1))
		if diff -u --label "xfs_io stdout" --label "rmio stdout" \
			"$WORK/x.outm" "$WORK/r.outm" &&
		   diff -u --label "xfs_io stderr" --label "rmio stderr" \
			"$WORK/x.err" "$WORK/r.err"; then
			echo "ok   $what/$name ($(grep -c . "$WORK/x.out") lines)"
		else
			echo "FAIL $what/$name (above: the masked difference)"
			failed=$((failed + 1))
		fi
	done
}

# profile_of DIR: rmio's profile for DIR's file system, or nothing.
profile_of() {
	case "$(stat -f -c %T "$1")" in
	ext2/ext3) # the same magic for ext2, ext3, ext4: ask the mount table
		[ "$(findmnt -n -o FSTYPE -T "$1")" = ext4 ] && echo ext4 ;;
	xfs) echo xfs ;;
	esac
}

mkdir -p "$WORK/host"
p=$(profile_of "$WORK/host")
if [ -n "$p" ]; then
	compare "$WORK/host" "$p" "host-$p" "$@"
else
	echo "SKIP host: ${TMPDIR:-/tmp} is $(stat -f -c %T "$WORK/host"), not ext4 or XFS"
fi

# loop-mounted images: need root, losetup and the mkfs programs
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP loop images: not root (mounting needs it)"
else
	for fs in ext4 xfs; do
		img=$WORK/$fs.img mnt=$WORK/mnt-$fs
		mkdir -p "$mnt"
		truncate -s 320m "$img"
		case $fs in
		ext4) mk=(mkfs.ext4 -q -F) ;;
		xfs) mk=(mkfs.xfs -q -f) ;;
		esac
		if ! command -v "${mk[0]}" >/dev/null; then
			echo "SKIP loop-$fs: ${mk[0]} not found"
			continue
		fi
		if ! timeout $T "${mk[@]}" "$img" >"$WORK/mkfs.log" 2>&1 ||
		   ! timeout $T mount -o loop "$img" "$mnt" 2>>"$WORK/mkfs.log"; then
			echo "SKIP loop-$fs: cannot make or mount the image: $(tail -n1 "$WORK/mkfs.log")"
			continue
		fi
		MNTS+=("$mnt")
		compare "$mnt" "$fs" "loop-$fs" "$@"
	done
fi

echo "$compared compared, $failed different"
if [ "$compared" -eq 0 ]; then
	echo "SKIP: no file system here to compare on (see the reasons above)"
	exit 77
fi
[ "$failed" -eq 0 ]
