#!/usr/bin/env bash
# Throughput with --pace none (docs/server.md, "Measured"): fio's nbd engine against
# `freeblock serve --pace none` on the Atlas 10K, after writing the region it reads:
# random 4 KB reads at queue depth 32, then sequential 1 MB reads. A benchmark, not a test.
#
#   crates/freeblock-server/bench/throughput.sh        # RUNTIME=10 seconds per job
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
FB=${FB:-target/release/freeblock}
PORT=${PORT:-10810}
RUNTIME=${RUNTIME:-10}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$FB" serve --store "$dir/store" --listen "127.0.0.1:$PORT" --pace none > "$dir/summary" 2> "$dir/log" &
server=$!
for _ in $(seq 50); do grep -q "freeblock serve:" "$dir/log" 2>/dev/null && break; sleep 0.1; done
uri="nbd://127.0.0.1:$PORT/atlas10k"
fio --name=fill --ioengine=nbd --uri="$uri" --rw=write --bs=1m --size=1g --iodepth=4 > /dev/null
fio --name=randread --ioengine=nbd --uri="$uri" --rw=randread --bs=4k --size=1g --iodepth=32 \
    --time_based --runtime="$RUNTIME" | grep -E "^ *read:"
fio --name=seqread --ioengine=nbd --uri="$uri" --rw=read --bs=1m --size=1g --iodepth=8 \
    --time_based --runtime="$RUNTIME" | grep -E "^ *read:"
kill -TERM "$server"
wait "$server"
sed 's/^/  server: /' "$dir/summary"
