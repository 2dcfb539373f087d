"""A built bundle as its readers see it: the ``Bundle`` reader (``reader.py``, local folder or
HTTP) and the static server (``serve.py``). ``skillc.bundle.Bundle`` and
``skillc.bundle.BundleError`` are public names (docs/reference/python-api.md)."""
from .reader import Bundle, BundleError, SkillDoc, SkillInfo, UnknownSkill

__all__ = ["Bundle", "BundleError", "SkillDoc", "SkillInfo", "UnknownSkill"]
