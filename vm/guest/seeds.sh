#!/bin/sh
# seeds.sh - the seed xfstests insert-range cases generic/039..043 (Namjae
# Jeon's 2015 xfstests series), rerun with the real xfs_io
# on any mounted directory and compared with their golden .out files.
#
# xfstests is not installed in the guest, so the pieces of common/punch the
# seeds use are re-implemented here from their documented behaviour:
#   punch_sequence  = _test_generic_punch with zero_cmd=finsert (cases 1-15;
#                     the seed patch stops finsert before the unaligned cases)
#   filter_fiemap   = _filter_hole_fiemap | _coalesce_extents
# --both-views / --unwritten-as-hole: see seeds/README (FUSE FIEMAP view).
# 043 is generic/043 on a directory instead of a freshly made scratch fs: the
# caller (vm/guest/test-seeds) runs the fs checks (_check_scratch_fs) itself.
#
# POSIX sh + busybox awk on purpose: it runs in the initramfs (busybox ash)
# and on a host (dash/bash) against a loop-mounted ext4 image alike.
set -u

usage() {
	cat <<USAGE
usage: seeds.sh [--out DIR] [--golden DIR] [--xfs-io PROG] [--allow-notrun]
                [--unwritten-as-hole | --both-views] TARGETDIR [TEST...]
Run the seed xfstests cases (default: 039 040 041 042 043) in TARGETDIR,
write each output to DIR/NNN.out (default: a temp dir, printed), and diff
it with the golden DIR/NNN.out (default: seeds/ next to this script).
A case whose file system lacks finsert/fiemap is NOTRUN, which fails
unless --allow-notrun.  --unwritten-as-hole maps unwritten extents as holes
and compares with GOLDEN/unwritten-as-hole/ (the view a SEEK_DATA-based
FIEMAP gives, e.g. the patched FUSE); --both-views checks both views from
one run (outputs DIR/NNN.out and DIR/unwritten-as-hole/NNN.out).  Exit: 0 all passed, 1 a case failed, 2 bad usage.
USAGE
}

here=$(cd "$(dirname "$0")" && pwd)
out='' golden=$here/seeds allow_notrun=0 view=std
XFS_IO_PROG=${XFS_IO_PROG:-xfs_io}
while [ $# -gt 0 ]; do
	case "$1" in
	--out) [ $# -ge 2 ] || { usage >&2; exit 2; }; out=$2; shift ;;
	--golden) [ $# -ge 2 ] || { usage >&2; exit 2; }; golden=$2; shift ;;
	--xfs-io) [ $# -ge 2 ] || { usage >&2; exit 2; }; XFS_IO_PROG=$2; shift ;;
	--allow-notrun) allow_notrun=1 ;;
	--unwritten-as-hole) view=uah ;;
	--both-views) view=both ;;
	-h|--help) usage; exit 0 ;;
	--) shift; break ;;
	-*) echo "seeds.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
[ $# -ge 1 ] || { usage >&2; exit 2; }
target=$1; shift
[ -d "$target" ] && [ -w "$target" ] || { echo "seeds.sh: '$target' is not a writable directory" >&2; exit 2; }
tests=${*:-039 040 041 042 043}
# The standard golden NNN.out: in DIR (the guest image puts them there), else
# in the repository's one copy beside the model's seed test.
std_golden() {
	if [ -f "$golden/$1.out" ]; then echo "$golden/$1.out"
	else echo "$here/../../refmodel/tests/seeds/generic-$1.out"; fi
}
for t in $tests; do
	case "$t" in 039|040|041|042|043) ;; *) echo "seeds.sh: unknown test '$t' (039..043)" >&2; exit 2 ;; esac
	[ "$view" = uah ] || [ -f "$(std_golden "$t")" ] || { echo "seeds.sh: golden file $golden/$t.out missing" >&2; exit 2; }
	[ "$view" = std ] || [ -f "$golden/unwritten-as-hole/$t.out" ] ||
		{ echo "seeds.sh: golden file $golden/unwritten-as-hole/$t.out missing" >&2; exit 2; }
done
command -v "$XFS_IO_PROG" >/dev/null 2>&1 || { echo "seeds.sh: $XFS_IO_PROG not found" >&2; exit 2; }
[ -n "$out" ] || out=$(mktemp -d "${TMPDIR:-/tmp}/seeds.XXXXXX")
mkdir -p "$out" || exit 2

md5() { md5sum "$1" | cut -d' ' -f1; }

# _filter_hole_fiemap | _coalesce_extents: keep "N: [lo..hi]: hole|extent"
# per `xfs_io fiemap -v` row (extent = any row carrying a flags column), then
# merge neighbouring rows of the same kind and renumber, so the output does
# not depend on how the file system happens to split its extents.
#
# --unwritten-as-hole: an extent with FIEMAP_EXTENT_UNWRITTEN (0x800) counts
# as a hole.  That is the view a FIEMAP built from SEEK_DATA/SEEK_HOLE gives
# (kernel-patches' FUSE FIEMAP): preallocated-but-unwritten space reads as
# zeros and SEEK_DATA skips it (iomap_seek_data() on ext4/XFS in 6.1 does the
# same for clean unwritten extents).
filter_fiemap() { # 1 = unwritten as hole
	awk -v uwhole="${1:-0}" '
	$1 ~ /^[0-9]+:$/ && ($3 == "hole" || $5 ~ /^0x[0-9a-fA-F]+$/) {
		kind = ($3 == "hole") ? "hole" : "extent"
		if (uwhole == 1 && kind == "extent") {
			h = substr($5, 3)
			# bit 11 = third hex digit from the right has its 8 bit set
			if (length(h) >= 3 && index("89abcdefABCDEF", substr(h, length(h) - 2, 1)))
				kind = "hole"
		}
		r = $2; gsub(/\[/, "", r); gsub(/\]/, "", r); gsub(/:/, "", r); split(r, b, /[.][.]/)
		if (kind == "extent")
			any = 1
		if (kind != prev) {
			if (prev != "") buf = buf sprintf("%d]: %s\n", b[1] - 1, prev)
			buf = buf sprintf("%d: [%d..", n++, b[1])
			prev = kind
		}
		hi = b[2]
	}
	# xfs_io prints no rows for a file without extents; a file whose only
	# extents were unwritten-as-hole must look the same.
	END { if (prev != "" && any) printf "%s%d]: %s\n", buf, hi, prev }'
}

# _test_generic_punch [-k] [-d] falloc fpunch finsert fiemap: the 15
# layout cases.  -k keeps the file between cases (pre-existing holes), -d
# drops the fsync after writes (delayed allocation).  One xfs_io process per
# case, like the original, so each case starts with a cold file descriptor.
punch_sequence() {
	keep='' sync_cmd="-c fsync"
	while [ $# -gt 0 ]; do
		case "$1" in -k) keep=1 ;; -d) sync_cmd= ;; esac
		shift
	done
	f=$testfile
	fresh() { [ -n "$keep" ] || rm -f "$f"; }
	# shellcheck disable=SC2086 # $sync_cmd is deliberately 0 or 2 words
	# Map lines are tagged per view (@STD@ plain, @UAH@ unwritten-as-hole);
	# headers and md5 lines belong to both.  The main loop splits them.
	run() {
		raw=$("$XFS_IO_PROG" -f -c "truncate 20k" "$@" -c "fiemap -v" "$f")
		[ "$view" = uah ] || printf '%s\n' "$raw" | filter_fiemap 0 | sed 's/^/@STD@/'
		[ "$view" = std ] || printf '%s\n' "$raw" | filter_fiemap 1 | sed 's/^/@UAH@/'
		md5 "$f"
	}

	echo "	1. into a hole"; fresh
	run -c "finsert 4k 8k"
	echo "	2. into allocated space"; fresh
	run -c "pwrite 0 20k" $sync_cmd -c "finsert 4k 8k"
	echo "	3. into unwritten space"; fresh
	run -c "falloc 0 20k" -c "finsert 4k 8k"
	echo "	4. hole -> data"; fresh
	run -c "pwrite 8k 8k" $sync_cmd -c "finsert 4k 8k"
	echo "	5. hole -> unwritten"; fresh
	run -c "falloc 8k 8k" -c "finsert 4k 8k"
	echo "	6. data -> hole"; fresh
	run -c "pwrite 0 8k" $sync_cmd -c "finsert 4k 8k"
	echo "	7. data -> unwritten"; fresh
	run -c "pwrite 0 8k" $sync_cmd -c "falloc 8k 8k" -c "finsert 4k 8k"
	echo "	8. unwritten -> hole"; fresh
	run -c "falloc 0 8k" -c "finsert 4k 8k"
	echo "	9. unwritten -> data"; fresh
	run -c "falloc 0 8k" -c "pwrite 8k 8k" $sync_cmd -c "finsert 4k 8k"
	echo "	10. hole -> data -> hole"; fresh
	run -c "pwrite 8k 4k" $sync_cmd -c "finsert 4k 12k"
	echo "	11. data -> hole -> data"; fresh
	run -c "falloc 0 20k" -c "pwrite 0 8k" -c "pwrite 12k 8k" $sync_cmd \
		-c "fpunch 8k 4k" -c "finsert 4k 12k"
	echo "	12. unwritten -> data -> unwritten"; fresh
	run -c "falloc 0 20k" -c "pwrite 8k 4k" $sync_cmd -c "finsert 4k 12k"
	# 2015's common/punch wrote 0..4k here (later versions write 0..8k):
	# the golden md5 2b22165f... is exactly the bytes of a 0..4k + 12..20k
	# file after `finsert 4k 12k`, so the seeds were made with 4k.
	echo "	13. data -> unwritten -> data"; fresh
	run -c "falloc 0 20k" -c "pwrite 0k 4k" $sync_cmd -c "pwrite 12k 8k" \
		-c "fsync" -c "finsert 4k 12k"
	# common/punch removes the file before case 14 even with -k.
	echo "	14. data -> hole @ EOF"; rm -f "$f"
	run -c "pwrite 0 20k" $sync_cmd -c "finsert 12k 8k"
	echo "	15. data -> hole @ 0"; fresh
	run -c "pwrite 0 20k" $sync_cmd -c "finsert 0k 8k"
}

# generic/043: 100 blocks, insert a block before every other one (100
# extents), collapse them out again (1 extent), bytes must match the original.
case_043() {
	bsize=$(stat -f -c %S "$target")
	blocks=100
	src=$testfile.src dest=$testfile.dest
	rm -f "$src" "$dest"
	"$XFS_IO_PROG" -f -c "pwrite 0 $((blocks * bsize))" -c fsync "$src" >/dev/null || return 1
	cp "$src" "$dest" || return 1
	j=0
	while [ $j -lt $((blocks / 2)) ]; do
		"$XFS_IO_PROG" -c "finsert $((j * bsize * 2)) $bsize" "$dest" >/dev/null
		j=$((j + 1))
	done
	"$XFS_IO_PROG" -c "fiemap -v" "$dest" | grep -c "^ *[0-9]*:"
	j=0
	while [ $j -lt $((blocks / 2)) ]; do
		"$XFS_IO_PROG" -c "fcollapse $((j * bsize)) $bsize" "$dest" >/dev/null
		j=$((j + 1))
	done
	"$XFS_IO_PROG" -c "fiemap -v" "$dest" | grep -c "^ *[0-9]*:"
	cmp "$src" "$dest" || echo "file bytes check failed"
	rm -f "$src" "$dest"
}

# _require_xfs_io_command finsert/fiemap: a file system that cannot do them
# gets NOTRUN, not a wall of diffs.
probe() {
	p=$target/.seeds-probe.$$
	rm -f "$p"
	msg=$("$XFS_IO_PROG" -f -c "pwrite 0 20k" -c fsync -c "finsert 4k 8k" "$p" 2>&1 >/dev/null)
	[ -z "$msg" ] || { rm -f "$p"; echo "finsert: $msg"; return 1; }
	msg=$("$XFS_IO_PROG" -c "fiemap -v" "$p" 2>&1 | grep -i "not supported\|invalid\|error")
	rm -f "$p"
	[ -z "$msg" ] || { echo "fiemap: $msg"; return 1; }
	return 0
}

fails=0 notrun=0
if why=$(probe); then can=1; else can=0; fi
for t in $tests; do
	testfile=$target/$t.$$
	if [ "$can" = 0 ]; then
		echo "generic/$t NOTRUN on $target ($why)"
		notrun=$((notrun + 1))
		continue
	fi
	{
		echo "QA output created by $t"
		case "$t" in
		039) punch_sequence ;;
		040) punch_sequence -d ;;
		041) punch_sequence -k ;;
		042) punch_sequence -d -k ;;
		043) case_043 ;;
		esac
	} >"$out/$t.raw" 2>&1
	rm -f "$testfile"
	for v in std uah; do
		case "$view:$v" in std:uah|uah:std) continue ;; esac
		if [ $v = std ]; then
			o=$out/$t.out g=$(std_golden "$t") drop=@UAH@ keep=@STD@ what=golden label=
		else
			mkdir -p "$out/unwritten-as-hole"
			o=$out/unwritten-as-hole/$t.out g=$golden/unwritten-as-hole/$t.out
			drop=@STD@ keep=@UAH@ what="golden (unwritten extents as holes)" label=" (unwritten-as-hole view)"
		fi
		grep -v "^$drop" "$out/$t.raw" | sed "s/^$keep//" >"$o"
		if diff -u "$g" "$o" >"$o.diff"; then
			echo "generic/$t PASS on $target$label"
			rm -f "$o.diff"
		else
			echo "generic/$t FAIL on $target$label ($o differs from $what):"
			cat "$o.diff"
			fails=$((fails + 1))
		fi
	done
	rm -f "$out/$t.raw"
done
echo "seeds.sh: $fails failed, $notrun not run, outputs in $out"
[ $fails -eq 0 ] || exit 1
[ $notrun -eq 0 ] || [ $allow_notrun = 1 ] || exit 1
exit 0
