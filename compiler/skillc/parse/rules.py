"""The diagnostics the parse stage raises (codes P2xx): each one's code and default severity.

Parse sits below validate, so it cannot import the registry; the registry's declaration of each
rule (``validate/rules/builtin/parsing.py``: name, rationale, examples) takes these objects, so a
code and its severity are written here and nowhere else.
"""

from __future__ import annotations

from ..model import RuleRef, Severity

MISSING_FRONTMATTER = RuleRef("P201", Severity.ERROR)
UNCLOSED_FRONTMATTER = RuleRef("P202", Severity.ERROR)
BYTE_ORDER_MARK = RuleRef("P203", Severity.WARNING)
CRLF_LINE_ENDINGS = RuleRef("P204", Severity.WARNING)
MERGE_CONFLICT_MARKER = RuleRef("P205", Severity.ERROR)
FENCED_FRONTMATTER = RuleRef("P206", Severity.ERROR)
TAB_INDENTATION = RuleRef("P207", Severity.ERROR)
DUPLICATE_KEY = RuleRef("P208", Severity.ERROR)
INVALID_YAML = RuleRef("P209", Severity.ERROR)
FRONTMATTER_NOT_MAPPING = RuleRef("P210", Severity.ERROR)
NOT_UTF8_TEXT = RuleRef("P211", Severity.ERROR)
FILE_TOO_LARGE = RuleRef("P212", Severity.ERROR)
YAML_LIMITS = RuleRef("P213", Severity.ERROR)
CONTROL_CHARACTER = RuleRef("P214", Severity.ERROR)
