#!/usr/bin/env bash
# Runs the Go benchmarks of the packages that have some (func Benchmark… in a
# _test.go file) and appends them to OUT/report.md as a table: for each
# benchmark the runs, the median and the spread (min–max) of its time per
# operation, and the median of the other metrics it reports.
# Usage: hack/bench-report.sh OUT   (make bench runs it after ferry-bench)
# Env: BENCH_COUNT (runs of each, default 5), BENCH_TIME (-benchtime, default
# 1s), BENCH_RAW (format this earlier output instead of running go test).
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
if [ -n "${BENCH_RAW:-}" ]; then
  cp "$BENCH_RAW" "$raw"   # format an earlier run's output again
else
  go test -run '^$' -bench . -benchmem -count "$count" -benchtime "$benchtime" -timeout 20m "${pkgs[@]}" > "$raw" 2>&1 || status=$?
fi

cat >> "$report" <<HEAD
The packages' own benchmarks (\`func Benchmark…\`), in process, $count runs each; time per operation with its median and min–max over the runs, and the median of every other metric the benchmark reports.
Reproduce: \`$cmd\` (raw output: \`go-bench.txt\`).

| benchmark | runs | median per op | min–max | B/op | allocs/op | other metrics (median) |
| --- | --- | --- | --- | --- | --- | --- |
HEAD
# mawk has no asort: sort the runs of a benchmark by insertion.
awk '
function sortv(v, k,   i, j, t) { for (i = 2; i <= k; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] > t; j--) v[j+1] = v[j]; v[j+1] = t } }
function median(list,   k, v) { k = split(substr(list, 2), v, " "); sortv(v, k); return (k % 2) ? v[(k+1)/2] : (v[k/2] + v[k/2+1]) / 2 }
function dur(ns) { if (ns >= 1e9) return sprintf("%.3g s", ns/1e9); if (ns >= 1e6) return sprintf("%.3g ms", ns/1e6); if (ns >= 1e3) return sprintf("%.3g µs", ns/1e3); return sprintf("%.3g ns", ns) }
/^Benchmark/ && / ns\/op/ {
  name = $1; sub(/-[0-9]+$/, "", name)
  if (!(name in runs)) order[++n] = name
  for (i = 3; i < NF; i += 2) {
    unit = $(i+1)
    if (unit == "ns/op") runs[name] = runs[name] " " $i
    else if (unit == "B/op") bytes[name] = bytes[name] " " $i
    else if (unit == "allocs/op") allocs[name] = allocs[name] " " $i
    else { key = name SUBSEP unit; if (!(key in other)) units[name] = units[name] " " unit; other[key] = other[key] " " $i }
  }
}
END {
  for (m = 1; m <= n; m++) {
    name = order[m]
    k = split(substr(runs[name], 2), v, " "); sortv(v, k)
    extra = ""
    c = split(substr(units[name], 2), us, " ")
    for (u = 1; u <= c; u++) extra = extra (u > 1 ? ", " : "") us[u] " " sprintf("%.4g", median(other[name SUBSEP us[u]]))
    printf "| %s | %d | %s | %s–%s | %s | %s | %s |\n", name, k, dur(median(runs[name])), dur(v[1]), dur(v[k]),
      (name in bytes) ? sprintf("%.0f", median(bytes[name])) : "", (name in allocs) ? sprintf("%.0f", median(allocs[name])) : "", extra
  }
}' "$raw" >> "$report"
if [ $status -ne 0 ]; then
  printf '\n**go test failed (exit %d)**: see `go-bench.txt`.\n' "$status" >> "$report"
  tail -20 "$raw" >&2
fi
exit $status
