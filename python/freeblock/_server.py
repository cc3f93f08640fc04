"""A running block server's statistics as a DataFrame.

``freeblock serve --stats ADDR`` answers ``GET /metrics`` with Prometheus text (request counts,
bytes, errors, the model's response-time and the replies' lateness quantiles, scrub progress, the
layout's moves and commits; docs/server.md). :func:`server_stats` fetches that text and parses it
with ``prometheus_client``'s parser into one row per sample, so that a notebook can follow a
server while clients run against it.
"""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request

import pandas as pd
from prometheus_client.parser import text_string_to_metric_families

from freeblock._freeblock import ConfigError, FreeblockError


class StatsAddressError(ConfigError, ValueError):
    """The ``address`` given to :func:`server_stats` is not an http address of a stats endpoint."""


class StatsUnavailableError(FreeblockError, ConnectionError):
    """Nothing answered at the stats address."""


class StatsFormatError(FreeblockError, ValueError):
    """What answered at the stats address is not Prometheus text."""

#: The columns :func:`server_stats` always has; one column per label goes between ``sample``
#: and ``value``.
STATS_COLUMNS: tuple[str, ...] = ("metric", "type", "sample", "value")


def _with_field(e: FreeblockError, field: str) -> FreeblockError:
    """``e`` with the place attributes every freeblock error has, ``field`` naming the argument."""
    e.path, e.line, e.field, e.index = None, None, field, None
    return e


def _metrics_url(address: str) -> str:
    """``host:port``, ``http://host:port`` or the whole ``…/metrics`` URL, as the metrics URL."""
    if not isinstance(address, str):
        raise _with_field(StatsAddressError(f"address: {address!r} is not a string such as '127.0.0.1:9100'"), "address")
    url = address if "://" in address else f"http://{address}"
    if not url.startswith("http://"):
        raise _with_field(StatsAddressError(f"address {address!r}: the stats endpoint speaks plain http"), "address")
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 -- raises ValueError for a port out of range or not a number
    except ValueError as e:
        raise _with_field(StatsAddressError(f"address {address!r}: not a usable http address ({e})"), "address") from None
    if not parts.hostname:
        raise _with_field(StatsAddressError(f"address {address!r}: names no host"), "address")
    return url if url.rstrip("/").endswith("/metrics") else url.rstrip("/") + "/metrics"


def server_stats(address: str, *, timeout: float = 5.0) -> pd.DataFrame:
    """The statistics of the ``freeblock serve`` whose stats endpoint is at ``address``.

    ``address`` is what ``--stats`` was given (``"127.0.0.1:9100"``), or the URL the server
    prints at start (``http://127.0.0.1:9100/metrics``). One row per sample: ``metric`` (the
    family, e.g. ``freeblock_requests``), ``type`` (``counter``, ``summary``, ``gauge``),
    ``sample`` (e.g. ``freeblock_requests_total``), ``value``, and one column per label the server
    uses (``op``, ``quantile``), empty where a sample lacks it. Times are in seconds.

    Raises (each a ``FreeblockError``) ``StatsAddressError`` (also a ``ValueError``) for an
    address or timeout that cannot be used, ``StatsUnavailableError`` (also a ``ConnectionError``)
    naming the URL when nothing answers there, and ``StatsFormatError`` (also a ``ValueError``)
    when what answers is not Prometheus text.

    >>> server_stats("127.0.0.1:1", timeout=0.5)
    Traceback (most recent call last):
    ...
    freeblock._server.StatsUnavailableError: no freeblock stats at http://127.0.0.1:1/metrics: ...
    """
    url = _metrics_url(address)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout < float("inf"):
        raise _with_field(StatsAddressError(f"timeout: {timeout!r} is not a positive number of seconds"), "timeout")
    try:
        with urllib.request.urlopen(url, timeout=timeout) as reply:
            body = reply.read()
    except (ValueError, OverflowError) as e:  # a malformed URL or port (InvalidURL, UnicodeError …)
        raise _with_field(StatsAddressError(f"address {address!r}: not a usable http address ({e})"), "address") from None
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        raise StatsUnavailableError(f"no freeblock stats at {url}: {reason}") from None
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as e:
        raise StatsFormatError(f"{url} did not answer with Prometheus text: {e}") from None
    rows: list[dict[str, object]] = []
    try:
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                row: dict[str, object] = {"metric": family.name, "type": family.type}
                row["sample"] = sample.name
                row.update(sample.labels)
                row["value"] = sample.value
                rows.append(row)
    except ValueError as e:
        raise StatsFormatError(f"{url} did not answer with Prometheus text: {e}") from None
    labels = sorted({k for r in rows for k in r} - set(STATS_COLUMNS))
    *named, value = STATS_COLUMNS
    frame = pd.DataFrame(rows, columns=[*named, *labels, value])
    frame["value"] = frame["value"].astype(float)
    for label in labels:
        frame[label] = frame[label].astype("string")
    return frame
