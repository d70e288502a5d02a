#!/usr/bin/env bash
# deps.sh - install the Debian 12 packages rangeshift needs, only those missing.
#
# Every entry point (scripts/test-all.sh, scripts/main.sh, vm/*) calls this, so
# a fresh machine needs nothing installed by hand.  Groups: build (library,
# CLI, tests; xfsprogs for the xfs_io comparison test, chromium for the
# maps.html browser test), fuse (server and mount tests), kernel (building Linux 6.1 and 6.12 from
# Debian's linux-source-6.1 and -6.12), vm (initramfs contents and QEMU), fuzz (clang
# and its libFuzzer runtime, for scripts/fuzz), cluster (a one-node Slurm
# cluster, GNU parallel and sshd, for difftest/cluster/test-cluster).
set -euo pipefail

usage() {
	cat <<USAGE
usage: scripts/deps.sh [GROUP...]
Install missing Debian packages for GROUPs (default: all).
Groups: build fuse kernel vm fuzz cluster
Must run as root (apt-get).
USAGE
}

declare -A pkgs=(
	[build]="build-essential cmake pkg-config libcmocka-dev libxxhash-dev libjansson-dev xfsprogs chromium python3"
	[fuse]="libfuse3-dev fuse3 xfsprogs e2fsprogs"
	[kernel]="linux-source-6.1 linux-source-6.12 bc bison flex libelf-dev libssl-dev cpio xz-utils kmod python3"
	[vm]="qemu-system-x86 busybox-static xfsprogs e2fsprogs cpio zstd"
	[fuzz]="clang libclang-rt-14-dev"
	[cluster]="slurmctld slurmd slurm-client munge parallel rsync openssh-server python3"
)

groups=("$@")
[ ${#groups[@]} -eq 0 ] && groups=(build fuse kernel vm fuzz cluster)
want=()
for g in "${groups[@]}"; do
	case "$g" in
	-h|--help) usage; exit 0 ;;
	build|fuse|kernel|vm|fuzz|cluster) read -ra p <<<"${pkgs[$g]}"; want+=("${p[@]}") ;;
	*) echo "deps.sh: unknown group '$g' (groups: build fuse kernel vm fuzz cluster)" >&2; exit 2 ;;
	esac
done

missing=()
for p in "${want[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: missing packages: ${missing[*]}" >&2
	echo "deps.sh: run as root, or: apt-get install -y ${missing[*]}" >&2
	exit 1
fi
echo "deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
timeout 900 apt-get update -qq || { echo "deps.sh: apt-get update failed (network? mirror?)" >&2; exit 1; }
timeout 1800 apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
	{ echo "deps.sh: apt-get install failed for: ${missing[*]}" >&2; exit 1; }
