"""The per-file stage on several cores (``SKILLC_JOBS``) gives exactly the serial result.

Large repositories are linted in forked worker processes whose results come back as plain tuples
(``lint._document_record``); these tests hold that transfer to the serial output: every
diagnostic (line, column, fix) and every parsed document (text, body, frontmatter positions and
written scalar forms).
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from conftest import run_skillc, write_skill
from skillc.discover import discover
from skillc.lint import PARALLEL_MIN_ITEMS, _document_from_record, _document_record, read_item

GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # a well-formed GitHub token, split to stay out of scanners

# One of each kind of problem (and clean files), cycled over more skills than the parallel threshold.
VARIANTS: list[tuple[str, str, dict[str, str]]] = [
    ("clean", "---\nname: {n}\ndescription: Does the thing. Use when asked.\n---\n# T\n\nDo it.\n", {}),
    ("crlf-bom", "\ufeff---\r\nname: {n}\r\ndescription: Crlf and bom.\r\n---\r\nBody\r\n", {}),
    ("bad-yaml", "---\nname: {n}\ndescription: a: b\n---\nbody\n", {}),
    ("types", "---\nname: {n}\ndescription: Typed.\nversion: 2.0\ncreated: 2026-01-25\nmetadata:\n  x: [1, yes]\n---\nb\n",
     {}),
    ("dup-key", "---\nname: {n}\nname: other\ndescription: Dup.\n---\nb\n", {}),
    ("no-fm", "# Just a title\n\nNo frontmatter.\n", {}),
    ("unclosed", "---\nname: {n}\ndescription: never closed\n", {}),
    ("tabs", "---\nname: {n}\n\tdescription: tab\n---\nb\n", {}),
    ("conflict", "---\nname: {n}\ndescription: c\n---\n<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n", {}),
    ("links", ("---\nname: {n}\ndescription: Links.\n---\nSee [r](references/r.md), [gone](reference/x.md) and "
               "[up](../other/SKILL.md).\n"), {"references/r.md": "Then [more](more.md).\n",
                                             "references/more.md": "x\n"}),
    ("secret", "---\nname: {n}\ndescription: Secret.\n---\nexport GITHUB_TOKEN=" + GHP + "\n",
     {"scripts/run.sh": "curl -H 'Authorization: token " + GHP + "'\n"}),
    ("same-name", "---\nname: shared-name\ndescription: Same name as others.\n---\nb\n", {}),
    ("upper", "---\nname: Upper-{n}\ndescription: Upper case name.\n---\nb\n", {}),
]


@pytest.fixture(scope="module")
def big_repo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("parallel")
    count = PARALLEL_MIN_ITEMS + 60
    for i in range(count):
        label, text, extra = VARIANTS[i % len(VARIANTS)]
        name = f"{label}-{i:04d}"
        d = root / "skills" / f"group-{i % 7}" / name
        d.mkdir(parents=True)
        (d / "SKILL.md").write_bytes(text.format(n=name).encode("utf-8"))
        for rel, content in extra.items():
            (d / rel).parent.mkdir(parents=True, exist_ok=True)
            (d / rel).write_text(content)
    (root / "skills" / "group-0" / "binary-9999").mkdir()
    (root / "skills" / "group-0" / "binary-9999" / "SKILL.md").write_bytes(b"---\nname: \xff\xfe\n---\n")
    write_skill(root, "skills/group-1/plain-9998")
    return root


def test_documents_cross_worker_processes_unchanged(big_repo: Path):
    disc = discover(big_repo)
    assert len(disc.items) > PARALLEL_MIN_ITEMS
    for item in disc.items:
        doc = read_item(disc.root, item)
        back = _document_from_record(pickle.loads(pickle.dumps(_document_record(doc))))
        assert back == doc
        if doc.frontmatter is not None:  # positions and written forms, not only equality of mappings
            assert dict(back.frontmatter.keys.items()) == dict(doc.frontmatter.keys.items())
            assert dict(back.frontmatter.scalars.items()) == dict(doc.frontmatter.scalars.items())


def test_parallel_lint_reports_exactly_what_serial_lint_does(big_repo: Path):
    outputs = {}
    for jobs in ("1", "2"):
        proc = run_skillc("lint", str(big_repo), "--format", "json", "--select", "ALL",
                          env={"SKILLC_JOBS": jobs})
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
        outputs[jobs] = json.loads(proc.stdout)
    serial, parallel = outputs["1"], outputs["2"]
    assert parallel == serial
    found = {d["code"] for d in serial["diagnostics"]}
    # The corpus really exercises parse, link, secret and collection rules on both paths.
    assert {"P204", "P209", "P208", "P201", "P202", "P207", "P205", "P211", "B704", "B705", "B706", "B707",
            "C801"} <= found, sorted(found)
