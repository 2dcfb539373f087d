"""``skillc select BUNDLE MESSAGE``: Plan Cascade detection + adk-rust's lexical scorer."""

from __future__ import annotations

import json

import click

from ..index import reads_bundle
from ..index.select import DETECT_MODES, PHASES
from ..validate.report import echo_block


@click.command("select")
@click.argument("bundle")
@click.argument("message")
@click.option("--project", type=click.Path(file_okay=False, exists=True), default=".", show_default=True,
              help="Project root whose files the detection rules look at.")
@click.option("--phase", type=click.Choice(PHASES), help="Keep only detected skills injected into this phase.")
@click.option("--detect-mode", type=click.Choice(DETECT_MODES), default="cli", show_default=True,
              help="cli: a pattern must appear in a detect file (Plan Cascade's Python CLI); "
                   "desktop: an existing file is enough when a rule has no patterns, and a rule "
                   "injected `always` (or into no phase) suits every --phase.")
@click.option("--top-k", type=click.IntRange(min=0), default=3, show_default=True,
              help="At most this many lexical matches (adk-rust's CLI default).")
@click.option("--min-score", type=float, default=1.0, show_default=True,
              help="Lexical matches need at least this score (inclusive, f32).")
@click.option("--render", "render_fmt", type=click.Choice(["plan-cascade", "meerkat", "adk"]),
              help="Print the selected skills rendered in this format instead of the list.")
@click.option("--json", "as_json", is_flag=True, help="Print {message, selected:[{id,name,reason,score,…}]}.")
@reads_bundle
def select(bundle: str, message: str, project: str, phase: str | None, detect_mode: str, top_k: int,
           min_score: float, render_fmt: str | None, as_json: bool) -> None:
    """Select the skills for MESSAGE from BUNDLE.

    Detected skills first: Plan Cascade rules (external-skills.json `detect.files` + `patterns`,
    plain case-sensitive substrings) checked against --project, sorted by priority, deduplicated,
    cut to max_skills_per_story (3), then filtered by --phase.  Lexical matches fill the remaining
    slots: adk-rust's scorer (name 4.0, description 2.5, tags 2.0, body 1.0 per query token, over
    the square root of the unique body tokens), priority breaking ties.
    """
    from ..bundle.reader import Bundle

    b = Bundle.open(bundle)
    chosen = b.select(message, project=project, phase=phase, mode=detect_mode, top_k=top_k, min_score=min_score)
    if render_fmt == "plan-cascade":
        text = b.render_plan_cascade(chosen)
    elif render_fmt == "meerkat":
        text = b.render_injection([c.id for c in chosen]) if chosen else ""
    elif render_fmt == "adk":
        text = b.render_adk([c.id for c in chosen]) if chosen else ""
    else:
        text = None
    if as_json:
        out = {"message": message, "phase": phase, "selected": [c.to_json() for c in chosen]}
        if text is not None:
            out["rendered"] = text
        click.echo(json.dumps(out, ensure_ascii=False))
        return
    if text is not None:
        echo_block(text)
        return
    if not chosen:
        click.echo("no skill selected", err=True)
    from ..validate.report import (
        one_line,  # (IDs and repository names are the bundle's data: never terminal controls)
    )

    for c in chosen:
        parts = [c.reason] + ([f"score {c.score:.6g}"] if c.score is not None else [])
        click.echo(one_line(f"{c.id}  ({', '.join(parts)}, priority {c.priority}, {c.source})"))
