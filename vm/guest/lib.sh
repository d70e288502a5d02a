#!/bin/sh
# lib.sh - shell functions shared by the in-guest tests (sourced; busybox ash).
# The guest /init (vm/init) started rangeshift-fusefs on /mnt/fusefs with the
# module rs.fuse= chose; these functions stop/start it and swap fuse.ko so one
# boot can compare the patched and the pristine FUSE module.

FUSEFS_MNT=/mnt/fusefs
FUSEFS_PIDFILE=/run/rangeshift-fusefs.pid

say() { echo "[$(basename "$0")] $*"; }

# wait_for SECONDS CMD...: poll CMD every 0.1 s until true or timeout.
wait_for() {
	_t=$(($1 * 10)); shift
	while [ $_t -gt 0 ]; do
		"$@" && return 0
		sleep 0.1
		_t=$((_t - 1))
	done
	return 1
}

is_mounted() { grep -q " $1 " /proc/mounts; }
pid_gone() { ! kill -0 "$1" 2>/dev/null; }
module_loaded() { grep -q "^$1 " /proc/modules; }

fusefs_stop() {
	if is_mounted "$FUSEFS_MNT"; then
		fusermount3 -u "$FUSEFS_MNT" 2>/dev/null || umount "$FUSEFS_MNT" || return 1
	fi
	if [ -f "$FUSEFS_PIDFILE" ]; then
		_pid=$(cat "$FUSEFS_PIDFILE")
		wait_for 20 pid_gone "$_pid" || { say "rangeshift-fusefs ($_pid) did not exit; killing"; kill -9 "$_pid"; }
		rm -f "$FUSEFS_PIDFILE"
	fi
	return 0
}

fusefs_start() { # [OPTS]
	command -v rangeshift-fusefs >/dev/null || { say "rangeshift-fusefs not in the initramfs"; return 1; }
	wait_for 10 test -c /dev/fuse || { say "/dev/fuse missing (fuse.ko not loaded?)"; return 1; }
	rangeshift-fusefs "$FUSEFS_MNT" -f ${1:+-o "$1"} >/tmp/fusefs.log 2>&1 &
	echo $! >"$FUSEFS_PIDFILE"
	wait_for 60 is_mounted "$FUSEFS_MNT" || { say "fusefs did not mount in 60 s:"; cat /tmp/fusefs.log; return 1; }
	# its share of the dirty thresholds, as vm/init gives it (deterministic write-back)
	_bdi=$(awk -v d="$FUSEFS_MNT" '$5 == d { print $3 }' /proc/self/mountinfo)
	echo 1 >"/sys/class/bdi/$_bdi/min_ratio" 2>/dev/null || say "cannot set min_ratio of bdi $_bdi"
}

# use_fuse patched|pristine: unmount, rmmod, insmod the other fuse.ko, remount.
use_fuse() {
	case "$1" in
	patched) _ko=/lib/modules/fuse.ko ;;
	pristine) _ko=/lib/modules/fuse-pristine.ko ;;
	*) say "use_fuse: patched or pristine"; return 1 ;;
	esac
	[ -f "$_ko" ] || { say "$_ko not in the initramfs"; return 1; }
	fusefs_stop || return 1
	if module_loaded fuse; then
		rmmod fuse || { say "rmmod fuse failed"; return 1; }
	fi
	insmod "$_ko" || { say "insmod $_ko failed"; return 1; }
	fusefs_start "${FUSEFS_OPTS:-}"
}
