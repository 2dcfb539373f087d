"""Byte-exact prompt renderers for the frameworks skillc bundles serve.

``meerkat`` (inventory, injection, tool results, ``/skill-ref``), ``skills_ref`` (``to-prompt``),
``adk`` (``[skill:name]`` blocks) and ``plan_cascade`` (the best-practices Markdown block).
"""

from .meerkat import render_injection, render_inventory, xml_escape

__all__ = ["render_injection", "render_inventory", "xml_escape"]
