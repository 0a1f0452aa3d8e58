#!/usr/bin/env bash
# bench-ab.sh BASE BENCHSTAT ROUNDS OUT: make bench's relay and pipeline rows
# (BenchmarkRelay, BenchmarkPipeline), A/B between the commit BASE and the
# working tree in one run. Both are built as test binaries first, then run in
# turn, the order alternating from round to round, so that a drift of the
# machine's speed falls on both; benchstat compares them. OUT gets the raw
# results (OUT.base, OUT.head) and the comparison.
set -euo pipefail
base="$1" benchstat="$2" rounds="$3" out="$4"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tmp="$(mktemp -d)"
cleanup() { git -C "$repo" worktree remove --force "$tmp/base" >/dev/null 2>&1 || true; rm -rf "$tmp"; }
trap cleanup EXIT

git -C "$repo" worktree add --quiet --detach "$tmp/base" "$base"
for side in base head; do
  src="$repo"; [ "$side" = base ] && src="$tmp/base"
  (cd "$src" && go test -c -o "$tmp/$side-relay.test" ./bench/ && go test -c -o "$tmp/$side-pipeline.test" ./pipeline/)
done
: >"$out.base"; : >"$out.head"
for i in $(seq "$rounds"); do
  order="base head"; [ $((i % 2)) = 0 ] && order="head base"
  for side in $order; do
    echo "bench-ab: round $i of $rounds: $side" >&2
    (cd "$repo/bench" && "$tmp/$side-relay.test" -test.run '^$' -test.bench '^BenchmarkRelay$' -test.benchtime 20000x) >>"$out.$side"
    (cd "$repo/pipeline" && "$tmp/$side-pipeline.test" -test.run '^$' -test.bench '^BenchmarkPipeline$' -test.benchtime 3000x) >>"$out.$side"
  done
done
"$benchstat" base="$out.base" head="$out.head" | tee "$out"
