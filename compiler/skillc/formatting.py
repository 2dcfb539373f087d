"""How skillc shows quantities to people (the docs site, its plain page): one spelling everywhere."""

from __future__ import annotations


def human_size(n: int) -> str:
    """``n`` bytes as the site shows them: ``512 bytes``, ``1.5 KiB``, ``3.2 MiB`` (MiB at most)."""
    for unit in ("bytes", "KiB", "MiB"):
        if n < 1024 or unit == "MiB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


__all__ = ["human_size"]
