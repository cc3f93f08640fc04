#!/usr/bin/env bash
# Throughput with --pace none, and the server's CPU time per request (user + sys from
# /proc/PID/stat), which is steadier than the rates on a shared machine: fio's nbd engine against
# `freeblock serve --pace none` on the Atlas 10K, after writing the region it reads. Over TCP on
# loopback and over the server's Unix socket, RUNTIME seconds each: 4 KB random reads at QD 32
# from one connection, the same queue depth from two connections of QD 16, and 1 MB sequential
# reads at QD 8. A benchmark, not a test.
# fio's own CPU per request (its usr + sys) is printed beside the server's: the two share the
# machine's 2 cores, so 100k IOPS needs their sum under 20 us per request on an otherwise idle
# machine. Over TCP fio's one job (one thread) spends about 10 us per request in libnbd and the
# loopback TCP stack, so alone it cannot issue much more than 100k a second on a core it shares;
# over the Unix socket about 6 us.
#
#   crates/freeblock-server/bench/throughput.sh        # FB=target/release/freeblock RUNTIME=5
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
FB=${FB:-target/release/freeblock}
PORT=${PORT:-10810}
RUNTIME=${RUNTIME:-5}
dir=$(mktemp -d)
"$FB" serve --store "$dir/store" --listen "127.0.0.1:$PORT" --unix "$dir/nbd.sock" --pace none > "$dir/summary" 2> "$dir/log" &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 50); do grep -q "freeblock serve:" "$dir/log" 2>/dev/null && break; sleep 0.1; done
tcp="nbd://127.0.0.1:$PORT/atlas10k"
unix="nbd+unix:///atlas10k?socket=$dir/nbd.sock"
fio --name=fill --ioengine=nbd --uri="$tcp" --rw=write --bs=1m --size=1g --iodepth=4 > /dev/null
tick=$(getconf CLK_TCK)
cpu() { awk -v t="$tick" '{print ($14 + $15) / t}' "/proc/$server/stat"; }
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
for transport in tcp unix; do
    uri=${!transport}
    for job in "randread 4k 32 1" "randread 4k 16 2" "read 1m 8 1"; do
        set -- $job
        before=$(cpu)
        fio --name=job --ioengine=nbd --uri="$uri" --rw="$1" --bs="$2" --size=1g --iodepth="$3" \
            --numjobs="$4" --group_reporting --time_based --runtime="$RUNTIME" \
            --output-format=json --output="$dir/fio.json" > /dev/null
        after=$(cpu)
        python3 -c "
import json
j = json.load(open('$dir/fio.json'))['jobs'][0]
r = j['read']
cpu = $after - $before
fio = (j['usr_cpu'] + j['sys_cpu']) / 100 * j['job_runtime'] / 1e3
print('%-4s %-8s %s QD %s x %s connection(s): %.1fk IOPS, %.0f MB/s; server CPU %.2f s = %.1f us per request; fio CPU %.1f us per request' % ('$transport', '$1', '$2', '$3', '$4', r['iops'] / 1e3, r['bw_bytes'] / 1e6, cpu, cpu / r['total_ios'] * 1e6, fio / r['total_ios'] * 1e6))"
    done
done
