"""The diagnostics the discovery stage raises (codes D1xx): each one's code and default severity.

Discovery sits below validate, so it cannot import the registry; the registry's declaration of
each rule (``validate/rules/builtin/discovery.py``: name, rationale, examples) takes these objects,
so a code and its severity are written here and nowhere else.
"""

from __future__ import annotations

from ..model import RuleRef, Severity

SKILL_FILE_NAME_CASE = RuleRef("D101", Severity.WARNING)
DANGLING_SYMLINK = RuleRef("D102", Severity.ERROR)
SYMLINK_LOOP = RuleRef("D103", Severity.ERROR)
SYMLINK_ESCAPES_REPOSITORY = RuleRef("D104", Severity.ERROR)
UNREADABLE_PATH = RuleRef("D105", Severity.ERROR)
SYMLINK_ALIAS = RuleRef("D106", Severity.INFO)
