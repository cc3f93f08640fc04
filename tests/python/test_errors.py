"""Bad input raises the right exception class, with a message that names the place."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import freeblock
from conftest import TINY_CAPACITY, TINY_SPEC, small_experiment


def test_exception_hierarchy() -> None:
    for cls in (
        freeblock.SpecError,
        freeblock.WorkloadError,
        freeblock.RequestError,
        freeblock.ConfigError,
        freeblock.FileError,
    ):
        assert issubclass(cls, freeblock.FreeblockError)
        assert cls.__module__ == "freeblock"
    assert issubclass(freeblock.FreeblockError, Exception)


@pytest.mark.parametrize(
    ("section", "key"),
    [("workload", "colour"), ("sim", "mpll"), ("disk", "nmae"), (None, "sed")],
)
def test_unknown_experiment_field_is_a_config_error_naming_it(section: str | None, key: str) -> None:
    experiment = small_experiment(count=10)
    (experiment[section] if section else experiment)[key] = 1
    with pytest.raises(freeblock.ConfigError, match=f"unknown field `{key}`") as info:
        freeblock.run(experiment, progress=False)
    assert info.value.path == "<experiment dict>"


def test_malformed_toml_text_is_a_config_error_with_line_and_column() -> None:
    with pytest.raises(freeblock.ConfigError, match=r"line 2, column \d+"):
        freeblock.run('seed = 1\n[workload\ntype = "random"\n', progress=False)


def test_missing_workload_is_a_config_error() -> None:
    with pytest.raises(freeblock.ConfigError, match="workload"):
        freeblock.run({"seed": 1}, progress=False)


BAD_SPECS = {
    "non-positive rpm": (("rpm = 10000.0", "rpm = 0.0"), r"field `rpm`"),
    "negative rpm": (("rpm = 10000.0", "rpm = -7200.0"), r"field `rpm`"),
    "overlapping zones": (("first_cylinder = 1000", "first_cylinder = 900"), r"field `zones\[1\]\.first_cylinder`"),
    "unknown field": (("surfaces = 2", "surfaces = 2\nplatters = 1"), r"line 5.*unknown field `platters`"),
}


@pytest.mark.parametrize("case", sorted(BAD_SPECS))
def test_bad_disk_spec_is_a_spec_error_naming_file_and_field(case: str, tmp_path: Path) -> None:
    (old, new), pattern = BAD_SPECS[case]
    assert old in TINY_SPEC
    path = tmp_path / "bad-disk.toml"
    path.write_text(TINY_SPEC.replace(old, new, 1))

    with pytest.raises(freeblock.SpecError, match=pattern) as info:
        freeblock.disk_info(path)
    assert str(path) in str(info.value)
    assert info.value.path == str(path)

    experiment = {"disk": {"spec": str(path)}, "workload": {"type": "random", "count": 10}}
    with pytest.raises(freeblock.SpecError, match=pattern):
        freeblock.run(experiment, progress=False)


def test_invalid_field_is_an_attribute_of_the_spec_error(tmp_path: Path) -> None:
    path = tmp_path / "bad-disk.toml"
    path.write_text(TINY_SPEC.replace("rpm = 10000.0", "rpm = 0.0"))
    with pytest.raises(freeblock.SpecError) as info:
        freeblock.disk_info(path)
    assert info.value.field == "rpm"


def test_unknown_disk_name_is_a_spec_error() -> None:
    with pytest.raises(freeblock.SpecError, match="unknown disk `no-such-disk`"):
        freeblock.disk_info("no-such-disk")
    with pytest.raises(freeblock.SpecError, match="no-such-disk"):
        freeblock.run({"disk": {"name": "no-such-disk"}, "workload": {"type": "random", "count": 5}}, progress=False)


def trace_experiment(trace: Path, spec: Path) -> dict:
    return {
        "disk": {"spec": str(spec)},
        "workload": {"type": "trace", "format": "validate", "path": str(trace)},
    }


def test_malformed_trace_line_is_a_workload_error_naming_file_and_line(write_trace, tiny_spec: Path) -> None:
    trace = write_trace(
        [
            "R Hit 100 8 500.0 1000.0",
            "W Miss 2000 8 600.0 1000.0",
            "R Hit 12x4 8 500.0 1000.0",
            "R Hit 300 8 500.0 1000.0",
        ]
    )
    with pytest.raises(freeblock.WorkloadError, match=rf"{re.escape(str(trace))}:3: .*LBN") as info:
        freeblock.run(trace_experiment(trace, tiny_spec), progress=False)
    assert (info.value.path, info.value.line) == (str(trace), 3)


def test_trace_line_with_missing_fields_names_the_line(write_trace, tiny_spec: Path) -> None:
    trace = write_trace(["R Hit 100 8 500.0 1000.0", "R Hit 100"])
    with pytest.raises(freeblock.WorkloadError, match=rf"{re.escape(str(trace))}:2: expected 6 fields"):
        freeblock.run(trace_experiment(trace, tiny_spec), progress=False)


def test_lbn_past_the_end_of_the_disk_names_line_and_capacity(write_trace, tiny_spec: Path) -> None:
    trace = write_trace(["R Hit 100 8 500.0 1000.0", f"W Hit {TINY_CAPACITY - 4} 8 500.0 1000.0"])
    pattern = rf"{re.escape(str(trace))}:2: .*past the disk capacity of {TINY_CAPACITY}"
    with pytest.raises(freeblock.WorkloadError, match=pattern):
        freeblock.run(trace_experiment(trace, tiny_spec), progress=False)


def test_synthetic_start_past_the_end_names_the_field() -> None:
    experiment = {"workload": {"type": "sequential", "count": 5, "start_lbn": 10**12, "request_sectors": 8}}
    with pytest.raises(freeblock.WorkloadError, match="start_lbn") as info:
        freeblock.run(experiment, progress=False)
    assert info.value.field == "start_lbn"


def test_missing_trace_file_is_a_workload_error(tmp_path: Path, tiny_spec: Path) -> None:
    missing = tmp_path / "missing.trace"
    with pytest.raises(freeblock.WorkloadError, match=r"missing\.trace"):
        freeblock.run(trace_experiment(missing, tiny_spec), progress=False)


def test_validate_reports_a_malformed_trace_line(write_trace) -> None:
    trace = write_trace(["R Hit 100 8 500.0 1000.0", "X Hit 100 8 500.0 1000.0"])
    with pytest.raises(freeblock.WorkloadError, match=rf"{re.escape(str(trace))}:2: bad operation"):
        freeblock.validate(trace, "atlas10k")


def test_wrong_argument_types_are_type_errors() -> None:
    with pytest.raises(TypeError):
        freeblock.run(42, progress=False)  # type: ignore[arg-type]


def test_relative_paths_in_an_experiment_file_resolve_against_its_folder(write_trace, tmp_path: Path) -> None:
    (tmp_path / "tiny.toml").write_text(TINY_SPEC)
    write_trace(["R Hit 100 8 500.0 1000.0", "R Hit 5O0 8 500.0 1000.0"], name="rel.trace")
    experiment = tmp_path / "exp.toml"
    experiment.write_text(
        '[disk]\nspec = "tiny.toml"\n\n[workload]\ntype = "trace"\nformat = "validate"\npath = "rel.trace"\n'
    )
    with pytest.raises(freeblock.WorkloadError, match=r"rel\.trace:2: ") as info:
        freeblock.run(experiment, progress=False)
    assert info.value.line == 2


@pytest.mark.parametrize("experiment", [["seed", 1], "seed = 1", 7])
def test_to_toml_of_what_is_no_dict_is_a_config_error_naming_it(experiment) -> None:
    with pytest.raises(freeblock.ConfigError, match="experiment: to_toml takes a dict") as info:
        freeblock.to_toml(experiment)
    assert info.value.field == "experiment"


@pytest.mark.parametrize("progress", ["yes", 2, None])
def test_a_progress_that_is_no_progress_is_a_config_error(progress) -> None:
    with pytest.raises(freeblock.ConfigError, match="progress: ") as info:
        freeblock.run(small_experiment(count=10), progress=progress)
    assert info.value.field == "progress"


def test_a_scheduler_by_name_runs_as_the_table_does() -> None:
    by_name = small_experiment(count=50)
    by_name["sim"]["scheduler"] = "sptf"
    by_table = small_experiment(count=50)
    by_table["sim"]["scheduler"] = {"type": "sptf"}
    a = freeblock.run(by_name, progress=False).summary
    b = freeblock.run(by_table, progress=False).summary
    assert a == b


@pytest.mark.parametrize(
    ("address", "timeout", "cls", "field"),
    [
        ("127.0.0.1:99999", 0.5, freeblock.StatsAddressError, "address"),
        ("http://[::1", 0.5, freeblock.StatsAddressError, "address"),
        ("127.0.0.1:9100\u2028x", 0.5, freeblock.StatsAddressError, "address"),
        (9100, 0.5, freeblock.StatsAddressError, "address"),
        ("127.0.0.1:1", -1, freeblock.StatsAddressError, "timeout"),
        ("127.0.0.1:1", 0.5, freeblock.StatsUnavailableError, None),
    ],
)
def test_server_stats_failures_are_freeblock_errors_naming_the_argument(address, timeout, cls, field) -> None:
    with pytest.raises(cls) as info:
        freeblock.server_stats(address, timeout=timeout)
    assert isinstance(info.value, freeblock.FreeblockError)
    assert getattr(info.value, "field", None) == field


def test_a_bad_value_in_an_experiment_file_names_its_line_and_key(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('seed = 1\n\n[workload]\ntype = "random"\ncount = -10\n')
    with pytest.raises(freeblock.ConfigError, match=r"line 5, `workload.count`") as info:
        freeblock.run(path, progress=False)
    assert (info.value.line, info.value.field, info.value.path) == (5, "workload.count", str(path))
