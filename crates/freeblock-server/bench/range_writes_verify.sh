#!/usr/bin/env bash
# Writes through range writes with real bytes: fio's nbd engine with verify=crc32c, 8 jobs on 8
# connections, QD 8 each, random 4 KiB writes over SIZE per job, against `freeblock serve
# --pace none` with `[layout] type = "range_writes"` on the Atlas 10K. Every write is placed anew
# and committed to the map's journal, so this measures what making those commits durable costs.
# Prints fio's write rate, the elapsed time, the server's CPU time, and from its stats endpoint the
# map commits made durable and the groups they were made durable in (one sync of the store and one
# of the journal each; a server without groups syncs twice per commit and prints no groups).
# A benchmark, not a test.
#
#   crates/freeblock-server/bench/range_writes_verify.sh     # FB=target/debug/freeblock SIZE=16m
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
FB=${FB:-target/debug/freeblock}
PORT=${PORT:-10833}
STATS=${STATS:-10834}
SIZE=${SIZE:-16m}
dir=$(mktemp -d)
printf 'store = "%s/store"\n[layout]\ntype = "range_writes"\n' "$dir" > "$dir/rw.toml"
"$FB" serve --config "$dir/rw.toml" --listen "127.0.0.1:$PORT" --stats "127.0.0.1:$STATS" --pace none > "$dir/summary" 2> "$dir/log" &
server=$!
trap 'kill -TERM $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 100); do grep -q "freeblock serve:" "$dir/log" 2>/dev/null && break; sleep 0.1; done
echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s.%N)
fio --name=v --ioengine=nbd --uri="nbd://127.0.0.1:$PORT/atlas10k" --rw=randwrite --bs=4k --size="$SIZE" \
    --offset_increment="$SIZE" --numjobs=8 --iodepth=8 --verify=crc32c --do_verify=1 --group_reporting \
    --randseed=3 --verify_state_save=0 --output-format=json --output="$dir/fio.json" > /dev/null
status=$?
end=$(date +%s.%N)
tick=$(getconf CLK_TCK)
cpu=$(awk -v t="$tick" '{print ($14 + $15) / t}' "/proc/$server/stat")
curl -s "http://127.0.0.1:$STATS/" | grep -E "^freeblock_layout_map_(commits|groups)_total"
kill -TERM $server
wait $server
python3 -c "
import json
j = json.load(open('$dir/fio.json'))['jobs'][0]
w, r = j['write'], j['read']
print('fio exit %d, errors %d: %d writes at %.0f KiB/s (%.1f s writing), %d blocks verified; elapsed %.1f s; server CPU %.1f s' % ($status, j['error'], w['total_ios'], w['bw_bytes'] / 1024, w['runtime'] / 1e3, r['total_ios'], $end - $start, $cpu))"
grep -i "mean response" "$dir/summary" "$dir/log" | sed 's/^[^:]*://'
