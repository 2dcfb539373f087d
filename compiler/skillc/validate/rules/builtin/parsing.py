"""Rules emitted by the parse stage (codes P2xx)."""

from ....parse import rules as parse_rules
from ..registry import declare

declare(
    parse_rules.MISSING_FRONTMATTER, "missing-frontmatter", "The file has no YAML frontmatter opening on line 1.",
    rationale="""
        The specification requires YAML frontmatter at the start of SKILL.md: the client guide finds
        the opening `---` at the start of the file. A blank line, an HTML comment or plain YAML with
        no fences before it means no client reads the name or description. Convention files
        (CLAUDE.md, AGENTS.md…) need no frontmatter.
    """,
    bad="""
        name: pdf
        description: Extract text from PDFs.
    """,
    good="""
        ---
        name: pdf
        description: Extract text from PDFs.
        ---
    """,
    agnix=("AS-001",),
)
declare(
    parse_rules.UNCLOSED_FRONTMATTER, "unclosed-frontmatter", "The frontmatter opens with `---` but never closes.",
    rationale="""
        A lenient parser swallows the whole body into the last key (a real skill's 6,276-character
        body became its description). skillc stops and reports instead of guessing. The frontmatter
        closes at a line that is `---`, as the client guide reads it; skills-ref closes it at the
        first `---` anywhere, even inside a value (`description: Splits on --- markers` loses its
        end there, and the keys below it), so the two disagree on such files.
    """,
    bad="""
        ---
        name: pdf
        description: Extract text from PDFs.
        # PDF
    """,
    good="""
        ---
        name: pdf
        description: Extract text from PDFs.
        ---
        # PDF
    """,
    agnix=("AS-016", "AS-001"),
)
declare(
    parse_rules.BYTE_ORDER_MARK, "byte-order-mark", "The file starts with a UTF-8 byte-order mark.",
    rationale="""
        skills-ref and strict parsers compare the first bytes with `---`, so a BOM makes the
        frontmatter invisible to them. skillc reads through it and warns; `--fix` removes it.
    """,
    bad="\\ufeff---", good="---", fix="remove the byte-order mark",
)
declare(
    parse_rules.CRLF_LINE_ENDINGS, "crlf-line-endings", "The file uses CRLF (Windows) line endings.",
    rationale="""
        Most parsers cope, but some line-anchored ones (and byte-exact hashing across machines) do
        not; a repository with mixed endings churns in diffs. `--fix` converts to LF.
    """,
    bad="---\\r\\nname: pdf\\r\\n", good="---\\nname: pdf\\n",
    fix="convert line endings to LF",
)
declare(
    parse_rules.MERGE_CONFLICT_MARKER, "merge-conflict-marker", "The file contains git merge-conflict markers.",
    rationale="A committed conflict makes the frontmatter invalid YAML and the instructions contradictory.",
    bad="""
        <<<<<<< Updated upstream
        description: Daily notes.
        =======
        description: Obsidian daily notes.
        >>>>>>> Stashed changes
    """,
    good="description: Obsidian daily notes.",
    agnix=("AS-016",),
)
declare(
    parse_rules.FENCED_FRONTMATTER, "fenced-frontmatter", "The whole file is wrapped in a Markdown code fence.",
    rationale="Copy-pasted skills keep the ```markdown fence, so the frontmatter does not start on line 1.",
    bad="""
        ```markdown
        ---
        name: pdf
        ---
        ```
    """,
    good="""
        ---
        name: pdf
        ---
    """,
)
declare(
    parse_rules.TAB_INDENTATION, "tab-indentation", "The frontmatter is indented with tab characters.",
    rationale="YAML forbids tabs for indentation; parsers either fail or mis-nest the keys.",
    bad="metadata:\\n\\tauthor: me", good="metadata:\\n  author: me", agnix=("AS-016",),
)
declare(
    parse_rules.DUPLICATE_KEY, "duplicate-key", "A key appears twice in the same mapping.",
    rationale="""
        YAML says keys are unique; PyYAML silently keeps the last value and strictyaml refuses the
        file, so two clients read two different skills. skillc keeps the first and reports the rest.
    """,
    bad="""
        name: pdf
        name: pdf-tools
    """,
    good="name: pdf-tools",
)
declare(
    parse_rules.INVALID_YAML, "invalid-yaml", "The frontmatter is not valid YAML.",
    rationale="""
        Unparseable frontmatter means the skill is skipped by every client. The most common cause
        (58 of 72 failures in real repositories) is an unquoted `: ` inside a description; `--fix`
        quotes a single-line value when that is the problem. skillc reads YAML 1.1 as PyYAML does;
        skills-ref reads strictyaml, a subset, so the two differ both ways: skills-ref refuses flow
        collections (`[a, b]`, `{a: b}`), anchors, tags (`!!str`) and a tab inside a plain value,
        which parse here (the S3 rules then check the values), while NEL, U+2028 and U+2029 end a
        line for YAML 1.1 (a plain value continued at the start of a line is then an error here) and
        are text to skills-ref.
    """,
    bad="description: Use when: the user asks for PDFs",
    good="description: 'Use when: the user asks for PDFs'",
    fix="quote a single-line scalar that broke YAML", agnix=("AS-016",),
)
declare(
    parse_rules.FRONTMATTER_NOT_MAPPING, "frontmatter-not-mapping", "The frontmatter is a list or a scalar, not a mapping.",
    rationale="""
        Every client reads frontmatter as keys and values; anything else has no name or description.
        Empty frontmatter (nothing, or only comments, between the fences) is a mapping with no keys
        here: S301 and S309 name what is missing, where skills-ref says it is not a mapping.
    """,
    bad="""
        ---
        - pdf
        ---
    """,
    good="""
        ---
        name: pdf
        description: Extract text from PDFs.
        ---
    """,
    agnix=("AS-016",),
)
declare(
    parse_rules.NOT_UTF8_TEXT, "not-utf8-text", "The file is binary or not valid UTF-8.",
    rationale="Clients read SKILL.md as UTF-8 (skills-ref crashes on anything else).",
    bad="a UTF-16 or Latin-1 SKILL.md", good="the same text saved as UTF-8",
)
declare(
    parse_rules.FILE_TOO_LARGE, "file-too-large", "The file is too large to be a skill (over 8 MiB).",
    rationale="""
        The largest real SKILL.md is 294 KB; a multi-megabyte file is a mistake or an attack, and
        would be loaded whole into an agent's context. It is reported, not parsed.
    """,
    bad="a 50 MB SKILL.md", good="a SKILL.md under 500 lines with references/ for the rest",
)
declare(
    parse_rules.YAML_LIMITS, "yaml-limits", "The frontmatter exceeds skillc's safety limits (size, nesting, alias expansion).",
    rationale="""
        YAML aliases can expand exponentially ("billion laughs") and deep nesting exhausts a parser's
        stack. skillc bounds frontmatter to 256 KiB, 64 levels and 10,000 nodes after alias expansion.
    """,
    bad="""
        a: &a [x, x, x, x, x, x, x, x, x]
        b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
        c: [*b, *b, *b, *b, *b, *b, *b, *b, *b]   # and so on
    """,
    good="tags: [pdf, documents]",
)
declare(
    parse_rules.CONTROL_CHARACTER, "control-character", "The frontmatter contains a control character YAML does not accept.",
    rationale="""
        C1 control characters usually mean mojibake (UTF-8 decoded as Latin-1 and re-encoded);
        YAML rejects them and skills-ref crashes on them.
    """,
    bad="description: formula:\\u00e2\\u0080\\u00af", good="description: formula: \\u202f",
    agnix=("AS-016",),
)
