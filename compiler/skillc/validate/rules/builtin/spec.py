"""The Agent Skills specification's rules (codes S3xx).

Where the specification and its reference validator (skills-ref 0.1.1) disagree, each rule's
rationale says which one skillc follows (research/spec.md §2.7).
"""

from __future__ import annotations

import re
import unicodedata

from .... import secrets
from ....model import NAME_RE, Severity
from ....parse.document import a_type_name
from ..registry import ALL, Finding, RuleContext, rule

SPEC_KEYS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
RECOMMENDED_WARNS = {"recommended": Severity.WARNING}
# The `claude` profile checks the name with K005 (quick_validate's exact check) instead of S303-S307,
# and does not enforce what quick_validate does not (name = directory, metadata values, license type).
NOT_CLAUDE = frozenset({"recommended", "spec"})


_last_name: list = [None, None]  # (document, name): six rules ask for the same document's name


def skill_name(ctx: RuleContext) -> str | None:
    """The frontmatter name as the spec checks it (stripped and NFKC-normalised), or None."""
    if _last_name[0] is ctx.document:
        return _last_name[1]
    name = ctx.meta.get("name")
    if not isinstance(name, str) or not name.strip():
        name = None
    else:
        name = unicodedata.normalize("NFKC", name.strip())
    _last_name[0], _last_name[1] = ctx.document, name
    return name


@rule(
    "S301", "name-missing", "The frontmatter has no `name`.",
    rationale="`name` is required by the specification; clients identify and invoke skills by it.",
    bad="""
        ---
        description: Extract text from PDFs.
        ---
    """,
    good="""
        ---
        name: pdf
        description: Extract text from PDFs.
        ---
    """,
    agnix=("AS-002",),
)
def name_missing(ctx: RuleContext):
    if ctx.document.frontmatter is not None and "name" not in ctx.meta:
        yield Finding("missing required field 'name'", ctx.key())


@rule(
    "S302", "name-not-string", "`name` is empty or not a string.",
    rationale="""
        The specification requires 1-64 characters of text; YAML can silently make `name: 2024` a
        number. skills-ref reads every value as text (strictyaml), so it accepts `name: 2024` in a
        folder `2024`, or `name: yes`; skillc reads the value as YAML 1.1 clients do (a number, a
        boolean, a date, `null`) and reports it: quote it.
    """,
    bad="name: 2024", good="name: report-2024", keys=("name",),
)
def name_not_string(ctx: RuleContext):
    name = ctx.meta.get("name", "")
    if "name" in ctx.meta and (not isinstance(name, str) or not name.strip()):
        what = "empty" if isinstance(name, str) or name is None else f"{a_type_name(name)}"
        yield Finding(f"'name' must be a non-empty string, found {what}", ctx.value("name"))


@rule(
    "S303", "name-too-long", "`name` is longer than 64 characters.",
    rationale="""
        The specification says 1-64 characters. Like skills-ref, skillc counts code points after
        stripping and NFKC normalisation (so `ﬁ` counts as two).
    """,
    bad="name: " + "a" * 65, good="name: pdf-processing",
    profiles=NOT_CLAUDE, keys=("name",),
)
def name_too_long(ctx: RuleContext):
    name = skill_name(ctx)
    if name is not None and len(name) > 64:
        yield Finding(f"skill name is {len(name)} characters; the limit is 64", ctx.value("name"))


@rule(
    "S304", "name-not-lowercase", "`name` contains upper-case letters.",
    rationale="The specification allows lowercase letters, digits and hyphens only (402 real skills use Title Case).",
    bad="name: PDF-Processing", good="name: pdf-processing",
    profiles=NOT_CLAUDE, keys=("name",),
    agnix=("AS-004",),
)
def name_not_lowercase(ctx: RuleContext):
    name = skill_name(ctx)
    if name is not None and name != name.lower():
        yield Finding(f"skill name {name!r} must be lowercase{_try(name)}", ctx.value("name"))


@rule(
    "S305", "name-hyphen-edge", "`name` starts or ends with a hyphen.",
    rationale="The specification: \"Must not start or end with a hyphen\".",
    bad="name: -pdf", good="name: pdf",
    profiles=NOT_CLAUDE, keys=("name",),
    agnix=("AS-005",),
)
def name_hyphen_edge(ctx: RuleContext):
    name = skill_name(ctx)
    if name is not None and (name.startswith("-") or name.endswith("-")):
        yield Finding(f"skill name {name!r} must not start or end with a hyphen", ctx.value("name"))


@rule(
    "S306", "name-consecutive-hyphens", "`name` contains `--`.",
    rationale="The specification: \"Must not contain consecutive hyphens\".",
    bad="name: pdf--processing", good="name: pdf-processing",
    profiles=NOT_CLAUDE, keys=("name",),
    agnix=("AS-006",),
)
def name_consecutive_hyphens(ctx: RuleContext):
    name = skill_name(ctx)
    if name is not None and "--" in name:
        yield Finding(f"skill name {name!r} must not contain consecutive hyphens", ctx.value("name"))


def _shown_char(c: str) -> str:
    """A character as a message can show it: a combining mark, a format or space character
    (`\u0307`, a zero-width joiner, a no-break space) by its code point, which a terminal shows."""
    if c != " " and (unicodedata.combining(c) or unicodedata.category(c) in ("Cf", "Zs", "Zl", "Zp", "Mn", "Me", "Mc")):
        return f"U+{ord(c):04X} ({unicodedata.name(c, 'unnamed').lower()})"
    return repr(c)


@rule(
    "S307", "name-invalid-characters", "`name` contains characters other than `a-z`, `0-9` and `-`.",
    rationale="""
        The specification lists `a-z`, `0-9` and hyphens. skills-ref also accepts any Unicode letter
        or digit (`str.isalnum()`); skillc follows the specification's explicit ranges, because a name
        is also a directory, a URL segment and the `/skill-ref` pattern `[a-z0-9-]+`, where non-ASCII
        names cannot be invoked. Upper case is reported by S304 instead.
    """,
    bad="name: pdf_processing", good="name: pdf-processing",
    profiles=NOT_CLAUDE, keys=("name",),
    agnix=("AS-004",),
)
def name_invalid_characters(ctx: RuleContext):
    name = skill_name(ctx)
    if name is None or NAME_RE.match(name):  # (a valid name has no bad character)
        return
    bad = sorted({c for c in name.lower() if not (c.isascii() and (c.isalnum() or c == "-"))})
    if bad:
        shown = ", ".join(_shown_char(c) for c in bad[:5])
        yield Finding(
            f"skill name {name!r} contains {shown}; only a-z, 0-9 and '-' are allowed{_try(name)}",
            ctx.value("name"),
        )


@rule(
    "S308", "name-directory-mismatch", "`name` differs from the skill's directory name.",
    rationale="""
        The specification says the name must match the parent directory. The client guide says
        loaders should warn and load anyway, and some official repositories prefix names on
        purpose (`vercel-react-best-practices` in `react-best-practices/`), so this is an error in
        the `spec` profile and a warning in `recommended`. Like skills-ref, both sides are
        NFKC-normalised and compared exactly. A skill at the repository root is compared with the
        root folder's own name (in a build, with the name it is published under: a git or zip
        repository that is one skill is named after its URL or archive, not its cache folder).
    """,
    bad="pdf-tools/SKILL.md with name: pdf", good="pdf/SKILL.md with name: pdf",
    severity_by_profile=RECOMMENDED_WARNS,
    profiles=NOT_CLAUDE, keys=("name",),
    agnix=("AS-017",),
)
def name_directory_mismatch(ctx: RuleContext):
    name = skill_name(ctx)
    dir_name = ctx.item.skill_dir.rsplit("/", 1)[-1] if ctx.item.skill_dir else ctx.published_name or ctx.root.name
    if name is not None and dir_name and unicodedata.normalize("NFKC", dir_name) != name:
        yield Finding(f"skill name {name!r} does not match its directory {dir_name!r}", ctx.value("name"))


@rule(
    "S309", "description-missing", "The frontmatter has no `description`.",
    rationale="""
        `description` is required: it is the only thing an agent sees before deciding to load the
        skill. The client guide tells loaders to skip a skill without one.
    """,
    bad="""
        ---
        name: pdf
        ---
    """,
    good="""
        ---
        name: pdf
        description: Extract text and tables from PDF files. Use when the user mentions PDFs.
        ---
    """,
    agnix=("AS-003", "CC-SK-024"),
)
def description_missing(ctx: RuleContext):
    if ctx.document.frontmatter is not None and "description" not in ctx.meta:
        yield Finding("missing required field 'description'", ctx.key())


@rule(
    "S310", "description-not-string", "`description` is empty or not a string.",
    rationale="""
        The specification requires 1-1024 characters of text. skills-ref reads every value as text
        (strictyaml) and accepts `description: yes` or `description: 2024-01-01`; skillc reads them
        as YAML 1.1 clients do (a boolean, a date) and reports them: quote the value.
    """,
    bad="description:", good="description: Extract text and tables from PDF files.", keys=("description",),
    agnix=("AS-008",),
)
def description_not_string(ctx: RuleContext):
    if "description" not in ctx.meta:
        return
    value = ctx.meta["description"]
    if not isinstance(value, str) or not value.strip():
        what = "empty" if isinstance(value, str) or value is None else f"{a_type_name(value)}"
        yield Finding(f"'description' must be a non-empty string, found {what}", ctx.value("description"))


@rule(
    "S311", "description-too-long", "`description` is longer than 1,024 characters.",
    rationale="""
        The specification's hard limit. skills-ref measures the raw parsed string, including the
        trailing newline a block scalar adds; skillc follows skills-ref (so both agree on the
        boundary) and counts code points. The `claude` profile measures it as Anthropic's
        quick_validate does, without its leading and trailing blanks.
    """,
    bad="description: (1,500 characters of prose)", good="description: (a few sentences, under 1,024 characters)", keys=("description",),
    agnix=("AS-008",),
)
def description_too_long(ctx: RuleContext):
    value = ctx.meta.get("description")
    if isinstance(value, str) and len(value) > 1024:
        n = len(value.strip()) if ctx.profile == "claude" else len(value)
        if n > 1024:
            yield Finding(f"description is {n:,} characters; the limit is 1,024", ctx.value("description"))


@rule(
    "S312", "compatibility-invalid", "`compatibility` is not a string of 1-500 characters.",
    rationale="""
        The specification: "Must be 1-500 characters if provided". skills-ref accepts an empty
        string (`compatibility:` with no value too, which it reads as one); skillc follows the
        specification and reports it. skills-ref reads every value as text, so `compatibility: 3.11`
        passes there; here it is a number, reported: quote it.
    """,
    bad="compatibility: [{platform: linux}]", good="compatibility: Requires git and jq", keys=("compatibility",),
    agnix=("AS-011", "AS-016"),
)
def compatibility_invalid(ctx: RuleContext):
    if "compatibility" not in ctx.meta:
        return
    value = ctx.meta["compatibility"]
    if not isinstance(value, str):
        yield Finding(f"'compatibility' must be a string, found {a_type_name(value)}", ctx.value("compatibility"))
    elif not value:
        yield Finding("'compatibility' is empty; remove it or say what the skill needs", ctx.value("compatibility"))
    elif len(value) > 500:
        yield Finding(f"compatibility is {len(value):,} characters; the limit is 500", ctx.value("compatibility"))


@rule(
    "S313", "metadata-not-string-map", "`metadata` is not a mapping of string keys to string values.",
    rationale="""
        The specification defines `metadata` as string→string, and the Meerkat wire format rejects a
        whole skill list when one value is not a string. skills-ref coerces values with `str()` and
        does not check a `metadata` that is not a mapping (a list, text, nothing); skillc reports
        them (an error in `spec`, a warning in `recommended`, where the bundle stores the value as
        text) and `--fix` quotes scalar values.
    """,
    bad="""
        metadata:
          version: 1.0
          tags: [a, b]
    """,
    good="""
        metadata:
          version: "1.0"
          tags: "a b"
    """,
    severity_by_profile=RECOMMENDED_WARNS,
    fix="quote numbers, booleans and dates written as plain scalars",
    profiles=NOT_CLAUDE, keys=("metadata",),
    agnix=("AS-016",),
)
def metadata_not_string_map(ctx: RuleContext):
    if "metadata" not in ctx.meta:
        return
    value = ctx.meta["metadata"]
    if not isinstance(value, dict):
        yield Finding(f"'metadata' must be a mapping, found {a_type_name(value)}", ctx.value("metadata"))
        return
    fm = ctx.document.frontmatter
    for key, item in value.items():
        if isinstance(item, str):
            continue
        scalar = fm.scalars.get(("metadata", key)) if fm else None
        fix = None
        # (numbers, booleans and dates only: quoting `~` or `null` would turn "no value" into text)
        if scalar is not None and scalar.style is None and item is not None and not isinstance(item, (list, dict)):
            from .fixes import quote_scalar_fix

            fix = quote_scalar_fix(ctx, scalar)
        yield Finding(
            f"metadata value {key!r} must be a string, found {a_type_name(item)}", ctx.key("metadata", key), fix
        )


@rule(
    "S314", "allowed-tools-not-string", "`allowed-tools` is not a space-separated string.",
    rationale="""
        The specification defines a space-separated string (experimental). Many real skills use a
        YAML list (which adk-rust requires) or commas; skillc accepts both in `recommended` and
        reports them in `spec`, where a list, a number or no value is an error although skills-ref
        does not check the field. F406 checks the entries themselves.
    """,
    bad="""
        allowed-tools:
          - Read
          - Bash(git:*)
    """,
    good="allowed-tools: Read Bash(git:*)",
    profiles=frozenset({"spec"}), keys=("allowed-tools",),
)
def allowed_tools_not_string(ctx: RuleContext):
    if "allowed-tools" in ctx.meta and not isinstance(ctx.meta["allowed-tools"], str):
        value = ctx.meta["allowed-tools"]
        yield Finding(f"'allowed-tools' must be a space-separated string, found {a_type_name(value)}",
                      ctx.value("allowed-tools"))


@rule(
    "S315", "license-not-string", "`license` is not a string.",
    rationale="The specification describes a license name or a bundled file name; skills-ref does not check it.",
    bad="license: {name: MIT}", good="license: MIT",
    profiles=NOT_CLAUDE, keys=("license",),
)
def license_not_string(ctx: RuleContext):
    if "license" in ctx.meta and not isinstance(ctx.meta["license"], str):
        yield Finding(f"'license' must be a string, found {a_type_name(ctx.meta['license'])}", ctx.value("license"))


@rule(
    "S316", "unknown-top-level-key", "The frontmatter has keys the specification does not define.",
    rationale="""
        The specification defines six keys and puts extensions under `metadata`; skills-ref and
        Claude's uploader reject any other top-level key. This rule is in the `spec` and `claude`
        profiles. In `recommended`, F401 reports only keys that no known format defines.
    """,
    bad="""
        name: pdf
        version: 1.0.0
    """,
    good="""
        name: pdf
        metadata:
          version: "1.0.0"
    """,
    profiles=frozenset({"spec", "claude"}),
    agnix=("CC-SK-017",),
)
def unknown_top_level_key(ctx: RuleContext):
    for key in ctx.meta:
        if key not in SPEC_KEYS:
            yield Finding(
                f"unexpected key {key!r}; the specification allows only {', '.join(SPEC_KEYS)} "
                "(move extensions under 'metadata')",
                ctx.key(key),
            )


def _try(name: str) -> str:
    """The suggested name, unless the name holds a likely secret: the slug is the secret lower-cased,
    which no redaction of the message recognises (B707 reports the secret itself)."""
    return "" if secrets.scan(name) else f" (try {_slug(name)!r})"


def _slug(name: str) -> str:
    # Letters keep their base letter (`Café` → `cafe`, `İstanbul` → `istanbul`, `ß` → `ss`): each
    # accented letter was a hyphen, or nothing (`caf`), a name the author would not have chosen.
    folded = "".join(c for c in unicodedata.normalize("NFKD", name.casefold()) if not unicodedata.combining(c))
    slug = re.sub(r"[^a-z0-9]+", "-", folded).strip("-")
    return re.sub(r"-{2,}", "-", slug) or "skill"


__all__ = ["ALL", "SPEC_KEYS", "NAME_RE", "skill_name"]
