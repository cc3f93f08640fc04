#!/usr/bin/env bash
# Runs the libFuzzer targets: RUNS inputs each (default 1,000,000), one target after the other,
# with the acceptance limits of issue 18 (no allocation over 1 GB, no RSS over 1 GB). See
# docs/fuzzing.md.
#
#   fuzz/run.sh                      every target
#   fuzz/run.sh trace_msr engine     these targets
#   RUNS=10000 fuzz/run.sh           fewer inputs
#   SANITIZER=address fuzz/run.sh    with AddressSanitizer (default none: the targets are safe Rust,
#                                    and ASan makes the disk and engine targets 10-100x slower)
#
# Writes fuzz/logs/<target>.log and a summary table (inputs, seconds, peak RSS, result) to
# fuzz/logs/summary.md; a crash's input goes to fuzz/artifacts/<target>/. Exits non-zero if any
# target crashed. Needs cargo-fuzz (installed here if missing) and a C++ compiler; the nightly
# sanitizer flags run on stable through RUSTC_BOOTSTRAP=1 (set for cargo-fuzz only: set for
# `cargo test` too, it would make cargo rebuild everything).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
RUNS=${RUNS:-1000000}
SANITIZER=${SANITIZER:-none}
CARGO=${CARGO:-cargo}
export CARGO_TARGET_DIR=${FUZZ_TARGET_DIR:-$ROOT/fuzz/target}

if ! RUSTC_BOOTSTRAP=1 $CARGO fuzz --version >/dev/null 2>&1; then
  echo "installing cargo-fuzz (about 3 minutes)" >&2
  $CARGO install cargo-fuzz --locked
fi

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cd fuzz && RUSTC_BOOTSTRAP=1 $CARGO fuzz list)
fi

# The starting corpus: the seeds of fuzz/seeds.txt, written by the cargo-test driver.
CARGO_TARGET_DIR=${TEST_TARGET_DIR:-$ROOT/target} FREEBLOCK_FUZZ_CORPUS_DIR=$ROOT/fuzz/corpus \
  $CARGO test -q -p freeblock --test fuzz_regressions seed_corpus >/dev/null

(cd fuzz && RUSTC_BOOTSTRAP=1 $CARGO fuzz build -O -s "$SANITIZER")

mkdir -p fuzz/logs
summary=fuzz/logs/summary.md
printf '| target | inputs | seconds | peak RSS MB | result |\n|---|---|---|---|---|\n' > "$summary"
failed=0
for t in "${targets[@]}"; do
  mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
  log=fuzz/logs/$t.log
  echo "fuzzing $t: $RUNS inputs (log: $log)" >&2
  # DiskSim inputs are four files in one; other inputs stay within libFuzzer's default 4 KiB.
  max_len=4096
  [ "$t" = disksim ] && max_len=65536
  start=$(date +%s)
  status=0
  (cd fuzz && RUSTC_BOOTSTRAP=1 $CARGO fuzz run -O -s "$SANITIZER" "$t" "corpus/$t" -- \
      -runs="$RUNS" -rss_limit_mb=1024 -malloc_limit_mb=1024 -timeout=60 -max_len=$max_len \
      -print_final_stats=1 -artifact_prefix="artifacts/$t/") >"$log" 2>&1 || status=$?
  seconds=$(( $(date +%s) - start ))
  inputs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
  if [ "$status" -eq 0 ]; then
    result=ok
  else
    failed=1
    result="crashed ($(grep -m1 -oE 'panicked at [^ ]+|ERROR: [A-Za-z]+: [a-z -]+|out-of-memory|timeout' "$log" || echo "exit $status"))"
  fi
  printf '| %s | %s | %s | %s | %s |\n' "$t" "${inputs:-?}" "$seconds" "${rss:-?}" "$result" >> "$summary"
done
cat "$summary"
exit $failed
