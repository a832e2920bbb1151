#!/usr/bin/env bash
# Runs the Go benchmarks of the packages that have some (func Benchmark… in a
# _test.go file) and appends them to OUT/report.md as a table: for each
# benchmark the runs, the median and the spread (min–max) of ns/op.
# Usage: hack/bench-report.sh OUT   (make bench runs it after ferry-bench)
# Env: BENCH_COUNT (runs of each, default 5), BENCH_TIME (-benchtime, default 1s).
set -euo pipefail
out=${1:?usage: hack/bench-report.sh OUT_DIR}
cd "$(dirname "$0")/.."
mkdir -p "$out"
report=$out/report.md
count=${BENCH_COUNT:-5}
benchtime=${BENCH_TIME:-1s}

mapfile -t pkgs < <(grep -rl --include='*_test.go' -E '^func Benchmark[A-Z0-9_]' --exclude-dir=out . | xargs -r -n1 dirname | sort -u)
{
  echo
  echo "## Go benchmarks"
  echo
} >> "$report"
if [ ${#pkgs[@]} -eq 0 ]; then
  echo "No package has Go benchmarks yet." >> "$report"
  exit 0
fi
raw=$out/go-bench.txt
cmd="go test -run '^\$' -bench . -benchmem -count $count -benchtime $benchtime ${pkgs[*]}"
echo "hack/bench-report.sh: $cmd" >&2
status=0
go test -run '^$' -bench . -benchmem -count "$count" -benchtime "$benchtime" -timeout 20m "${pkgs[@]}" > "$raw" 2>&1 || status=$?

cat >> "$report" <<HEAD
The packages' own benchmarks (\`func Benchmark…\`), in process, $count runs each.
Reproduce: \`$cmd\` (raw output: \`go-bench.txt\`).

| benchmark | runs | median ns/op | min | max | B/op | allocs/op |
| --- | --- | --- | --- | --- | --- | --- |
HEAD
awk '/^Benchmark/ && / ns\/op/ {
  name=$1; sub(/-[0-9]+$/, "", name)
  b=""; a=""
  for (i=3; i<=NF; i++) { if ($(i+1)=="ns/op") ns=$i; if ($(i+1)=="B/op") b=$i; if ($(i+1)=="allocs/op") a=$i }
  runs[name]=runs[name] " " ns; bytes[name]=b; allocs[name]=a
} END {
  for (n in runs) {
    k=split(substr(runs[n],2), v, " "); asort(v)
    med = (k%2) ? v[(k+1)/2] : (v[k/2]+v[k/2+1])/2
    printf "| %s | %d | %.0f | %.0f | %.0f | %s | %s |\n", n, k, med, v[1], v[k], bytes[n], allocs[n]
  }
}' "$raw" | sort >> "$report"
if [ $status -ne 0 ]; then
  printf '\n**go test failed (exit %d)**: see `go-bench.txt`.\n' "$status" >> "$report"
  tail -20 "$raw" >&2
fi
exit $status
