#!/usr/bin/env bash
# make test's first pass: the tests of every package, TEST_SLOTS (3) go test
# runs at a time, the longest first. The e2e package, by far the longest
# (about 30 minutes alone), runs as E2E_SHARDS (3) shares side by side, each
# with its own stack (FERRY_TEST_SHARD, internal/devenv/shard.go); then the
# other end-to-end packages; then the rest, one go test each. Each run's
# output is printed whole when it ends; the exit status is non-zero when any
# run failed. GO, TEST_TIMEOUT, FERRY_TOOLS_BIN and FERRY_BIN come from make.
set -euo pipefail
cd "$(dirname "$0")/.."

export GO=${GO:-go} TEST_TIMEOUT=${TEST_TIMEOUT:-75m}
slots=${TEST_SLOTS:-3}
shards=${E2E_SHARDS:-3}

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export out

# run PKG [K/N]: one go test, its output printed whole at its end.
run() {
	local pkg=$1 shard=${2:-} log rc=0
	log=$(mktemp -p "$out")
	FERRY_TEST_SHARD=$shard "$GO" test -count=1 -timeout "$TEST_TIMEOUT" "$pkg" >"$log" 2>&1 || rc=$?
	{
		flock 9
		[[ -z $shard ]] || echo "# $pkg, share $shard of its tests"
		cat "$log"
		[[ $rc == 0 ]] || echo "$pkg $shard" >>"$out/.failed"
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
} | xargs -P "$slots" -L 1 bash -c 'run "$@"' run || rc=$?

# 123: some run failed (listed below); anything else is xargs' own failure.
if [[ ${rc:-0} != 0 && ${rc:-0} != 123 ]]; then
	echo "FAIL: hack/test.sh could not run the tests (xargs: exit $rc)" >&2
	exit 1
fi
if [[ -s $out/.failed ]]; then
	echo "FAIL: the tests of $(sort "$out/.failed" | paste -sd, | sed 's/,/, /g')" >&2
	exit 1
fi
