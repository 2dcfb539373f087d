"""The codes and default severities of the R1xx diagnostics (resolving repositories into one namespace)."""

from __future__ import annotations

from .model import RuleRef, Severity

# Each one's code and default severity.  The resolve stage raises most of them, sources (a stale or
# empty repository, a missing remote file) and emit (a bundle path collision, a site page not
# rendered) the others; the registry's declaration of each (``validate/rules/builtin/resolution.py``:
# name, rationale, examples) takes these objects.  They live below validate because validate's
# declarations read them and resolve, sources and emit raise them (a code and its severity are
# written once), and apart from ``resolve_types`` (which re-exports them) because lint imports them
# without its dataclasses, ~10 ms of every lint's start-up.
SKILL_SHADOWED = RuleRef("R101", Severity.INFO)
DUPLICATE_SKILL_NAME = RuleRef("R102", Severity.WARNING)
ID_CASE_COLLISION = RuleRef("R103", Severity.ERROR)
UNSAFE_SKILL_ID = RuleRef("R104", Severity.ERROR)
STALE_SOURCE = RuleRef("R105", Severity.WARNING)
REMOTE_SKILL_MISSING = RuleRef("R106", Severity.WARNING)
EMPTY_REPOSITORY = RuleRef("R107", Severity.WARNING)
REMOTE_FILE_UNVERIFIED = RuleRef("R108", Severity.WARNING)
ID_NOT_INVOCABLE = RuleRef("R109", Severity.WARNING)
BUNDLE_PATH_COLLISION = RuleRef("R110", Severity.ERROR)
SUBMODULE_NOT_FETCHED = RuleRef("R111", Severity.WARNING)
FLAT_NAME_COLLISION = RuleRef("R112", Severity.WARNING)
SITE_PAGE_NOT_RENDERED = RuleRef("R130", Severity.WARNING)
UNPUBLISHABLE_FILE_NAME = RuleRef("R131", Severity.ERROR)
