# lib.sh - shell functions shared by scripts/main.sh and scripts/test-all.sh.

# cmake_configure DIR ARGS...: configure the repository (the caller's working
# tree) into DIR.  The cache directory outlives clones, so a build directory
# configured from another checkout is wiped first: CMake refuses to reuse a
# cache whose source directory differs.
cmake_configure() {
	local dir=$1 src
	shift
	src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	if [ -f "$dir/CMakeCache.txt" ] &&
		! grep -qx "CMAKE_HOME_DIRECTORY:INTERNAL=$src" "$dir/CMakeCache.txt"; then
		echo "cmake_configure: $dir was configured from another checkout; starting it afresh" >&2
		rm -rf "$dir"
	fi
	cmake -S "$src" -B "$dir" "$@" >/dev/null
}

# cache_lock: one run per cache directory at a time.  Every checkout shares
# $RANGESHIFT_CACHE/build: a second clone's cmake_configure wipes the first
# one's build tree mid-run.  The
# flock is held by a child process, not by this shell: a descriptor of the
# shell would be inherited by every child (ctest, QEMU, a FUSE daemon a test
# leaves behind) and keep the lock after the run.  That process lets go when
# this script's process ($$, kept across exec) is gone, checked every 2 s.
# A second run waits up to RS_LOCK_WAIT seconds (5400), then stops with
# what to do.
cache_lock() {
	local lock=$RANGESHIFT_CACHE/checkout.lock wait=${RS_LOCK_WAIT:-5400} me ans=
	me=$(basename "$0")
	mkdir -p "$RANGESHIFT_CACHE"
	: >>"$lock"
	flock -n "$lock" true ||
		echo "$me: another run ($(cat "$lock.owner" 2>/dev/null || echo unknown)) is using $RANGESHIFT_CACHE; waiting up to ${wait}s (RS_LOCK_WAIT)" >&2
	local owner=$$
	coproc RS_LOCK_HOLDER {
		exec 9>>"$lock" </dev/null
		if flock -w "$wait" 9; then echo locked; else echo timeout; exit 1; fi
		while kill -0 "$owner" 2>/dev/null; do sleep 2; done
	}
	read -r -t $((wait + 30)) ans <&"${RS_LOCK_HOLDER[0]}" || true
	if [ "$ans" != locked ]; then
		echo "$me: error: $RANGESHIFT_CACHE is still in use after ${wait}s: let the other run finish, or give this one a cache of its own (RANGESHIFT_CACHE=DIR)" >&2
		exit 2
	fi
	echo "pid $$, $me in $(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd), since $(date -u +%H:%M:%SZ)" >"$lock.owner"
}
