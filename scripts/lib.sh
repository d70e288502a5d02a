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
