"""The discovery indexes' rows, written out by hand for speed, are the canonical JSON of the entry
(``compact_json``) byte for byte, whatever the skill's text holds."""

from __future__ import annotations

import json

import pytest

from skillc.emit.wellknown import DiscoverySkill, index_row, legacy_files, legacy_index, legacy_row
from skillc.jsonio import compact_json, json_bytes

HOSTILE = ['plain', 'quote " and \\ backslash', 'tab\there\nnewline\r\x00\x1f\x7f', 'ünïcødé ✓ 😀',
           '\u2028\u2029 line separators', 'lone \udc80 surrogate', '</script><!--', '']


def _skill(text: str, files=None) -> DiscoverySkill:
    path = text.encode("utf-8", "replace").decode()  # (a path that is not UTF-8 is never published: R104)
    files = files or (("SKILL.md", "a" * 64), (f"references/{path or 'x'}.md", "b" * 64), ("assets/z.js", "c" * 64))
    return DiscoverySkill(f"col/{text}", f"name-{text}", f"A description: {text}", f"api/discovery/col/{text}.zip",
                          "d" * 64, tuple(files))


@pytest.mark.parametrize("text", HOSTILE)
def test_index_row_is_the_canonical_json_of_the_entry(text):
    skill = _skill(text)
    url = f"../../api/discovery/{text}.zip"
    from skillc.emit.common import skill_digest

    files = sorted(skill.files, key=lambda f: (f[0] != "SKILL.md", f[0].encode("utf-8")))
    expected = compact_json({
        "name": skill.name, "description": skill.description, "type": "archive", "url": url,
        "digest": "sha256:" + skill.archive_sha256, "id": skill.id,
        "files": [{"path": p, "digest": "sha256:" + s} for p, s in files], "files_digest": skill_digest(files)})
    assert index_row(skill, url) == expected
    assert json.loads(index_row(skill, url))["description"] == skill.description


@pytest.mark.parametrize("text", HOSTILE)
def test_legacy_row_and_index_are_the_canonical_json_of_the_entries(text):
    skills = [_skill(text), _skill(text + "2", (("SKILL.md", "e" * 64),))]
    entries = [{"name": s.name, "description": s.description, "files": legacy_files(s)} for s in skills]
    assert [legacy_row(s) for s in skills] == [compact_json(e) for e in entries]
    try:
        expected = json_bytes({"skills": entries}, pretty=True)
    except UnicodeEncodeError:  # (a lone surrogate is refused the same way by both)
        with pytest.raises(UnicodeEncodeError):
            legacy_index(skills)
    else:
        assert legacy_index(skills) == expected
    assert legacy_index([]) == json_bytes({"skills": []}, pretty=True)
