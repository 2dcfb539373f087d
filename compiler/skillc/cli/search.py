"""``skillc search BUNDLE QUERY``: BM25 search over a bundle's precomputed index."""

from __future__ import annotations

import json

import click

from ..index import reads_bundle


@click.command("search")
@click.argument("bundle")
@click.argument("query")
@click.option("--top-k", "-k", type=click.IntRange(min=1), default=10, show_default=True,
              help="How many results.")
@click.option("--json", "as_json", is_flag=True, help="Print {query, results:[{id,name,description,score}]}.")
@reads_bundle
def search(bundle: str, query: str, top_k: int, as_json: bool) -> None:
    """Search BUNDLE (a bundle directory such as dist/, or its http(s) API URL) for QUERY.

    Ranks skills with BM25 over name, description, tags and body (weights 4/2/2/1), using the
    index `skillc build` wrote to api/index/; nothing is re-parsed.  Exit 1 when the bundle or its
    index is missing or corrupted, 2 for an empty query.
    """
    from ..bundle.reader import Bundle

    results = Bundle.open(bundle).search(query, top_k)
    if as_json:
        click.echo(json.dumps({"query": query, "results": results}, ensure_ascii=False))
        return
    if not results:
        click.echo("no match", err=True)
        return
    from ..validate.report import one_line

    # One line per skill, and nothing of the bundle's data (a registry's, untrusted) drives the
    # terminal: a description's line breaks are spaces, its control characters shown as \xNN.
    rows = [(one_line(r["id"]), r["score"], one_line(" ".join(r["description"].split()))) for r in results]
    width = max(len(skill_id) for skill_id, _, _ in rows)
    for n, (skill_id, score, description) in enumerate(rows, 1):
        click.echo(f"{n:>2}. {skill_id:<{width}}  {score:7.3f}  {description}")
