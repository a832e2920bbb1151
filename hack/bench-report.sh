#!/usr/bin/env bash
# Turns `go test -bench -count N` output into a Markdown report: for each
# benchmark the runs, the median and the spread (min–max) of ns/op.
set -euo pipefail
in=$1
cat <<HEAD
# Ferry benchmarks

Machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, $(go version | cut -d' ' -f3).
Reproduce: \`make bench\` (or \`go test -run '^\$' -bench . -benchmem -count 5 ./...\`).

| benchmark | runs | median ns/op | min | max | B/op | allocs/op |
| --- | --- | --- | --- | --- | --- | --- |
HEAD
awk '/^Benchmark/ {
  name=$1; sub(/-[0-9]+$/, "", name)
  for (i=3; i<=NF; i++) { if ($(i+1)=="ns/op") ns=$i; if ($(i+1)=="B/op") b=$i; if ($(i+1)=="allocs/op") a=$i }
  runs[name]=runs[name] " " ns; bytes[name]=b; allocs[name]=a
} END {
  for (n in runs) {
    k=split(substr(runs[n],2), v, " "); asort(v)
    med = (k%2) ? v[(k+1)/2] : (v[k/2]+v[k/2+1])/2
    printf "| %s | %d | %.0f | %.0f | %.0f | %s | %s |\n", n, k, med, v[1], v[k], bytes[n], allocs[n]
  }
}' "$in" | sort
