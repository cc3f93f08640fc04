"""Property tests: whatever the seed, scheduler and load, records are consistent."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import freeblock

ATLAS_CAPACITY = freeblock.disk_info("atlas10k")["capacity_sectors"]

schedulers = st.one_of(
    st.sampled_from([{"type": "fcfs"}, {"type": "clook"}, {"type": "sstf"}, {"type": "sptf"}]),
    st.builds(lambda w: {"type": "sptf_sw", "window_pct": w}, st.integers(0, 100)),
)

workloads = st.one_of(
    st.builds(
        lambda n, rf: {"type": "random", "count": n, "read_fraction": rf},
        st.integers(1, 300),
        st.floats(0.0, 1.0),
    ),
    st.builds(
        lambda n, rate: {"type": "random", "count": n, "rate_per_s": rate},
        st.integers(1, 300),
        st.floats(10.0, 400.0),
    ),
    st.builds(lambda n: {"type": "oltp", "count": n}, st.integers(1, 200)),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**63 - 1),
    scheduler=schedulers,
    mpl=st.integers(1, 16),
    workload=workloads,
)
def test_records_are_causal_and_complete(seed: int, scheduler: dict, mpl: int, workload: dict) -> None:
    experiment = {
        "seed": seed,
        "disk": {"name": "atlas10k"},
        "workload": workload,
        "sim": {"scheduler": scheduler, "mpl": mpl},
    }
    result = freeblock.run(experiment, progress=False)
    r = result.records
    assert len(r) == workload["count"] == result.summary["requests"]
    assert sorted(r["id"]) == list(range(workload["count"]))
    assert (r["start_ms"] >= r["arrival_ms"]).all()
    assert (r["end_ms"] >= r["start_ms"]).all()
    assert (r["lbn"] + r["sectors"] <= ATLAS_CAPACITY).all()
    parts = r["seek_ms"] + r["rotational_latency_ms"] + r["transfer_ms"] + r["overhead_ms"]
    np.testing.assert_allclose(r["access_ms"], parts, atol=1e-9)
    assert result.head_usage["fraction"].sum() == pytest.approx(1.0)
