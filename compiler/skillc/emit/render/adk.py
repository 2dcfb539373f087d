"""adk-rust's skill blocks (``adk-skill`` injector and ``engineer_instruction``; research §2.5).

* ``prompt_block``: ``[skill:{name}]\\n{body}\\n[/skill]``, the body cut to its first ``max_chars``
  characters (Unicode scalar values) with no marker — what the injector prepends to a user message.
* ``inject``: the injected user text, ``{block}\\n\\n{original}``.
* ``instruction``: the ``ContextCoordinator`` system instruction, parts joined by a blank line, the
  body cut with ``\\n[... truncated]`` when longer than ``max_chars``.

adk-rust's parser trims the body (Rust ``str::trim``: Unicode White_Space), so ``adk_body`` does too.
"""

from __future__ import annotations

from collections.abc import Sequence

DEFAULT_MAX_CHARS = 2000
DEFAULT_MAX_INSTRUCTION_CHARS = 8000

# Unicode White_Space (Rust char::is_whitespace); Python's str.strip() also strips U+001C..U+001F.
WHITE_SPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
                "\u200a\u2028\u2029\u202f\u205f\u3000")


def adk_body(body: str) -> str:
    """The body as adk-rust stores it: CRLF normalised to LF, then trimmed."""
    return body.replace("\r\n", "\n").strip(WHITE_SPACE)


def prompt_block(name: str, body: str, max_chars: int = DEFAULT_MAX_CHARS) -> str:
    return f"[skill:{name}]\n{body[:max_chars]}\n[/skill]"


def inject(block: str, original_text: str) -> str:
    return f"{block}\n\n{original_text}"


def instruction(name: str, description: str, body: str, max_chars: int = DEFAULT_MAX_INSTRUCTION_CHARS,
                tools: Sequence[str] = ()) -> str:
    if len(body) > max_chars:
        body = body[:max_chars] + "\n[... truncated]"
    parts = [f"[skill:{name}]", f"# {name}\n{description}"]
    if tools:
        parts.append(f"You have access to the following tools: {', '.join(tools)}.")
    parts.append(f"## Instructions\n{body}")
    parts.append("[/skill]")
    return "\n\n".join(parts)
