# shellcheck shell=bash
# common.sh - what slurm-campaign and parallel-campaign share (sourced).

# check_dt_args ARGS...: the difftest arguments of a sharded campaign.  The
# driver owns --shard, --out, --json (per shard) and the merge; targets must
# be given: bare difftest on a machine without ext4/xfs/fusefs mounted hands
# over to QEMU and may build a kernel, on every node at once.  Prints why
# and returns 1 when they do not fit.
check_dt_args() {
	local a target=0
	for a in "$@"; do
		case $a in
		-t | --target | --target=* | -t?*) target=1 ;;
		--shard | --shard=* | --out | --out=* | --json | --json=* | -j | -j?* | --merge | --replay*)
			echo "${0##*/}: $a is the driver's business (each shard gets --shard I/N, --out DIR/shard-I)" >&2
			return 1 ;;
		esac
	done
	if [ "$target" = 0 ]; then
		echo "${0##*/}: give the targets (-t dir:PATH, -t model:PROFILE, ...): without one difftest would boot QEMU on every node" >&2
		return 1
	fi
}

# check_count N: a shard count, 1 or more.
check_count() {
	case $1 in
	'' | *[!0-9]* | 0) echo "${0##*/}: -n wants a number of shards >= 1, got '$1'" >&2; return 1 ;;
	esac
}
