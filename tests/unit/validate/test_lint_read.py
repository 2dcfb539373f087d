"""Reading skill files (lint.read_item): bytes exactly as on disk, and files that are not regular
files or cannot be read are diagnostics, never a hang or a traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import run_skillc
from skillc.model import DiscoveredItem, ItemKind
from skillc.validate.lint import read_item


def item(rel: str) -> DiscoveredItem:
    return DiscoveredItem(ItemKind.SKILL, rel, rel.rsplit("/", 1)[0], "SKILL.md")


@pytest.mark.parametrize("size", [0, 1, 4095, 4096, 70_000])
def test_bytes_read_are_the_file(tmp_path: Path, size: int):
    body = ("x" * size).encode()
    raw = b"---\nname: s\ndescription: d\n---\n" + body
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "SKILL.md").write_bytes(raw)
    doc = read_item(str(tmp_path), item("s/SKILL.md"))
    assert doc.size == len(raw) and doc.text.encode() == raw and doc.body.encode() == body


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_link_to_a_fifo_is_reported_not_read(tmp_path: Path):
    # Opening a FIFO for reading waits for a writer: lint used to hang forever on such a link.
    repo = tmp_path / "repo"
    (repo / "s").mkdir(parents=True)
    os.mkfifo(repo / "pipe")
    (repo / "s" / "SKILL.md").symlink_to("../pipe")
    proc = run_skillc("lint", str(repo), "--format", "json", timeout=60)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert '"code": "D105"' in proc.stdout and "not a regular file" in proc.stdout
