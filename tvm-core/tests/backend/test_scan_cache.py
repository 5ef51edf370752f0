"""The entry-point scan cache holds data, not code to run: a cache of another shape is ignored
and rewritten, and an entry point that no installed distribution declares is never imported,
even when the cache names it with the right directory stamps."""

from __future__ import annotations

import json
import os
import zlib
from pathlib import Path

import pytest

from test_plugin_system import REPORT

POISON_MODULE = """
import pathlib
def hook(ctx):
    pathlib.Path({marker!r}).write_text("ran")
"""


def cache_file(tmp_path: Path) -> Path:
    (found,) = (tmp_path / "cache" / "backends").glob("entry-points-*.json")
    return found


@pytest.mark.parametrize(
    "content",
    [
        "[1, 2]",
        '{"dirs": []}',
        '{"dirs": {"x": "y"}}',
        '{"dirs": {"/": [1, [[1]]]}}',
        "not json",
        '{"dirs": {"/": [null, [["a", "b"]]]}}',
    ],
)
def test_cache_of_another_shape_is_ignored_and_rewritten(run_python, tmp_path, content):
    first = run_python(REPORT, plugins=("good",))
    assert "good" in first.json()["records"], first.stderr
    path = cache_file(tmp_path)
    path.write_text(content)
    again = run_python(REPORT, plugins=("good",))
    assert again.returncode == 0, again.stderr
    assert again.json()["records"]["good"]["status"] == "active"
    assert isinstance(json.loads(path.read_text())["dirs"], dict)  # rewritten from a fresh scan


def test_entry_point_that_no_distribution_declares_is_never_run(run_python, tmp_path):
    first = run_python(REPORT, plugins=("good",))
    assert "good" in first.json()["records"], first.stderr
    site = tmp_path / "plugins"
    marker = tmp_path / "poison-ran"
    (site / "poison_hook.py").write_text(POISON_MODULE.format(marker=str(marker)))
    path = cache_file(tmp_path)
    cache = json.loads(path.read_text())
    entries = cache["dirs"][str(site)][1]
    entries.append(["evil", "poison_hook:hook", "tvm-backend-good", "0.1.0", entries[0][4]])
    entries.append(["evil2", "os:system", "nowhere", "1", "nowhere-1.dist-info"])
    cache["dirs"][str(site)][0] = site.stat().st_mtime_ns  # the stamp matches: only the check can refuse
    cache["crc"] = zlib.crc32(json.dumps(cache["dirs"], sort_keys=True).encode())  # and so does the checksum
    path.write_text(json.dumps(cache))
    again = run_python(REPORT, env={"PYTHONPATH": str(site)})  # the same folder, not reinstalled
    assert again.returncode == 0, again.stderr
    records = again.json()["records"]
    assert "evil" not in records and "evil2" not in records, records
    assert records["good"]["status"] == "active"
    assert not marker.exists(), "an entry point named only by the cache was imported and called"
    rewritten = json.loads(path.read_text())["dirs"][str(site)][1]
    assert [e[0] for e in rewritten] == [e[0] for e in entries[:-2]]


def test_cache_entry_claiming_another_distribution_is_rescanned(run_python, tmp_path):
    """A cached entry whose name and value are declared, but under another distribution or
    version (a first-party name, say), is not trusted: the folder is scanned again."""
    first = run_python(REPORT, plugins=("good",))
    assert "good" in first.json()["records"], first.stderr
    site = tmp_path / "plugins"
    path = cache_file(tmp_path)
    cache = json.loads(path.read_text())
    entry = cache["dirs"][str(site)][1][0]
    real = entry[2:4]
    entry[2:4] = ["tvm-backend-cuda", "99.0"]
    cache["crc"] = zlib.crc32(json.dumps(cache["dirs"], sort_keys=True).encode())
    path.write_text(json.dumps(cache))
    again = run_python(REPORT, env={"PYTHONPATH": str(site)})
    assert again.returncode == 0, again.stderr
    rewritten = json.loads(path.read_text())["dirs"][str(site)][1][0]
    assert rewritten[2:4] == real


def test_damaged_cache_file_is_ignored_whole(run_python, tmp_path):
    """A flipped character anywhere in the cache (its checksum no longer matches) means a
    fresh scan, whatever the damage looks like."""
    first = run_python(REPORT, plugins=("good",))
    site = tmp_path / "plugins"
    path = cache_file(tmp_path)
    text = path.read_text()
    path.write_text(text.replace("good", "goof", 1))
    again = run_python(REPORT, env={"PYTHONPATH": str(site)})
    assert again.returncode == 0, again.stderr
    assert again.json()["records"]["good"]["status"] == "active"
    assert "goof" not in path.read_text() and first.returncode == 0


def test_an_entry_point_added_in_place_is_found(run_python, tmp_path):
    """Editing an installed entry_points.txt in place leaves its folder's time unchanged: the
    cached scan named only the entry points the file declared before."""
    first = run_python(REPORT, plugins=("good",))
    assert "good" in first.json()["records"], first.stderr
    site = tmp_path / "plugins"
    (points,) = site.glob("*.dist-info/entry_points.txt")
    stamp = site.stat().st_mtime_ns
    points.write_text(points.read_text() + "good_too = tvm_backend_good:activate\n")
    assert site.stat().st_mtime_ns == stamp
    again = run_python(REPORT, env={"PYTHONPATH": str(site)})
    assert again.returncode == 0, again.stderr
    assert "good_too" in again.json()["records"], again.json()["records"]


def test_a_fifo_in_place_of_the_scan_cache_does_not_block_import(run_python, tmp_path):
    first = run_python(REPORT, plugins=("good",))
    path = cache_file(tmp_path)
    path.unlink()
    os.mkfifo(path)
    again = run_python(REPORT, env={"PYTHONPATH": str(tmp_path / "plugins")}, timeout=60)
    assert again.returncode == 0 and first.returncode == 0, again.stderr
    assert again.json()["records"]["good"]["status"] == "active"
