"""A build onto a full disk names the path it could not write (a real, small tmpfs; needs root)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import (
    PROJECT,  # noqa: E402
    run_skillc,
)


@contextmanager
def tmpfs(where: Path, kib: int) -> Iterator[Path]:
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kib}k", "tmpfs", str(where)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip() or 'mount failed'})")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0 or shutil.which("mount") is None,
                    reason="mounting a small tmpfs needs root")
def test_a_full_disk_names_the_path_that_could_not_be_written(tmp_path: Path):
    # `write()` on a full device raises ENOSPC with no file name: the build said "No space left on
    # device" and nothing else.  Disks of growing sizes fill at different files (the index, a
    # skill's files, the schemas, the routing files): every failure names the file, under the disk.
    shutil.copytree(PROJECT / "skills", tmp_path / "repo")
    env = {"SKILLC_CACHE_DIR": str(tmp_path / "cache"), "SOURCE_DATE_EPOCH": "1"}
    failures: list[str] = []
    for kib in range(8, 1024, 24):
        with tmpfs(tmp_path / f"disk{kib}", kib) as disk:
            r = run_skillc("build", "repo", "--out", str(disk / "out"), "--no-site", cwd=tmp_path, env=env)
        if r.returncode == 0:
            break
        assert r.returncode == 1 and "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
        m = re.search(r"No space left on device: (\S+)", r.stderr)
        assert m and m.group(1).startswith(str(disk) + "/"), (kib, r.stderr)
        failures.append(m.group(1))
    assert len(failures) >= 3 and len(set(failures)) >= 3, failures  # (several write paths were reached)
    assert any("/api/files/" in f for f in failures) and any("/api/index/" in f for f in failures), failures
