"""``skillc render BUNDLE``: a bundle's skills in a framework's exact prompt format."""

from __future__ import annotations

import json

import click

from ..errors import SkillcError
from ..index import reads_bundle
from ..validate.report import echo_block

FORMATS = ("meerkat", "skills-ref", "adk", "adk-instruction", "plan-cascade", "openai", "anthropic", "mcp")
TOOL_FORMATS = ("openai", "anthropic", "mcp")  # --tools
_VALUED = ("--format", "--max-chars")  # the options that take a value


class _OrderedIds(click.Command):
    """Keeps the command line, so IDs given as `--inject a b --inject c` are rendered in that order
    (click hands the option's values and the extra arguments over separately)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["render.args"] = list(args)
        return super().parse_args(ctx, args)


def _given_order(args: list[str], ids: list[str]) -> list[str]:
    """``ids`` in the order the command line gives them (``ids`` itself if that cannot be told)."""
    out: list[str] = []
    positional, it = 0, iter(args)
    for tok in it:
        if tok == "--inject":
            out.append(next(it, ""))
        elif tok.startswith("--inject="):
            out.append(tok.split("=", 1)[1])
        elif tok in _VALUED:
            next(it, None)
        elif tok == "--":
            rest = list(it)
            out.extend(rest[1:] if positional == 0 else rest)
            break
        elif not tok.startswith("-") or tok == "-":
            positional += 1
            if positional > 1:  # (the first is BUNDLE)
                out.append(tok)
    return out if sorted(out) == sorted(ids) else ids


@click.command("render", cls=_OrderedIds)
@click.argument("bundle")
@click.option("--inventory", is_flag=True, help="The catalogue of every skill (meerkat, skills-ref).")
@click.option("--inject", "inject", multiple=True, metavar="ID",
              help="Render these skills' bodies for injection (repeatable; or several IDs after one --inject).")
@click.option("--to-prompt", "to_prompt", is_flag=True, help="skills-ref to-prompt XML of every skill.")
@click.option("--tools", "tools", is_flag=True,
              help="One tool definition per skill (skill_<name>), JSON, with --format openai, anthropic or mcp.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="meerkat", show_default=True,
              help="meerkat: <available_skills> / <skill id> blocks; skills-ref: to-prompt XML; adk: "
                   "[skill:name] blocks; adk-instruction: adk-rust's system instruction; plan-cascade: "
                   "the Framework-Specific Best Practices block; openai, anthropic, mcp: tool definitions (--tools).")
@click.option("--max-chars", type=click.IntRange(min=0), default=None,
              help="adk: characters of body kept (default 2000; 8000 for adk-instruction).")
@click.option("--json", "as_json", is_flag=True, help="Print {format, kind, ids, text}.")
@click.argument("more_ids", nargs=-1, metavar="[ID]...")
@reads_bundle
def render(bundle: str, inventory: bool, inject: tuple[str, ...], to_prompt: bool, tools: bool, fmt: str,
           max_chars: int | None, as_json: bool, more_ids: tuple[str, ...]) -> None:
    """Render BUNDLE's skills byte-exactly as a framework expects them.

    \b
      skillc render dist --inventory                       Meerkat inventory (flat / collections)
      skillc render dist --inject extraction/email         Meerkat <skill id> block (32 KiB cap)
      skillc render dist --inject a b --format adk         adk-rust [skill:name] blocks
      skillc render dist --inject a --format plan-cascade  Plan Cascade best-practices Markdown
      skillc render dist --to-prompt                       skills-ref to-prompt XML
      skillc render dist --tools --format openai           tool definitions (also anthropic, mcp)
    """
    from ..bundle.reader import Bundle

    ids = _given_order(click.get_current_context().meta.get("render.args", []), list(inject) + list(more_ids))
    modes = [m for m, on in (("inventory", inventory), ("inject", bool(inject)), ("to-prompt", to_prompt),
                              ("tools", tools)) if on]
    if more_ids and not inject:
        raise click.UsageError("skill IDs are given with --inject")
    if len(modes) != 1:
        raise click.UsageError("choose exactly one of --inventory, --inject ID…, --to-prompt, --tools")
    mode = modes[0]
    if (mode == "tools") != (fmt in TOOL_FORMATS):
        raise click.UsageError("--tools takes --format openai, anthropic or mcp (and those formats need --tools)")
    # Options that cannot apply are refused, not ignored: `--to-prompt --format adk` printed skills-ref
    # XML (and --json called it skills-ref), and a catalogue has no body for `--max-chars` to cut.
    if mode == "to-prompt" and fmt not in ("meerkat", "skills-ref"):  # (meerkat: the default, not chosen)
        raise click.UsageError(f"--to-prompt has no {fmt} form (it is skills-ref XML); use --inject ID… --format {fmt}")
    if max_chars is not None and mode != "inject":
        raise click.UsageError("--max-chars applies to --format adk and adk-instruction with --inject ID…")
    b = Bundle.open(bundle)
    if mode == "tools":
        click.echo(json.dumps(_tool_definitions(b, fmt), ensure_ascii=False, indent=2))
        return
    if mode == "to-prompt" or (mode == "inventory" and fmt == "skills-ref"):
        text = b.to_prompt()
    elif mode == "inventory":
        if fmt != "meerkat":
            raise SkillcError(f"--inventory has no {fmt} form", hint="use --format meerkat or skills-ref")
        text = b.render_inventory()
    elif fmt == "meerkat":
        text = b.render_injection(ids)
    elif fmt == "skills-ref":
        text = b.to_prompt(ids)
    elif fmt == "adk":
        text = b.render_adk(ids, 2000 if max_chars is None else max_chars)
    elif fmt == "adk-instruction":
        text = b.render_adk(ids, 8000 if max_chars is None else max_chars, instruction=True)
    else:
        text = b.render_plan_cascade(ids)
    if as_json:
        click.echo(json.dumps({"format": "skills-ref" if mode == "to-prompt" else fmt, "kind": mode, "ids": ids,
                               "text": text}, ensure_ascii=False))
    else:
        echo_block(text)


def _tool_definitions(b, provider: str) -> list[dict]:
    """Every skill of the bundle as a ``provider`` tool definition, named by its flat name."""
    from ..emit.render.tools import ToolSkill, tool_definitions
    from ..flatnames import assign_flat_names
    from ..parse.document import parse_document

    skills = b.skills()
    names = assign_flat_names(s.id for s in skills).names
    out = []
    for s in skills:
        meta: dict = {}
        published = [f for f in b.files(s.id) if f.path in ("SKILL.md", "skill.md")]
        if published:  # (a step skill's inputs are in its frontmatter; the wire descriptor lacks them)
            doc = parse_document(b.read_file(s.id, published[0].path), published[0].path)
            meta = dict(doc.meta) if isinstance(doc.meta, dict) else {}
        out.append(ToolSkill(names[s.id], s.description, meta))
    return tool_definitions(provider, out)
