"""Every document and collection rule: one tree that triggers it and one that does not.

Each case builds a small skill tree in ``tmp_path`` and lints it with ``lint.lint_root``; the
failing tree must produce the code, the passing tree must not.  ``test_every_rule_has_a_case``
keeps this table from falling behind the registry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import write_skill
from skillc.validate.lint import LintConfig, lint_root
from skillc.validate.rules.builtin.frontmatter import _split_tools_nested, split_tools
from skillc.validate.rules.loader import by_code_order
from skillc.validate.rules.registry import LintSettings

DESC = "Does the thing. Use when the user asks for the thing."


def skill(fm: str = "", body: str = "# T\n\nDo it.\n", rel: str = "demo", files: dict | None = None,
          name: str | None = None) -> Callable[[Path], None]:
    """A SKILL.md at ``rel`` with name/description plus ``fm`` extra frontmatter lines."""

    def build(root: Path) -> None:
        n = name if name is not None else rel.rsplit("/", 1)[-1]
        write_skill(root, rel, f"name: {n}\ndescription: {DESC}\n{fm}", body=body)
        for path, content in (files or {}).items():
            target = root / rel / path
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8")
    return build


def raw(rel: str, text: str) -> Callable[[Path], None]:
    def build(root: Path) -> None:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return build


def both(*builders: Callable[[Path], None]) -> Callable[[Path], None]:
    def build(root: Path) -> None:
        for b in builders:
            b(root)
    return build


@dataclass
class Case:
    code: str
    bad: Callable[[Path], None]
    good: Callable[[Path], None]
    profile: str = "recommended"
    settings: dict = field(default_factory=dict)
    good_settings: dict | None = None  # settings for the passing tree, when they differ
    extend_select: tuple[str, ...] = ()  # an opt-in rule (in no profile) is selected on top


HOOKS_OK = """hooks:
  PreToolUse:
    - matcher: "Write|Edit"
      hooks:
        - type: command
          command: ./check.sh
  Stop:
    - hooks:
        - type: command
          command: echo done
"""
STEPS_OK = """inputs:
  query: {type: string, required: true}
steps:
  - tool: search_notes
    args: {query: "{{ query }}"}
"""
SECRET = "ghp_" + "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
LONG = "".join(f"line {i}\n" for i in range(600))

CASES = [
    # S3xx: the specification
    Case("S301", raw("demo/SKILL.md", f"---\ndescription: {DESC}\n---\nx\n"), skill()),
    Case("S302", skill(name="''"), skill()),
    Case("S303", skill(rel="a" * 65), skill()),
    Case("S304", skill(name="Demo"), skill()),
    Case("S305", skill(name="-demo"), skill()),
    Case("S306", skill(rel="de--mo"), skill(rel="de-mo")),
    Case("S307", skill(rel="de_mo"), skill(rel="de-mo")),
    Case("S308", skill(name="other"), skill()),
    Case("S309", raw("demo/SKILL.md", "---\nname: demo\n---\nx\n"), skill()),
    Case("S310", raw("demo/SKILL.md", "---\nname: demo\ndescription:\n---\nx\n"), skill()),
    Case("S311", raw("demo/SKILL.md", f"---\nname: demo\ndescription: {'x' * 1100}\n---\nx\n"), skill()),
    Case("S312", skill("compatibility: ''\n"), skill("compatibility: Requires git\n")),
    Case("S313", skill("metadata:\n  version: 1.0\n"), skill("metadata:\n  version: '1.0'\n")),
    Case("S314", skill("allowed-tools: [Read]\n"), skill("allowed-tools: Read\n"), profile="spec"),
    Case("S315", skill("license: {name: MIT}\n"), skill("license: MIT\n")),
    Case("S316", skill("version: '1.0'\n"), skill(), profile="spec"),
    # F4xx: extended frontmatter
    Case("F401", skill("website: https://example.com\n"), skill("version: '1.0'\ntags: [a]\nauthor: me\nhomepage: https://x.org\n")),
    Case("F402", skill("version: 2.0\n"), skill("version: '2.0'\n")),
    Case("F403", skill("created: 2026-01-25\n"), skill("created: '2026-01-25'\n")),
    Case("F404", skill("tags: pdf, ocr\n"), skill("tags: [pdf, ocr]\n")),
    Case("F405", skill("user-invocable: 'true'\n"), skill("user-invocable: true\n")),
    Case("F406", skill("allowed-tools: Read, Bash(git:*\n"), skill("allowed-tools: Read Bash(git:*)\n")),
    Case("F407", skill("allowed-tools: Read, Write\n"), skill("allowed-tools: Read Write\n")),
    Case("F408", skill("hooks:\n  PreToolUse:\n    matcher: Write\n"), skill(HOOKS_OK)),
    Case("F409", skill("hooks:\n  BeforeTool: []\n"), skill(HOOKS_OK)),
    Case("F410", skill(HOOKS_OK.replace("Write|Edit", "Write|Edit(")), skill(HOOKS_OK)),
    Case("F411", skill(HOOKS_OK.replace("type: command\n          command: ./check", "type: shell\n          command: ./check")),
         skill(HOOKS_OK)),
    Case("F412", raw("demo/SKILL.md", f"---\nName: demo\nname: demo\ndescription: {DESC}\n---\nx\n"), skill()),
    Case("F413", skill("argument-hint: [file]\n"), skill("argument-hint: '[file]'\n")),
    Case("F414", skill(fm='version: "3.2.0"\nmetadata:\n  version: "1.0.0"\n'),
         skill(fm='version: "3.2.0"\nmetadata:\n  author: ana\n  version: "3.2.0"\n')),
    # F415-F420: what Claude Code does with the frontmatter (agnix CC-SK-*, AS-020)
    Case("F415", skill("allowed-tools: Read Azure\n"), skill("allowed-tools: Read mcp__azure__deploy\n")),
    Case("F416", skill("allowed-tools: Bash Read\n"), skill("allowed-tools: Bash(git:*) Read\n"),
         extend_select=("F416",)),
    Case("F417", skill(rel="deploy-app"), skill("disable-model-invocation: true\n", rel="deploy-app"),
         extend_select=("F417",)),
    Case("F418", raw("demo/SKILL.md", "---\nname: demo\ndescription: Helps with PDFs.\n---\nx\n"), skill(),
         extend_select=("F418",)),
    Case("F419", skill("model: gpt-4\n"), skill("model: sonnet\n")),
    Case("F420", skill("agent: Explore\n"), skill("context: fork\nagent: Explore\n")),
    # T5xx: step skills
    Case("T501", skill("inputs:\n  query: text\n"), skill(STEPS_OK)),
    Case("T502", skill("steps:\n  tool: x\n"), skill(STEPS_OK)),
    Case("T503", skill("steps:\n  - tool: a\n    script: scripts/a.py\n"), skill(STEPS_OK)),
    Case("T504", skill(STEPS_OK.replace("{{ query }}", "{{ qurey }}")), skill(STEPS_OK)),
    Case("T505", skill(STEPS_OK), skill(STEPS_OK), settings={"tools": ("search",)},
         good_settings={"tools": ("search_notes",)}),
    Case("T506", skill(STEPS_OK.replace("tool: search_notes", "tool: skill_search")), skill(STEPS_OK)),
    Case("T507", skill(STEPS_OK, rel="x" * 60), skill(STEPS_OK)),
    Case("T508", skill(STEPS_OK.replace("steps:", "  limit: {type: integer}\nsteps:")), skill(STEPS_OK)),
    Case("T509", skill("steps:\n  - script: ../run.sh\n"),
         skill("steps:\n  - script: scripts/run.sh\n", files={"scripts/run.sh": "echo\n"})),
    # M6xx: skill-memory
    Case("M601", skill("skill-memory:\n  enabled: yes\n"), skill("skill-memory:\n  enabled: true\n")),
    Case("M602", skill("skill-memory:\n  enabled: true\n  max_tokens: 0\n"),
         skill("skill-memory:\n  enabled: true\n  max_tokens: 1500\n  max_pinned_tokens: 4000\n")),
    Case("M603", skill("skill-memory:\n  enabled: true\n  dedup_threshold: 92\n"),
         skill("skill-memory:\n  enabled: true\n  dedup_threshold: 0.92\n")),
    Case("M604", skill("skill-memory:\n  enabled: true\n  ranking_relevance: 0\n  ranking_recency: 0\n  ranking_hit: 0\n"),
         skill("skill-memory:\n  enabled: true\n  ranking_relevance: 0.7\n  ranking_recency: 0.3\n  ranking_hit: 0\n")),
    Case("M605", skill("skill-memory:\n  enabled: true\n  max-tokens: 10\n"), skill("skill-memory:\n  enabled: true\n")),
    # B7xx: body, links, secrets
    Case("B701", skill(body=LONG), skill()),
    Case("B702", skill(body="word " * 5000), skill()),
    Case("B703", skill(body=""), skill()),
    Case("B704", skill(body="See [guide](reference/guide.md).\n", files={"references/guide.md": "x\n"}),
         skill(body="See [guide](references/guide.md#top) and [site](https://x.dev) and `[no](missing.md)`.\n",
               files={"references/guide.md": "x\n"})),
    Case("B705", skill(body="See [other](../other/SKILL.md).\n"), skill(body="See [x](https://example.com/../x).\n")),
    Case("B708", skill(body="For the API read `references/api.md`.\n", files={"references/API.md": "x\n"}),
         skill(body="For the API read `references/api.md`, see [t](references/t.md) (B704's), and\n\n"
                    "```\nreferences/tree.md\n```\n\nnot `docs/api.md` (the user's project).\n",
               files={"references/api.md": "x\n"}), extend_select=("B708",)),
    Case("B706", skill(body="See [a](references/a.md).\n",
                       files={"references/a.md": "See [b](b.md).\n", "references/b.md": "b\n"}),
         skill(body="See [a](references/a.md) and [b](references/b.md).\n",
               files={"references/a.md": "Back to [skill](../SKILL.md).\n", "references/b.md": "b\n"})),
    Case("B707", skill(files={"references/setup.md": f"export GITHUB_TOKEN={SECRET}\n"}),
         skill(files={"references/setup.md": "export GITHUB_TOKEN=${GITHUB_TOKEN}\n"})),
    Case("B709", skill(body="<example>\nRun it.\n"), skill(body="<example>\nRun it.\n</example>\n")),
    Case("B710", skill(body="Run /Users/alice/app/build.sh\n"), skill(body="Run scripts/build.sh or $HOME/x\n")),
    Case("B711", skill(body="```bash\nawk '{print $1}'\n```\n"), skill(body="```bash\nawk '{print \\$1}'\n```\n")),
    Case("B712", skill(files={"references/api.md": LONG}),
         skill(files={"references/api.md": "## Contents\n- [A](#a)\n" + LONG}), extend_select=("B712",)),
    # C8xx: collection
    Case("C801", both(skill(rel="a/demo"), skill(rel="b/demo")), both(skill(rel="a/demo"), skill(rel="b/other"))),
    Case("C802", both(skill(rel="a"), skill(rel="b")), both(skill(rel="a"), skill(rel="b")),
         settings={"description_budget": 60}, good_settings={}),
    # L9xx: lightweight and convention files
    Case("L901", raw(".skills/boot.md", f"---\ndescription: {DESC}\n---\nx\n"),
         raw(".skills/boot.md", f"---\nname: boot\ndescription: {DESC}\n---\nx\n")),
    Case("L902", raw(".skills/boot.md", "---\nname: boot\n---\nx\n"),
         raw(".skills/boot.md", f"---\nname: boot\ndescription: {DESC}\n---\nx\n")),
    Case("L903", raw(".skills/boot.md", f"---\nname: boot\ndescription: {DESC}\nversion: '1'\n---\nx\n"),
         raw(".skills/boot.md", f"---\nname: boot\ndescription: {DESC}\ntags: [a]\n---\nx\n")),
    Case("L904", raw("AGENTS.md", "\n"), raw("AGENTS.md", "# Build\n\nRun make.\n")),
    Case("L905", raw("CLAUDE.md", LONG), raw("CLAUDE.md", "# Notes\n")),
    Case("L906", raw("AGENTS.md", "# Agents\n\nSee `docs/setup.md`.\n"),
         both(raw("AGENTS.md", "# Agents\n\nSee `docs/setup.md`.\n"), raw("docs/setup.md", "# Setup\n"))),
    # K0xx: claude profile
    Case("K001", skill(rel="claude-helper"), skill(), profile="claude"),
    Case("K002", raw("demo/SKILL.md", "---\nname: demo\ndescription: Fill <path> in.\n---\nx\n"), skill(), profile="claude"),
    Case("K003", skill(files={".claude-plugin/plugin.json": "{}"}), skill(files={"assets/x.json": "{}"}), profile="claude"),
    Case("K004", skill(files={"assets/big.bin": b"\0" * (8 * 1024 * 1024 + 1)}), skill(files={"assets/x.bin": b"\0"}),
         profile="claude"),
    Case("K005", skill(rel="Demo_Tools"), skill(rel="demo-tools"), profile="claude"),
]


def _codes(root: Path, case: Case, good: bool = False) -> list[str]:
    settings = case.good_settings if good and case.good_settings is not None else case.settings
    config = LintConfig(profile=case.profile, settings=LintSettings(**settings), extend_select=case.extend_select)
    return [d.code for d in lint_root(root, config).diagnostics]


@pytest.mark.parametrize("case", CASES, ids=[c.code for c in CASES])
def test_failing_case_reports_the_rule(case: Case, tmp_path: Path):
    case.bad(tmp_path)
    assert case.code in _codes(tmp_path, case)


@pytest.mark.parametrize("case", CASES, ids=[c.code for c in CASES])
def test_passing_case_is_clean_for_the_rule(case: Case, tmp_path: Path):
    case.good(tmp_path)
    assert case.code not in _codes(tmp_path, case, good=True)


def test_every_rule_has_a_case():
    checked = {c.code for c in CASES}
    missing = [r.code for r in by_code_order() if r.scope in ("document", "collection") and r.code not in checked]
    assert not missing, f"rules without a failing/passing test case: {missing}"


def test_rules_that_name_their_keys_find_nothing_without_them(corpora: Path):
    """A rule declared with ``keys=`` is skipped on files without those keys: on real skills, with
    the gate bypassed, it must indeed find nothing there (the declaration is the rule's truth)."""
    from skillc.discover.walk import discover
    from skillc.validate.lint import read_item
    from skillc.validate.rules.loader import load_all
    from skillc.validate.rules.registry import RuleContext

    gated = [r for r in load_all().values() if r.keys is not None and r.scope == "document"]
    assert {"F408", "M601", "S313", "T502"} <= {r.code for r in gated}
    settings = LintSettings(tools=("search_notes",))  # so the tool check (T505) runs
    checked = 0
    for name in ("openclaw__skills", "K-Dense-AI__claude-scientific-skills", "github__awesome-copilot"):
        disc = discover(corpora / name)
        for item in disc.items[:600]:
            doc = read_item(disc.root, item)
            ctx = RuleContext(item, doc, Path(disc.root), settings, "recommended")
            for r in gated:
                if item.kind in r.kinds and r.keys.isdisjoint(ctx.meta):
                    assert list(r.check(ctx)) == [], (r.code, item.path)
                    checked += 1
    assert checked > 10_000


@pytest.mark.parametrize("lines, reported", [(500, False), (501, True)])
def test_body_line_limit_is_inclusive(tmp_path: Path, lines: int, reported: bool):
    """B701 reports a body of more than `max-body-lines` (500) lines, as skill-validator's ">500 lines"."""
    skill(body="".join(f"line {i}\n" for i in range(lines)))(tmp_path)
    found = [d for d in lint_root(tmp_path, LintConfig()).diagnostics if d.code == "B701"]
    assert bool(found) is reported
    if found:
        assert found[0].message == "body is 501 lines; keep it to 500 or fewer and move details to references/"


def test_meerkats_requires_capabilities_is_a_known_key(tmp_path: Path):
    """Moved under `metadata` (F401's usual hint) it would no longer gate the skill in Meerkat."""
    skill(fm="requires_capabilities: [shell]\n")(tmp_path)
    assert "F401" not in [d.code for d in lint_root(tmp_path, LintConfig()).diagnostics]


def test_a_reference_linking_to_a_file_skill_md_links_too_is_one_level_deep(tmp_path: Path):
    """B706 (seen on 79 real skills): both files are one hop from SKILL.md."""
    skill(body="# T\n\nSee [a](references/a.md) and [b](references/b.md).\n",
          files={"references/a.md": "Also [b](b.md).\n", "references/b.md": "# B\n"})(tmp_path)
    assert "B706" not in [d.code for d in lint_root(tmp_path, LintConfig()).diagnostics]


def test_f401_suggests_a_key_only_when_the_value_fits_it(tmp_path: Path):
    skill(fm="models: [claude-sonnet-4, claude-opus-4]\nmodl: opus\n")(tmp_path)
    messages = {d.message for d in lint_root(tmp_path, LintConfig()).diagnostics if d.code == "F401"}
    assert "unknown frontmatter key 'models'; move it under 'metadata' if clients should keep it" in messages
    assert "unknown frontmatter key 'modl'; did you mean 'model'?" in messages


def test_a_link_into_a_nested_skill_is_not_broken(tmp_path: Path):
    """B704 (31 real findings): a nested skill's files are its own, but the link resolves."""
    skill(body="# T\n\nSee [setup](setup/SKILL.md) and [gone](references/gone.md).\n")(tmp_path)
    write_skill(tmp_path, "demo/setup")
    found = [d.message for d in lint_root(tmp_path, LintConfig()).diagnostics if d.code == "B704"]
    assert found == ["link target 'references/gone.md' does not exist in the skill"]


def test_b704_decodes_percent_encoded_links_and_skips_html_comments(tmp_path: Path):
    skill(body="# T\n\n[ok](references/my%20file.md) [gone](references/no%20such.md) [t](%VAR%/x.md)\n"
               "<!-- [old](references/removed.md) -->\n",
          files={"references/my file.md": "x\n"})(tmp_path)
    found = [d.message for d in lint_root(tmp_path, LintConfig()).diagnostics if d.code == "B704"]
    assert found == ["link target 'references/no%20such.md' does not exist in the skill"]


def test_b704_skips_escaped_brackets(tmp_path: Path):
    """CommonMark: `\\[text\\](path)` is literal text showing the syntax, not a link; a doubled
    backslash is a literal backslash, and the link after it is real."""
    skill(body="# T\n\nWrite \\[title\\](references/escaped.md) or [t\\](references/half.md), "
               "not \\\\[gone](references/gone.md).\n")(tmp_path)
    found = [d.message for d in lint_root(tmp_path, LintConfig()).diagnostics if d.code == "B704"]
    assert found == ["link target 'references/gone.md' does not exist in the skill"]


def test_a_fence_with_an_info_string_never_closes_a_block(tmp_path: Path):
    """CommonMark: a closing fence has nothing after it, so ```python inside an open block is code
    (one stray fence used to swap code and prose for the rest of the file)."""
    skill(body="# T\n\n```\nstray\n\n```python\ncode\n```\n\n[a](references/missing.md)\n")(tmp_path)
    found = [d.message for d in lint_root(tmp_path, LintConfig()).diagnostics if d.code == "B704"]
    assert found == ["link target 'references/missing.md' does not exist in the skill"]


def test_b704_an_unclosed_comment_opener_in_text_or_code_hides_no_link(tmp_path: Path):
    """`<!--` in a code span or a fenced block, or unclosed within a line, opens no comment (it used to
    blank the rest of the file); `<!--` opening a line, unclosed, is an HTML block to the end."""
    skill(body="# T\n\nWrite `<!--` to open a comment.\n\n[a](references/one.md)\n\n"
               "```html\n<!-- header\n```\n\n[b](references/two.md) and <!-- inline\n\n[c](references/three.md)\n\n"
               "<!-- old\n[d](references/hidden.md)\n")(tmp_path)
    found = [d.message for d in lint_root(tmp_path, LintConfig()).diagnostics if d.code == "B704"]
    assert found == [f"link target 'references/{n}.md' does not exist in the skill" for n in ("one", "two", "three")]


def test_b704_an_unmatched_backtick_hides_no_link_outside_its_paragraph(tmp_path: Path):
    """CommonMark: a code span closes at a run of exactly as many backticks, in its paragraph; an
    unclosed `` ` `` used to pair with the next span paragraphs later and hide the links between
    (a fenced block in a list item, indented 4, with a blank line inside, stays code)."""
    skill(body="# T\n\nRun `scripts/a.py to start.\n\nSee [a](references/one.md).\n\nThen `load()`.\n\n"
               "``\n[b](references/two.md)`\n\n"
               "1. Run:\n\n    ```python\n    x = 1\n\n    handlers[name](event)\n    ```\n")(tmp_path)
    found = [d.message for d in lint_root(tmp_path, LintConfig()).diagnostics if d.code == "B704"]
    assert found == [f"link target 'references/{n}.md' does not exist in the skill" for n in ("one", "two")]


def test_b704_a_code_span_never_pairs_backticks_across_list_items_headings_or_quotes(tmp_path: Path):
    """A list item, a heading, a quote or a table row is a block of its own: a stray backtick in one
    item paired with one in a later item and hid the link between."""
    skill(body="# T\n\n- run `foo\n- see [a](references/one.md)\n- bar` done\n\n"
               "## Use `x\n> [b](references/two.md)\n> y` z\n")(tmp_path)
    found = [d.message for d in lint_root(tmp_path, LintConfig()).diagnostics if d.code == "B704"]
    assert found == [f"link target 'references/{n}.md' does not exist in the skill" for n in ("one", "two")]


def test_b704_a_line_of_inline_code_opens_no_fenced_block(tmp_path: Path):
    """"```js``` is inline" starts with three backticks but is no fence (a backtick fence's info
    string holds no backtick): it hid every link below it as code."""
    skill(body="# T\n\n```js``` is inline code.\n\nSee [a](references/one.md).\n")(tmp_path)
    found = [d.message for d in lint_root(tmp_path, LintConfig()).diagnostics if d.code == "B704"]
    assert found == ["link target 'references/one.md' does not exist in the skill"]


def test_b704_checks_an_image_inside_a_link(tmp_path: Path):
    """A clickable image `[![alt](assets/d.png)](assets/d.png)`: both paths are links (the image was skipped)."""
    skill(body="# T\n\n[![diagram](assets/gone.png)](assets/big.png)\n", files={"assets/big.png": b"x"})(tmp_path)
    found = [(d.message, d.line, d.column) for d in lint_root(tmp_path, LintConfig()).diagnostics if d.code == "B704"]
    assert found == [("link target 'assets/gone.png' does not exist in the skill", 7, 13)]


def test_b704_a_definition_needs_a_destination_alone_or_with_a_title(tmp_path: Path):
    """CommonMark: "[Name]: a short description" is text (no definition: "a" is followed by neither a
    title nor the end of the line), and a destination is never read across a blank line."""
    skill(body="# T\n\n[Project Name]: A short description\n\n[x]:\n\nfoo\n\n"
               "[ok]: references/gone.md \"Title\"\n[next]:\n  references/later.md\n")(tmp_path)
    found = [d.message for d in lint_root(tmp_path, LintConfig()).diagnostics if d.code == "B704"]
    assert found == [f"link target 'references/{n}.md' does not exist in the skill" for n in ("gone", "later")]


def test_link_positions_in_a_file_with_old_mac_line_endings(tmp_path: Path):
    """A CR alone ends a line (P204 reads it so): B704 and B708 used to count LFs only, placing every
    link on the body's first line, and no fence line was found."""
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo/SKILL.md").write_bytes(
        f"---\rname: demo\rdescription: {DESC}\r---\r# T\r\rSee [a](references/gone.md).\r"
        "```\rd[k](v)\r```\rRead `references/api.md`.\r".encode())
    diags = lint_root(tmp_path, LintConfig(extend_select=("B708",))).diagnostics
    assert [(d.code, d.line, d.column) for d in diags if d.code in ("B704", "B708")] == [("B704", 7, 9), ("B708", 11, 7)]


def test_s313_never_quotes_a_null_into_text(tmp_path: Path):
    skill(fm="metadata:\n  a: ~\n  b: 2.0\n")(tmp_path)
    found = {d.message: d for d in lint_root(tmp_path, LintConfig(profile="spec")).diagnostics if d.code == "S313"}
    assert set(found) == {"metadata value 'a' must be a string, found nothing (null)",
                          "metadata value 'b' must be a string, found a number"}
    assert found["metadata value 'a' must be a string, found nothing (null)"].fix is None
    assert found["metadata value 'b' must be a string, found a number"].fix is not None  # quoted: '2.0'


@pytest.mark.parametrize("line", ["version:", "version: ~", "model:", "author: null"])
def test_f402_f413_never_quote_a_missing_value(tmp_path: Path, line: str):
    """`--fix` quoted an empty value into `version:''` (YAML no longer parsed) and `~` into the
    text '~'; the fix quotes what the author wrote, and there is nothing written to keep."""
    skill(fm=f"{line}\nlicense: MIT\n")(tmp_path)
    found = [d for d in lint_root(tmp_path, LintConfig()).diagnostics if d.code in ("F402", "F413")]
    assert len(found) == 1 and found[0].fix is None, found
    assert "nothing (null)" in found[0].message and "quote it" not in found[0].message


@pytest.mark.parametrize("written, column", [
    ('"(?!x)"', 17),  # the "(" inside the quotes
    ('"\\\\d(?!x)"', 16),  # an escape before it: the value's start, not a column 1 character short
    ("'it''s(?!x)'", 16),
])
def test_f410_column_is_inside_the_value_only_where_the_text_is_as_written(tmp_path: Path, written: str,
                                                                           column: int):
    skill(fm=f"hooks:\n  PreToolUse:\n    - matcher: {written}\n      hooks:\n        - type: command\n"
             "          command: x\n")(tmp_path)
    (d,) = [d for d in lint_root(tmp_path, LintConfig()).diagnostics if d.code == "F410"]
    assert (d.line, d.column) == (6, column), d.message


@pytest.mark.parametrize("name, suggested", [("Café", "cafe"), ("İstanbul", "istanbul"), ("Straße", "strasse"),
                                              ("cafe\u0301", "cafe")])
def test_s304_s307_suggest_the_name_without_its_accents(tmp_path: Path, name: str, suggested: str):
    """The suggestion dropped each non-ASCII letter: 'Café' became 'caf', 'İstanbul' 'i-stanbul'."""
    skill(name=name, rel=suggested)(tmp_path)
    found = [d.message for d in lint_root(tmp_path, LintConfig(profile="spec")).diagnostics
             if d.code in ("S304", "S307")]
    assert found and all(m.endswith(f"(try {suggested!r})") for m in found), found


def test_s311_under_the_claude_profile_measures_the_description_as_quick_validate_does(tmp_path: Path):
    """quick_validate strips the description before its 1,024 limit: a `|` block of exactly 1,024
    characters (1,025 with the newline the block adds) passes there and under `--profile claude`,
    and fails under the specification's profile, as skills-ref counts the newline."""
    raw("demo/SKILL.md", "---\nname: demo\ndescription: |\n  " + "x" * 1024 + "\n---\nBody.\n")(tmp_path)

    def s311(profile: str) -> list[str]:
        return [d.message for d in lint_root(tmp_path, LintConfig(profile=profile)).diagnostics if d.code == "S311"]

    assert s311("claude") == []
    assert s311("spec") == ["description is 1,025 characters; the limit is 1,024"]


def test_f407_block_list_suggestion_quotes_an_entry_yaml_would_not_read_as_text(tmp_path: Path):
    skill(fm="allowed-tools: 'Read, Bash(echo: hi)'\n")(tmp_path)
    found = [d.message for d in lint_root(tmp_path, LintConfig()).diagnostics if d.code == "F407"]
    assert len(found) == 1 and "- Read, - 'Bash(echo: hi)'" in found[0], found


def test_f406_names_a_trailing_comma_too(tmp_path: Path):
    skill(fm="allowed-tools: Read, Write,\n")(tmp_path)
    found = [d.message for d in lint_root(tmp_path, LintConfig()).diagnostics if d.code == "F406"]
    assert found == ["'allowed-tools' has an empty entry (two commas in a row, or one at the start or end?)"]


def test_f414_the_same_nan_twice_is_not_another_value(tmp_path: Path):
    skill(fm="author: .nan\nmetadata:\n  author: .nan\n  category: x\ncategory: y\n")(tmp_path)
    found = [d.message for d in lint_root(tmp_path, LintConfig()).diagnostics if d.code == "F414"]
    assert len(found) == 1 and found[0].startswith("'category'"), found


def test_s307_shows_an_invisible_character_by_its_code_point(tmp_path: Path):
    """A zero-width joiner (or the combining dot `İ` lower-cases to) showed as nothing at all."""
    raw("istanbul/SKILL.md", "---\nname: stan\u200dbul\ndescription: A city. Use when asked.\n---\nBody.\n")(tmp_path)
    found = [d.message for d in lint_root(tmp_path, LintConfig()).diagnostics if d.code == "S307"]
    assert len(found) == 1 and "contains U+200D (zero width joiner);" in found[0], found


def test_f407_suggests_a_block_list_when_an_entry_holds_a_space(tmp_path: Path):
    """A flow list `[...]` is refused by skills-ref's strict YAML; a block list is read by all."""
    skill(fm="allowed-tools: Read, Bash(gh api:*)\n")(tmp_path)
    found = [d.message for d in lint_root(tmp_path, LintConfig()).diagnostics if d.code == "F407"]
    assert len(found) == 1 and "one `- entry` per line" in found[0] and "- Read, - Bash(gh api:*)" in found[0]
    assert "[" not in found[0].split("(", 1)[1].replace("Bash(gh api:*)", "")


@pytest.mark.parametrize("value", ["Bash(x)) Read(", "Read), Bash(x", ")Read("])
def test_f406_a_parenthesis_closed_before_it_opens_is_unbalanced(tmp_path: Path, value: str):
    """The count came back to zero, so `Bash(x)) Read(` was "balanced": `Bash(x))` passed as a tool
    name and only `Read(` was reported."""
    assert split_tools(value)[2] is False
    skill(fm=f"allowed-tools: {value}\n")(tmp_path)
    found = [d.message for d in lint_root(tmp_path, LintConfig()).diagnostics if d.code in ("F406", "F407")]
    assert found == ["'allowed-tools' has unbalanced parentheses"]


@settings(max_examples=400)
@given(st.text(alphabet="(),: \t\u3000aB*", max_size=40))
def test_allowed_tools_split_the_same_with_and_without_the_flat_parentheses_path(value: str):
    """F406/F407 read ``split_tools``: its fast path for paired, unnested parentheses splits every
    value exactly as the character loop does."""
    assert split_tools(value) == _split_tools_nested(value)


def test_type_names_in_messages_take_the_right_article(tmp_path: Path):
    skill(fm="model: 5\nversion: [1]\n")(tmp_path)
    messages = [d.message for d in lint_root(tmp_path, LintConfig()).diagnostics]
    assert any("found an integer" in m for m in messages), messages
    assert not any("found a integer" in m or "a text" in m for m in messages)


def test_each_plugin_of_a_marketplace_has_its_own_description_budget(tmp_path: Path):
    """A Claude Code plugin (`.claude-plugin/plugin.json`) is installed on its own: 2 plugins of
    40 skills x 300 characters are 12,000 each, not 24,000 together; one plugin over it is named."""
    desc = "x" * 290 + " Use when."
    for plugin, n in (("plugins/a", 40), ("plugins/b", 40), ("plugins/c", 60)):
        (tmp_path / plugin / ".claude-plugin").mkdir(parents=True)
        (tmp_path / plugin / ".claude-plugin/plugin.json").write_text('{"name": "p"}')
        for i in range(n):
            write_skill(tmp_path / plugin / "skills", f"s{i:02d}", description=desc)
    found = [d for d in lint_root(tmp_path, LintConfig(select=("C802",))).diagnostics]
    assert [(d.path.split("/skills/")[0], d.code) for d in found] == [("plugins/c", "C802")]
    assert "60 skills in the plugin plugins/c" in found[0].message
    (tmp_path / "plugins/c/.claude-plugin/plugin.json").unlink()  # (c's skills now count with the root's)
    (tmp_path / "plugins/a/.claude-plugin/plugin.json").unlink()
    found = [d for d in lint_root(tmp_path, LintConfig(select=("C802",))).diagnostics]
    assert len(found) == 1 and "over 100 skills, above" in found[0].message  # (a and c: the repository's own)


def test_b708_names_a_case_mismatch_and_b706_counts_named_files_as_direct(tmp_path: Path):
    skill(body="# T\n\nRead `references/security.md` and [a](references/a.md).\n\n"
               "## References\n\n- ./references/b.md -- the second part\n",
          files={"references/Security.md": "x\n", "references/a.md": "Also [b](b.md).\n",
                 "references/b.md": "# B\n"})(tmp_path)
    diags = lint_root(tmp_path, LintConfig(extend_select=("B708",))).diagnostics
    assert [(d.code, d.line, d.column) for d in diags if d.code in ("B706", "B708")] == [("B708", 7, 7)]
    assert "B708" not in [d.code for d in lint_root(tmp_path, LintConfig()).diagnostics]  # (opt-in)
    (b708,) = [d for d in diags if d.code == "B708"]
    assert "the file is references/Security.md" in b708.message


def test_b708_skips_stand_in_names(tmp_path: Path):
    skill(body="# T\n\nPut schemas in `references/filename.md` or `references/lesson_X.md`; "
               "read `references/gone.md`.\n")(tmp_path)
    found = [d.message for d in lint_root(tmp_path, LintConfig(select=("B708",))).diagnostics]
    assert found == ["SKILL.md names references/gone.md, which does not exist in the skill"]


@pytest.mark.parametrize("fm, code, key", [
    ("skill-memory:\n enabled: true\n", "M601", "enabled"),  # one space: the reader wants two or more
    ("skill-memory:\n  \"enabled\": true\n", "M601", "enabled"),  # a quoted key is no `\w+`
    ("skill-memory:\n  enabled:\n    true\n", "M601", "enabled"),  # the reader reads '' on the key's line
    ("skill-memory:\n  enabled: true\n# budget\n  max_tokens: 2000\n", "M602", "max_tokens"),  # column 0 ends it
    ("skill-memory:\n  enabled: true\n  dedup_threshold:\n    0.5\n", "M603", "dedup_threshold"),
])
def test_m60x_report_a_key_the_line_reader_does_not_see(tmp_path: Path, fm: str, code: str, key: str):
    """YAML reads these keys, seed 003's line parser (`^\\s{2,}(\\w+):\\s*(.*)$` until the first line
    at column 0) does not: memory stayed off, or a value was silently the default, with no finding."""
    skill(fm=fm)(tmp_path)
    found = [d.message for d in lint_root(tmp_path, LintConfig()).diagnostics if d.code == code]
    assert any(f"skill-memory.{key} " in m and "reader does not see" in m for m in found), found


@pytest.mark.parametrize("fm", [
    "skill-memory:   # per-skill memory\n  enabled: true  # on\n\n    # the recall budget\n  max_tokens: 2000\n",
    "skill-memory: {enabled: true, max_tokens: 2000}\n",  # the inline form (seed 003's own spelling)
])
def test_m60x_accept_every_layout_the_line_reader_reads(tmp_path: Path, fm: str):
    skill(fm=fm)(tmp_path)
    assert [d for d in lint_root(tmp_path, LintConfig()).diagnostics if d.code.startswith("M6")] == []


def test_m601_reports_a_header_the_line_reader_does_not_see(tmp_path: Path):
    skill(fm="\"skill-memory\":\n  enabled: true\n")(tmp_path)
    found = [d.message for d in lint_root(tmp_path, LintConfig()).diagnostics if d.code == "M601"]
    assert len(found) == 1 and "reader does not see" in found[0], found


def test_m602_reads_non_ascii_digits_as_javascripts_number_does(tmp_path: Path):
    """`Number('٢٠٠٠')` is NaN (JavaScript's numeric literals are ASCII), so the reader uses the default;
    Python's `\\d` and `float()` read Arabic-Indic digits as 2000."""
    skill(fm="skill-memory:\n  enabled: true\n  max_tokens: \"\u0662\u0660\u0660\u0660\"\n")(tmp_path)
    found = [d.message for d in lint_root(tmp_path, LintConfig()).diagnostics if d.code == "M602"]
    assert len(found) == 1 and "not a finite number to the reader" in found[0], found


def test_f405_names_a_null_in_yaml_terms(tmp_path: Path):
    """`user-invocable:` (null) was reported as "found None", Python's spelling."""
    skill(fm="user-invocable:\n")(tmp_path)
    found = [d.message for d in lint_root(tmp_path, LintConfig()).diagnostics if d.code == "F405"]
    assert found == ["'user-invocable' must be true or false, found nothing (null)"], found


def test_b707_reads_a_bold_markdown_label_as_a_key(tmp_path: Path):
    """`- **Client Secret**: `c77b…`` (openclaw's massiveadam/workspace/TOOLS.md:19-26, and
    edyyy62/adcp-advertising/SKILL.md:414 `**Auth Token**: …`) was missed: the `**` closing the
    bold label stood between the key and its colon.  Prose after a label is still no secret."""
    body = ("# T\n\n- **Client Secret**: `c77bfdbe1dd924fbe89fe3fbf606fa359fe17ea1`\n"
            "- **API Key**: Get it from the dashboard, then `export API_KEY=...`\n"
            "- __Auth Token__: `Xk93mPq2Lr81Zt0Qa7`\n")
    skill(body=body)(tmp_path)
    text = (tmp_path / "demo/SKILL.md").read_text("utf-8").split("\n")
    found = [(d.line, d.column) for d in lint_root(tmp_path, LintConfig(select=("B707",))).diagnostics]
    want = [(i + 1, line.index("`") + 1) for i, line in enumerate(text) if "Secret**" in line or "Token__" in line]
    assert len(want) == 2 and found == want, found


def test_b706_a_file_in_a_folder_skill_md_links_is_one_level_deep(tmp_path: Path):
    """SKILL.md linking `references/skeletons/` points the agent at every skeleton in it, so a
    reference linking `skeletons/a.md` adds no hop (threat-model-analyst in awesome-copilot: B706
    told the author to link from SKILL.md what it already linked).  A file outside it still counts."""
    skill(body="# T\n\nSee [formats](references/out.md) and [skeletons](./references/skeletons/).\n",
          files={"references/out.md": "Copy [a](./skeletons/a.md); see [b](b.md).\n",
                 "references/skeletons/a.md": "# A\n", "references/b.md": "# B\n"})(tmp_path)
    found = [d.message for d in lint_root(tmp_path, LintConfig(select=("B706",))).diagnostics]
    assert len(found) == 1 and found[0].startswith("references/out.md links on to references/b.md;"), found
