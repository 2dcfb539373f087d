"""Fixture repositories for the docs-site tests (tests/test_site_*.py): two repositories where one
shadows the other, nested collections, a hostile skill and a memory folder."""

from __future__ import annotations

from pathlib import Path

from conftest import write_skill

HOSTILE_BODY = """# Hostile

<script>document.title = "pwned-script"; window.__pwned = "script";</script>

<img src="x" onerror="document.title = 'pwned-img'; window.__pwned = 'img'">

[click me](javascript:document.title='pwned-link') and [obfuscated](JaVa&#x09;ScRiPt:alert(1))

Placeholders stay literal: {baseDir} $ARGUMENTS {{ user_input }} {% raw %} ${HOME}

```html
<script>this is code, shown as code</script>
```

See [the reference](references/REFERENCE.md), the [guide](guide.html) and the [diagram](diagram.svg).

``` {#__config}
{"base": "../../api/files/hostile/", "features": ["navigation.instant"], "search": null, "translations": {}}
```
"""

# A skill's own files that a browser would run if the site's origin served them as what they are.
HOSTILE_FILES = {
    "guide.html": "<!doctype html><title>guide</title>"
                  "<script>document.title = 'pwned-file'; window.__pwned = 'file'</script>\n",
    "diagram.svg": '<svg xmlns="http://www.w3.org/2000/svg"><script>'
                   'document.documentElement.setAttribute("data-pwned", "svg")</script></svg>\n',
    "app.js": "window.__pwned = 'js'; document.title = 'pwned-js';\n",
}


def make_site_repos(root: Path) -> dict[str, Path]:
    """``root/team`` (wins) and ``root/vendor`` (shadowed on ``extraction/email``)."""
    team, vendor = root / "team", root / "vendor"
    write_skill(team, "extraction/email", description="Extract entities from emails. Use for email text.",
                body="# Email Extractor\n\nExtract entities.\n")
    write_skill(team, "extraction/medical/diagnosis", description="Diagnose from notes. Use for medical text.")
    write_skill(team, "deploy-helper", description="Deploy services to production. Use when shipping releases.",
                body="# Deploy\n\nRoll out the release with kubectl and watch the canary.\n\n"
                     "See [rollback](#rollback--回滚-steps).\n\n## Rollback & 回滚 steps\n\nUndo it.\n")
    write_skill(team, "hostile", description="Hostile <img src=x onerror=alert(1)> {baseDir} $ARGUMENTS {{ x }} *not bold*",
                body=HOSTILE_BODY)
    (team / "hostile/references").mkdir(parents=True)
    (team / "hostile/references/REFERENCE.md").write_text("# Reference\n", encoding="utf-8")
    for name, text in HOSTILE_FILES.items():
        (team / "hostile" / name).write_text(text, encoding="utf-8")
    (team / "extraction/COLLECTION.md").write_text("Entity extraction\n", encoding="utf-8")
    write_skill(team, ".curated/gh-fix", description="Fix CI on GitHub. Use when a workflow fails.")  # a dot-folder
    # The shadowed copy has a broken link: its finding is not the published skill's.
    write_skill(vendor, "extraction/email", description="Vendor email extractor. Use for emails.",
                body="# Vendor\n\nSee [the notes](missing-notes.md).\n")
    write_skill(vendor, "vendor-only", description="Only the vendor has it. Use for vendor things.")
    (team / "memory").mkdir()
    (team / "memory/conventions.yaml").write_text(
        "- id: pref-pnpm\n  category: preference\n  content: Always use pnpm instead of npm.\n"
        "  namespace: project/acme\n  keywords: [pnpm, npm]\n  importance: 0.9\n"
        "- id: conv-vitest\n  category: convention\n  content: Tests live in Vitest <script>alert(1)</script>.\n"
        "  namespace: project/acme\n  importance: 0.6\n"
        "- id: note-email\n  category: correction\n  content: The email skill misses CC headers.\n"
        "  namespace: skill/extraction/email\n  importance: 0.7\n",
        encoding="utf-8")
    return {"team": team, "vendor": vendor}
