"""Inputs a new user tried (issue 26, "Tried as a new user would"): each is a clear error
before any work naming the key, file or value (exit 2 on the CLI), or a correct result."""
from __future__ import annotations

import datetime

import pytest

cclab = pytest.importorskip("cclab")
pytest.importorskip("cclab._core")
from cclab import cli  # noqa: E402
from cclab.scenario import ScenarioError  # noqa: E402

SMALL = """name = "x"
duration = "1s"
[[links]]
from = "a"
to = "b"
rate = "1Mbps"
delay = "1ms"
[[traffic]]
name = "l"
type = "long_lived"
src = "a"
dst = "b"
"""


def _cli_error(capsys, *argv) -> str:
    """The one line `cclab ARGV` prints on stderr; it must exit 2."""
    assert cli.main(list(argv)) == 2
    err = capsys.readouterr().err
    assert err.startswith("cclab: error: ") and err.count("\n") == 1, err
    return err


@pytest.mark.parametrize("command", ["run", "validate"])
def test_a_device_is_not_a_scenario_file(capsys, command):
    # /dev/zero never ends: reading it used to end in MemoryError (exit 1).
    assert "/dev/zero: not a regular file" in _cli_error(capsys, command, "/dev/zero")


def test_a_toml_nested_thousands_deep_is_refused(tmp_path, capsys):
    f = tmp_path / "deep.toml"
    f.write_text(SMALL + "v = " + "[" * 3000 + "]" * 3000 + "\n")
    assert "deep.toml: invalid TOML: arrays or tables nested too deeply" in _cli_error(capsys, "run", str(f))


def test_a_dict_nested_thousands_deep_is_refused():
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(ScenarioError, match="nested too deeply"):
        cclab.validate({"name": "x", "v": deep})


def test_a_dict_nested_a_few_hundred_deep_is_refused_by_the_core():
    deep: list = []
    for _ in range(300):
        deep = [deep]
    with pytest.raises(ScenarioError, match="invalid JSON: arrays or tables nested too deeply"):
        cclab.validate({"name": "x", "v": deep})


def test_a_toml_datetime_as_a_delay_names_its_key(tmp_path, capsys):
    f = tmp_path / "dt.toml"
    f.write_text(SMALL.replace('delay = "1ms"', "delay = 1979-05-27T07:32:00"))
    assert "links[0].delay: a TOML date or time (1979-05-27T07:32:00)" in _cli_error(capsys, "validate", str(f))
    sc = cclab.scenario.load_scenario(SMALL)[0]
    sc["links"][0]["delay"] = datetime.time(0, 0, 1)
    with pytest.raises(ScenarioError, match=r"^links\[0\]\.delay: a TOML date or time"):
        cclab.validate(sc)


@pytest.mark.parametrize("row, cells", [("0.7,l", 2), ("0.7,1000,l,9", 4)])
def test_a_flow_list_row_missing_a_cell_is_refused(tmp_path, capsys, row, cells):
    (tmp_path / "fl.csv").write_text(f"start,size,class\n0.5,1000,l\n{row}\n")
    f = tmp_path / "fl.toml"
    f.write_text(SMALL.replace('type = "long_lived"', 'type = "flow_list"\nfile = "fl.csv"'))
    assert (f"traffic[0].file: {tmp_path / 'fl.csv'} line 3: expected 3 cells (start, size, class), got {cells}"
            in _cli_error(capsys, "run", str(f)))


def test_a_flow_list_row_of_another_class_missing_a_cell_is_refused_too(tmp_path):
    # A row without its class cell used to be skipped as another class's.
    (tmp_path / "fl.csv").write_text("start,size,class\n0.5,1000,l\n0.7,1000\n")
    sc = cclab.scenario.load_scenario(SMALL)[0]
    sc["traffic"][0].update(type="flow_list", file=str(tmp_path / "fl.csv"))
    with pytest.raises(ScenarioError, match="line 3: expected 3 cells"):
        cclab.validate(sc)


def test_the_largest_seed_is_reported_as_given(capsys, tmp_path):
    import json

    f = tmp_path / "s.toml"
    f.write_text(SMALL)
    top = 2**64 - 1
    assert cli.main(["run", str(f), "--seed", str(top), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["seed"] == top
    assert cclab.run(SMALL, seed=top).summary["seed"] == top


@pytest.mark.parametrize("protocol, key, bad", [("fast", "alpha", -5), ("ledbat", "gain", -1), ("ledbat", "target_ns", 0)])
def test_a_canonical_configuration_is_checked_as_a_scenario_is(protocol, key, bad):
    # Read from a file, FAST's alpha = -5 was refused; in a canonical configuration
    # given to cclab.run it ran (issue 26). Both ways pass the protocol's one check().
    sc = cclab.scenario.load_scenario(SMALL)[0]
    sc["traffic"][0]["protocol"] = protocol
    config = cclab.validate(sc)["config"]
    config["classes"][0]["transport"]["cc"]["params"][key] = bad
    with pytest.raises(ScenarioError, match=rf"^classes\[0\]\.transport\.cc\.params\.{key}: "):
        cclab.run(config)
