#!/usr/bin/env bash
# The scrub live (issue 35, docs/scrub.md): fio's random 4 KB reads at QD 1 through the NBD export
# of `freeblock serve --pace real` on a 14 TB model, for SECONDS each with the scrub off and then
# on (a fresh store each time, the same fio seed), and the ratio of their IOPS; with the scrub on,
# `freeblock stats` is read while fio runs (the scrub's MB/s and whole-disk ETA) and printed.
# REALTIME=1 runs the engine thread at SCHED_FIFO (`realtime = true`, needs CAP_SYS_NICE), so
# that the scrub's checker thread (it reads and checks every block the model scrubbed: tens of
# MB/s of CRC-32 on a 14 TB model) and the machine's other work cannot delay replies. Loopback only. The machine's noise is in both runs: run it more than once (ROUNDS) on a quiet one.
#
#   crates/freeblock-server/bench/scrub.sh                      # ultrastar_hc530, 20 s each
#   DISK=ultrastar_hc560 SECONDS_EACH=60 ROUNDS=2 crates/freeblock-server/bench/scrub.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
FB=${FB:-target/release/freeblock}
DISK=${DISK:-ultrastar_hc530}
SECONDS_EACH=${SECONDS_EACH:-20}
ROUNDS=${ROUNDS:-1}
PORT=${PORT:-10899}
STATS_PORT=${STATS_PORT:-10898}
dir=$(mktemp -d)
server=
cleanup() { [[ -n "$server" ]] && kill -TERM "$server" 2> /dev/null && wait "$server" 2> /dev/null; rm -rf "$dir"; }
trap cleanup EXIT

# One fio run against a fresh server; $1 = 1 with the scrub. Prints the IOPS.
one() {
    rm -f "$dir"/store*
    printf 'disk = "%s"\nstore = "%s"\nlisten = "127.0.0.1:%s"\nstats = "127.0.0.1:%s"\npace = "real"\n' "$DISK" "$dir/store" "$PORT" "$STATS_PORT" > "$dir/server.toml"
    [[ "${REALTIME:-0}" == 1 ]] && printf 'realtime = true\n' >> "$dir/server.toml"
    [[ "$1" == 1 ]] && printf '[scrub]\npasses = 0\n' >> "$dir/server.toml"
    "$FB" serve --config "$dir/server.toml" > "$dir/summary" 2> "$dir/log" &
    server=$!
    for _ in $(seq 100); do grep -q "freeblock serve:" "$dir/log" 2> /dev/null && break; sleep 0.1; done
    fio --name=qd1 --ioengine=nbd --uri="nbd://127.0.0.1:$PORT/$DISK" --rw=randread --bs=4k --iodepth=1 \
        --time_based --runtime="$SECONDS_EACH" --randseed=1 --norandommap --output-format=json --output="$dir/fio.json" > /dev/null &
    local client=$!
    if [[ "$1" == 1 ]]; then
        sleep $(( SECONDS_EACH * 3 / 4 ))
        "$FB" stats "127.0.0.1:$STATS_PORT" > "$dir/stats"
    fi
    wait "$client"
    kill -TERM "$server"; wait "$server" || true; server=
    python3 -c "import json; j = json.load(open('$dir/fio.json')); print('%.2f' % j['jobs'][0]['read']['iops'])"
}

for round in $(seq "$ROUNDS"); do
    off=$(one 0)
    off_summary=$(cat "$dir/summary")
    on=$(one 1)
    echo "round $round: $DISK, fio QD 1 random 4 KB reads, $SECONDS_EACH s each under --pace real (realtime ${REALTIME:-0}, load $(cut -d' ' -f1-3 /proc/loadavg))"
    echo "  scrub off: $off IOPS"
    echo "  scrub on:  $on IOPS"
    python3 -c "r = $on / $off; print('  on / off = %.4f (target >= 0.95): %s' % (r, 'KEEPS' if r >= 0.95 else 'MISSES'))"
    echo "  freeblock stats during the scrub-on run:"
    sed 's/^/    /' "$dir/stats"
    echo "  server summary, scrub off:"; echo "$off_summary" | sed 's/^/    /'
    echo "  server summary, scrub on:"; sed 's/^/    /' "$dir/summary"
done
