#!/usr/bin/env bash
# make test's first pass: the tests of every package, TEST_SLOTS (2) go test
# runs at a time, the longest first. The e2e package, by far the longest
# (about 30 minutes alone), runs as E2E_SHARDS (2) shares, each with its own
# stack (FERRY_TEST_SHARD, internal/devenv/shard.go), so that its two halves
# run side by side and the other packages fill the slots beside them. The
# order is the last runs' durations, longest first: this machine's (kept in
# ~/.cache/ferry/test-times), else those of hack/test-times. Each run's
# output is printed whole when it ends; the exit status is non-zero when any
# run failed. GO, TEST_TIMEOUT, FERRY_TOOLS_BIN and FERRY_BIN come from make.
set -euo pipefail
cd "$(dirname "$0")/.."

export GO=${GO:-go} TEST_TIMEOUT=${TEST_TIMEOUT:-75m}
slots=${TEST_SLOTS:-2}
shards=${E2E_SHARDS:-2}
times=${XDG_CACHE_HOME:-$HOME/.cache}/ferry/test-times

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export out

# run PKG [K/N]: one go test, its output printed whole at its end.
run() {
	local pkg=$1 shard=${2:-} log rc=0 began=$SECONDS
	log=$(mktemp -p "$out")
	FERRY_TEST_SHARD=$shard "$GO" test -count=1 -timeout "$TEST_TIMEOUT" "$pkg" >"$log" 2>&1 || rc=$?
	{
		flock 9
		[[ -z $shard ]] || echo "# $pkg, share $shard of its tests"
		cat "$log"
		echo "$((SECONDS - began)) $*" >>"$out/.times"
		[[ $rc == 0 ]] || echo "$*" >>"$out/.failed"
	} 9>"$out/.lock"
	return "$rc"
}
export -f run

e2e=$("$GO" list ./e2e)
pkgs=$("$GO" list ./... | grep -vx "$e2e")
{
	for k in $(seq "$shards"); do echo "$e2e $k/$shards"; done
	grep "^$e2e/" <<<"$pkgs" || true
	grep -v "^$e2e/" <<<"$pkgs"
} >"$out/.jobs"
# Longest first by the last runs (this machine's, else the committed
# hack/test-times); a job neither has goes first.
known=$times
[[ -s $known ]] || known=hack/test-times
awk 'NR == FNR { t = $1; $1 = ""; took[substr($0, 2)] = t; next }
	{ print ($0 in took ? took[$0] : 1e9), NR, $0 }' "$known" "$out/.jobs" |
	sort -k1,1nr -k2,2n | cut -d' ' -f3- >"$out/.sorted"
mv "$out/.sorted" "$out/.jobs"

xargs -P "$slots" -L 1 bash -c 'run "$@"' run <"$out/.jobs" || rc=$?
# This run's durations replace the last ones of the same jobs.
mkdir -p "$(dirname "$times")"
cat "$known" "$out/.times" 2>/dev/null |
	awk '{ t = $1; $1 = ""; took[substr($0, 2)] = t } END { for (j in took) print took[j], j }' |
	sort -k1,1nr >"$out/.merged" && mv "$out/.merged" "$times"

# 123: some run failed (listed below); anything else is xargs' own failure.
if [[ ${rc:-0} != 0 && ${rc:-0} != 123 ]]; then
	echo "FAIL: hack/test.sh could not run the tests (xargs: exit $rc)" >&2
	exit 1
fi
if [[ -s $out/.failed ]]; then
	echo "FAIL: the tests of $(sort "$out/.failed" | paste -sd, | sed 's/,/, /g')" >&2
	exit 1
fi
