#!/usr/bin/env bash
# Pace-real timing check (docs/server.md, "Measured"): N random 4 KB reads from qemu-io at queue
# depth 1 against `freeblock serve --pace real` on the Atlas 10K, beside `freeblock run` of the
# same workload. Prints the model's mean, the client's mean, the lateness, and `freeblock run`'s
# mean. With SCRUB=1 the server also scrubs (free bandwidth) and prints what the scrub read;
# with REALTIME=1 its engine thread runs at SCHED_FIFO (`realtime = true`, needs CAP_SYS_NICE);
# with CLIENT_RT=1 qemu-io does too (`chrt -f 1`), to see what the client's own wake-ups cost.
# With CAPTURE=1, tcpdump records the connection and wire_times.py splits the client's time into
# the server's (request packet to reply packet) and the client's own; PACE=none runs the same
# reads unpaced (the client's own overhead, with a model that answers at once). UNIX=1 sends
# the reads through the server's Unix socket instead of TCP (CAPTURE needs TCP).
#
#   crates/freeblock-server/bench/timing.sh            # N=2000 (about 20 s)
#   N=5000 SCRUB=1 crates/freeblock-server/bench/timing.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
FB=${FB:-target/release/freeblock}
N=${N:-2000}
PORT=${PORT:-10809}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

ref=$("$FB" run crates/freeblock-server/bench/random-4k-reads.toml --json | python3 -c 'import json,sys; print("%.3f" % json.load(sys.stdin)["response"]["mean_ms"])')

config="$dir/server.toml"
printf 'store = "%s"\nlisten = "127.0.0.1:%s"\nunix = "%s"\npace = "%s"\n' "$dir/store" "$PORT" "$dir/nbd.sock" "${PACE:-real}" > "$config"
[[ "${REALTIME:-0}" == 1 ]] && printf 'realtime = true\n' >> "$config"
[[ "${SCRUB:-0}" == 1 ]] && printf '[scrub]\npasses = 0\n' >> "$config"
"$FB" serve --config "$config" > "$dir/summary" 2> "$dir/log" &
server=$!
for _ in $(seq 50); do grep -q "freeblock serve:" "$dir/log" 2>/dev/null && break; sleep 0.1; done

if [[ "${CAPTURE:-0}" == 1 ]]; then
    tcpdump -i lo -s 96 -B 16384 -w "$dir/cap.pcap" "tcp port $PORT" 2> /dev/null &
    capture=$!
    sleep 1
fi
uri="nbd://127.0.0.1:$PORT/atlas10k"
[[ "${UNIX:-0}" == 1 ]] && uri="nbd+unix:///atlas10k?socket=$dir/nbd.sock"
capacity=$(qemu-img info --output=json "nbd://127.0.0.1:$PORT/atlas10k" | python3 -c 'import json,sys; print(json.load(sys.stdin)["virtual-size"])')
# The reads, and the same reads as a closed one-at-a-time trace (DiskSim's validate format, no
# delays) for `freeblock run`: the reference without the sampling error of another random draw.
python3 -c "
import random
random.seed(1)
with open('$dir/same.trace', 'w') as trace:
    for _ in range($N):
        offset = random.randrange($capacity // 4096) * 4096
        print('read %d 4k' % offset)
        print('R Miss %d 8 0 0' % (offset // 512), file=trace)
" | $( [[ "${CLIENT_RT:-0}" == 1 ]] && echo chrt -f 1 ) qemu-io -f raw "$uri" > "$dir/client"
sed -e 's/^type = "random"/type = "trace"\npath = "same.trace"\nformat = "validate"/' -e '/^count\|^size\|^read_fraction/d' \
    crates/freeblock-server/bench/random-4k-reads.toml > "$dir/same.toml"
same=$("$FB" run "$dir/same.toml" --json | python3 -c 'import json,sys; print("%.3f" % json.load(sys.stdin)["response"]["mean_ms"])')
kill -TERM "$server"
wait "$server"
[[ -n "${capture:-}" ]] && { sleep 0.5; kill -INT "$capture"; wait "$capture" || true; }

client=$(python3 -c "
import re,sys
lat = [1e3 / float(m) for m in re.findall(r' and ([0-9.]+) ops/sec', open('$dir/client').read())]
print('%.3f ms over %d reads' % (sum(lat) / len(lat), len(lat)))
")
echo "freeblock run, same workload (20000 requests): mean response $ref ms"
echo "freeblock run, the same $N reads in the same order: mean response $same ms"
echo "qemu-io, $N random 4 KB reads at QD 1 ($( [[ "${UNIX:-0}" == 1 ]] && echo Unix socket || echo TCP )): client-observed mean $client"
echo "freeblock serve --pace ${PACE:-real} (realtime ${REALTIME:-0}, load: $(cut -d' ' -f1-3 /proc/loadavg)):"
sed 's/^/  /' "$dir/summary"
if [[ -n "${capture:-}" ]]; then
    # Unpaced, the model's time is not on the wire: the client's share only.
    model=
    if [[ "${PACE:-real}" == real ]]; then model=$(sed -n 's/.*mean response \([0-9.]*\) ms.*/\1/p' "$dir/summary"); fi
    python3 crates/freeblock-server/bench/wire_times.py "$dir/cap.pcap" "$PORT" "${client%% ms*}" $model
fi
