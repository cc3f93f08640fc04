"""freeblock.server_stats: a running `freeblock serve`'s Prometheus text as a DataFrame."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import freeblock


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, str]]:
    """A server on loopback (free ports), its NBD URI and its stats URL; stopped afterwards."""
    command = [sys.executable, "-m", "freeblock", "serve", "--store", str(tmp_path / "store")]
    command += ["--listen", "127.0.0.1:0", "--stats", "127.0.0.1:0", "--pace", "none"]
    proc = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        found = re.search(r"(nbd://\S+), stats (http://\S+)", first)
        assert found, f"the server's first line names no stats URL: {first!r}"
        yield found.group(1), found.group(2)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


def _value(frame, sample: str, **labels: str) -> float:
    rows = frame[frame["sample"] == sample]
    for key, want in labels.items():
        rows = rows[rows[key] == want]
    assert len(rows) == 1, f"{sample} {labels}: {len(rows)} rows"
    return float(rows["value"].iloc[0])


def test_a_fresh_server_reports_zero_requests(server: tuple[str, str]) -> None:
    _, stats = server
    frame = freeblock.server_stats(stats)
    assert list(frame.columns[:3]) == list(freeblock.STATS_COLUMNS[:3]) and frame.columns[-1] == "value"
    assert {"op", "quantile"} <= set(frame.columns)
    assert _value(frame, "freeblock_requests_total", op="read") == 0
    assert _value(frame, "freeblock_errors_total") == 0
    assert set(frame.loc[frame["metric"] == "freeblock_model_response_seconds", "type"]) == {"summary"}
    # The address alone, as --stats was given, names the same endpoint.
    again = freeblock.server_stats(stats.removeprefix("http://").removesuffix("/metrics"))
    assert _value(again, "freeblock_requests_total", op="read") == 0


def test_requests_a_client_sent_are_counted(server: tuple[str, str]) -> None:
    uri, stats = server
    if shutil.which("qemu-io") is None:
        if os.environ.get("FREEBLOCK_REQUIRE_CLIENTS") == "1":
            pytest.fail("qemu-io is not installed and FREEBLOCK_REQUIRE_CLIENTS=1")
        pytest.skip("qemu-io is not installed")
    commands = ["write -P 0x5a 0 64k", "read -P 0x5a 0 64k", "read 1m 4k"]
    args = [arg for c in commands for arg in ("-c", c)]
    subprocess.run(["qemu-io", "-f", "raw", *args, uri], check=True, capture_output=True)
    frame = freeblock.server_stats(stats)
    assert _value(frame, "freeblock_requests_total", op="write") >= 1
    assert _value(frame, "freeblock_requests_total", op="read") >= 2
    assert _value(frame, "freeblock_bytes_total", op="read") >= 64 * 1024 + 4096
    # Every timed request has a model response time: the median is a positive number of seconds.
    assert _value(frame, "freeblock_model_response_seconds_count") >= 3
    assert 0 < _value(frame, "freeblock_model_response_seconds", quantile="0.5") < 1


def test_nothing_listening_is_a_connection_error_naming_the_url() -> None:
    with pytest.raises(ConnectionError, match=r"http://127\.0\.0\.1:1/metrics"):
        freeblock.server_stats("127.0.0.1:1", timeout=0.5)


def test_an_address_that_is_not_http_is_refused() -> None:
    with pytest.raises(ValueError, match="plain http"):
        freeblock.server_stats("https://127.0.0.1:9100")
