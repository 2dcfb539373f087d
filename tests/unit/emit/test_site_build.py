"""The docs site `skillc build` writes (mkdocs + material, skillc.emit.docsite): pages, safety, determinism,
and the minimal fallback page."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from urllib.parse import unquote

import pytest

from conftest import run_skillc, write_skill
from site_fixture import make_site_repos
from skillc.emit.docsite.pages import md

markdown = pytest.importorskip("markdown")

def render(text: str) -> str:
    from skillc.emit.docsite.markdown_config import markdown as site_markdown

    return site_markdown().convert(text)


def needs_mkdocs() -> None:
    from skillc.emit.docsite import available

    if not available():
        pytest.skip("mkdocs + mkdocs-material are not installed (pip install 'skillc[site]')")


def build(tmp: Path, *args: str, **env: str):
    return run_skillc("build", "team", "vendor", "--out", "out", *args, cwd=tmp,
                      env={"SKILLC_CACHE_DIR": str(tmp / "cache"), "SOURCE_DATE_EPOCH": "1700000000", **env})


# --- the Markdown the site renders --------------------------------------------------------------

@pytest.mark.parametrize("source", [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<div>\n<script>alert(1)</script>\n</div>",
    "text <svg onload=alert(1)> text",
    "<!-- <script>alert(1)</script> -->",
    "<iframe srcdoc='<script>alert(1)</script>'></iframe>",
])
def test_raw_html_is_text(source: str):
    out = render(source)
    assert "<script" not in out and "<img" not in out and "<svg" not in out and "<iframe" not in out
    assert "&lt;" in out


@pytest.mark.parametrize("url", [
    "javascript:alert(1)", "JaVaScRiPt:alert(1)", " javascript:alert(1)", "java&#x09;script:alert(1)",
    "java&#115;cript:alert(1)", "jav\u200bascript:alert(1)", "data:text/html,hi", "vbscript:msgbox(1)",
    "file:///etc/passwd",
])
def test_script_urls_are_removed(url: str):
    for source in (f"[x]({url})", f"![x]({url})", f"[x][r]\n\n[r]: {url}", f"[x](<{url}>)"):
        out = render(source)
        assert "href" not in out and "src" not in out, (source, out)
        assert "skillc-unsafe-link" in out


def test_safe_urls_stay_and_relative_links_point_at_the_bundle_files():
    out = render("[a](https://example.org/x) [m](mailto:a@b.c) [r](references/x.md#part) ![i](assets/p.png) "
                 "[up](../other/SKILL.md) [out](../../../../etc/x) [top](#files)\n\n[skillc-files]: ../../api/files/a/b/\n")
    assert 'href="https://example.org/x"' in out and 'href="mailto:a@b.c"' in out
    assert 'href="../../api/files/a/b/references/x.md#part"' in out
    assert 'src="../../api/files/a/b/assets/p.png"' in out
    assert 'href="../../api/files/a/other/SKILL.md"' in out  # a sibling skill's file: its copy in the bundle
    assert 'href="../../../../etc/x"' in out  # above the repository: left as the author wrote it
    assert 'href="#files"' in out


def test_heading_ids_cannot_shadow_the_theme():
    out = render("# __config\n\n## md-sidebar\n")
    assert 'id="__config"' not in out and 'id="h-__config"' in out and 'id="h-md-sidebar"' in out


@pytest.mark.parametrize("fence", ["``` {#__config}", "~~~ {#md-header .python}", "``` { #__search }",
                                   "```{#H-x}"])
def test_fenced_code_ids_cannot_shadow_the_theme(fence: str):
    """fenced_code writes its <pre id=…> outside the element tree; an ID material looks up
    (#__config holds its settings) would hand the theme the skill's JSON."""
    out = render(f'# T\n\n{fence}\n{{"base": "../../api/files/x/"}}\n{fence[:3]}\n')
    ids = re.findall(r'<(?:pre|div)[^>]*\sid="([^"]*)"', out)
    assert ids and all(i.startswith("h-") for i in ids), out
    assert "<pre" in out and html.unescape(re.sub(r"<[^>]+>", "", out.split("<pre>", 1)[1])).startswith(
        '{"base"')  # still the code block, its text shown as text
    assert 'id="plain"' in render("``` {#plain}\nx\n```\n")  # other IDs stay
    assert 'id="h-md-x"' in render("- item\n\n  ``` {#md-x}\n  x\n  ```\n")  # a fence in a list too


@pytest.mark.parametrize("text", [
    "{baseDir} $ARGUMENTS {{ user }} {% raw %} ${HOME}",
    "*not bold* _not em_ `not code` [not](link) ![not](img) # not heading",
    "<b>&amp; 'quotes' \"too\" </textarea> & < >",
    "| pipes | in | cells | \\ back\\slash",
    "1. not a list",
    "- not a list either",
    "> not a quote",
])
def test_md_escape_shows_text_literally(text: str):
    # In a paragraph and in a table cell, md(text) displays exactly the text.
    for source, pick in ((md(text), "p"), (f"| h |\n|---|\n| {md(text)} |", "td")):
        out = render(source)
        inner = re.search(rf"<{pick}>(.*)</{pick}>", out, re.DOTALL).group(1)
        assert "<" not in inner.replace("&lt;", ""), out
        assert html.unescape(inner) == text


# --- the built site -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    needs_mkdocs()
    tmp = tmp_path_factory.mktemp("site")
    make_site_repos(tmp)
    r = build(tmp)
    assert r.returncode == 0, r.stderr
    return tmp / "out"


def site_files(out: Path) -> dict[str, bytes]:
    skip = ("api/", ".well-known/", "_routing/", "_redirects", "_headers")
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and not p.relative_to(out).as_posix().startswith(skip)}


def test_pages_for_every_skill_collection_and_report(built: Path):
    for page in ("index.html", "all/index.html", "collections/index.html", "collections/extraction/index.html",
                 "collections/extraction/medical/index.html", "skills/extraction/email/index.html",
                 "skills/extraction/medical/diagnosis/index.html", "skills/hostile/index.html",
                 "skills/vendor-only/index.html", "provenance/index.html", "lint/index.html", "search/index.html",
                 "memory/index.html", "memory/preference/index.html", "memory/correction/index.html", "404.html"):
        assert (built / page).is_file(), page
    # The bundle is still there, and mkdocs' leftovers that make no sense in it are not.
    assert (built / "api/skills.json").is_file() and (built / "api/manifest.json").is_file()
    for gone in ("sitemap.xml", "sitemap.xml.gz", "assets/javascripts/lunr", "search/search_index.json"):
        assert not (built / gone).exists(), gone
    assert not list(built.rglob("*.map"))
    # Every site file is in the manifest (so `skillc serve` ETags and the digests cover it).
    listed = {f["path"] for f in json.loads((built / "api/manifest.json").read_text())["files"]}
    assert set(site_files(built)) <= listed
    provenance = (built / "provenance/index.html").read_text()
    # Each repository's row counts the skills it publishes (team's five, vendor's one: its other is shadowed).
    counts = re.findall(r"<strong>(\w+)</strong></td>(?:\s*<td[^>]*>[^<]*(?:<code>[^<]*</code>)?</td>){3}\s*"
                        r"<td[^>]*>(\d+)</td>", provenance)
    assert counts == [("team", "5"), ("vendor", "1")]
    assert re.search(r"extraction/email</a></td>\s*<td[^>]*><strong>team</strong> \(priority 250\)</td>\s*"
                     r"<td[^>]*>vendor \(priority 250\)", provenance)
    lint = (built / "lint/index.html").read_text()
    assert 'href="rules/B704/"' in lint  # the hostile skill's broken link: its rule's page lists it
    assert "hostile" in (built / "lint/rules/B704/index.html").read_text()
    assert 'href="top/"' in lint and "hostile" in (built / "lint/top/index.html").read_text()  # by collection


def test_dot_folder_skills_shadowed_findings_and_memory_stars(built: Path):
    """Skills in dot-folders get pages like any other; a published skill's page shows its own
    findings, not its shadowed copy's; a memory has the same stars on every page."""
    assert (built / "skills/.curated/gh-fix/index.html").is_file()
    assert (built / "collections/.curated/index.html").is_file()
    email = (built / "skills/extraction/email/index.html").read_text()
    assert "missing-notes.md" not in email and "B704" not in email
    lint = (built / "lint/rules/B704/index.html").read_text()
    assert "missing-notes.md" in lint  # the report still lists the shadowed copy's finding
    stars = re.compile(r"[★☆]{5}")
    note = "The email skill misses CC headers."
    on_skill = stars.findall(email[email.index("misses CC headers") - 400:email.index("misses CC headers")])
    memory = (built / "memory/correction/index.html").read_text()
    on_memory = stars.findall(memory[memory.index(note) - 400:memory.index(note)])
    assert on_skill and on_memory and on_skill[-1] == on_memory[-1]


def test_heading_anchors_are_githubs(built: Path):
    """A link written for GitHub's anchors (`&` dropped, other scripts kept) finds its heading."""
    page = (built / "skills/deploy-helper/index.html").read_text()
    assert 'id="rollback--回滚-steps"' in page and 'href="#rollback--回滚-steps"' in page


def test_paged_lists_render_as_cards(tmp_path: Path, monkeypatch):
    """Past PAGE_SIZE skills the "All skills" pages keep their cards (a blank line before them)."""
    needs_mkdocs()
    from skillc.build.pipeline import BuildOptions, run_build
    from skillc.emit.docsite import pages

    monkeypatch.setattr(pages, "PAGE_SIZE", 2)
    monkeypatch.setattr(pages, "HOME_LIMIT", 2)
    make_site_repos(tmp_path)
    run_build(BuildOptions(paths=("team",), out="out", cwd=tmp_path, cache_dir=tmp_path / "cache",
                           env={"SOURCE_DATE_EPOCH": "1700000000"}))
    for page, count in (("all/index.html", 2), ("all/~2/index.html", 2), ("all/~3/index.html", 1)):
        html = (tmp_path / "out" / page).read_text()
        article = html[html.index("<article"):html.index("</article>")]
        cards = re.findall(r'<li>\s*(?:<p>)?<strong><a href="[./]*skills/', article)
        assert len(cards) == count and "**" not in article, page
        assert 'href="../~2/"' in article or 'href="~2/"' in article or page.endswith("~2/index.html"), page


def test_every_page_has_the_csp_and_no_inline_script(built: Path):
    pages = [p for p in built.rglob("*.html") if p.is_file() and not p.relative_to(built).as_posix().startswith("api/")]
    assert len(pages) > 15
    for page in pages:
        text = page.read_text()
        assert re.search(r"<meta http-equiv=\"Content-Security-Policy\" content=\"[^\"]*script-src 'self'", text), page
        for tag in re.findall(r"<script\b[^>]*>", text):
            assert "src=" in tag or 'type="application/json"' in tag, (page, tag)
        assert "fonts.googleapis.com" not in text


def test_hostile_text_is_escaped_in_the_html(built: Path):
    page = (built / "skills/hostile/index.html").read_text()
    article = page[page.index("<article"):page.index("</article>")]
    assert not re.search(r"<(script|img|iframe|svg)\b", article)
    assert not re.search(r"<[^>]*\son[a-z]+=", article)  # no element carries an event handler
    assert not re.search(r"(href|src)=\"\s*javascript:", article, re.IGNORECASE)
    assert "{baseDir} $ARGUMENTS {{ user_input }} {% raw %} ${HOME}" in article
    assert "Hostile &lt;img src=x onerror=alert(1)&gt; {baseDir} $ARGUMENTS {{ x }} *not bold*" in article
    title = re.search(r"<title>(.*?)</title>", page).group(1)
    assert title == "hostile - Skills"


def test_same_inputs_give_a_byte_identical_site(built: Path, tmp_path: Path):
    make_site_repos(tmp_path)
    r = build(tmp_path, TZ="Asia/Kolkata", LC_ALL="C", LANG="de_DE.UTF-8")
    assert r.returncode == 0, r.stderr
    a, b = site_files(built), site_files(tmp_path / "out")
    assert sorted(a) == sorted(b)
    assert [k for k in a if a[k] != b[k]] == []


def test_minimal_page_is_the_fallback_and_says_how_to_get_the_site(tmp_path: Path):
    make_site_repos(tmp_path)
    r = build(tmp_path, SKILLC_SITE="minimal")
    assert r.returncode == 0, r.stderr
    page = (tmp_path / "out/index.html").read_text()
    assert "skillc[site]" in page and "minimal page" in page
    assert "extraction/email" in page and "<script" not in page
    assert not (tmp_path / "out/skills").exists()


def test_bad_skillc_site_value_is_a_one_line_error(tmp_path: Path):
    make_site_repos(tmp_path)
    r = build(tmp_path, SKILLC_SITE="sphinx")
    assert r.returncode == 2
    assert "SKILLC_SITE must be 'mkdocs' or 'minimal'" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()


def test_unchanged_site_is_reused_and_a_change_rebuilds_it(tmp_path: Path):
    needs_mkdocs()
    make_site_repos(tmp_path)
    assert build(tmp_path).returncode == 0
    out = tmp_path / "out"
    first = {p: (out / p).stat().st_ino for p in ("index.html", "skills/hostile/index.html", "assets/skillc/site.json")}
    before = site_files(out)
    r = build(tmp_path)
    assert r.returncode == 0, r.stderr
    assert site_files(out) == before
    # Hard links to the previous generation's files: mkdocs did not run again.
    assert {p: (out / p).stat().st_ino for p in first} == first
    (tmp_path / "team/deploy-helper/SKILL.md").write_text(
        "---\nname: deploy-helper\ndescription: Deploy with Argo now. Use when shipping.\n---\n# Deploy\n")
    assert build(tmp_path).returncode == 0
    assert "Deploy with Argo now" in (out / "index.html").read_text()
    assert (out / "index.html").stat().st_ino != first["index.html"]


def test_a_skill_stored_as_lowercase_skill_md_links_the_file_published(tmp_path: Path):
    """The skill page's "Get it" link and the discovery index name the file the bundle publishes
    (``skill.md`` for a skill stored so), first; a link to ``SKILL.md`` answered 404."""
    needs_mkdocs()
    from conftest import write_skill

    write_skill(tmp_path / "team", "lower", file_name="skill.md", body="# Lower\n\nLower-case file.\n")
    (tmp_path / "team/lower/_meta.json").write_text("{}\n")  # (sorts before skill.md)
    write_skill(tmp_path / "vendor", "upper")
    r = build(tmp_path, "--keep-going")
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out"
    page = (out / "skills/lower/index.html").read_text()
    hrefs = re.findall(r'href="([^"]*api/files/lower/[^"]*)"', page)
    assert "../../api/files/lower/skill.md" in hrefs and not any(h.endswith("/SKILL.md") for h in hrefs), hrefs
    assert (out / "api/files/lower/skill.md").is_file()
    index = json.loads((out / ".well-known/agent-skills/index.json").read_text())
    entry = next(e for e in index["skills"] if e["name"] == "lower")
    assert [f["path"] for f in entry["files"]] == ["SKILL.md", "_meta.json"]  # (as the archive holds it)


def test_a_remote_image_becomes_a_link_the_reader_can_open():
    """The site's CSP loads images from the site only (it works offline and tracks no reader): a
    remote image would be a broken image and a CSP error on every view; it is a link instead."""
    out = render("![Logo](https://files.example.com/x.png) ![](//cdn.example.com/y.png) ![local](assets/a.png)")
    assert '<a href="https://files.example.com/x.png" title="remote image, not loaded by this site">image: Logo</a>' in out
    assert '<a href="//cdn.example.com/y.png"' in out and ">image</a>" in out
    assert '<img alt="local" src="assets/a.png"' in out and out.count("<img") == 1
    assert "<img" not in render("![p](https:/files.example.com/y.png)")  # (browsers read it as https://)


@pytest.mark.parametrize("control", ["\u202e", "\u202d", "\u2066", "\u2068"])
def test_bidirectional_controls_cannot_disguise_text(control: str):
    """`\\u202eevil` displays as "live": in generated values (names, descriptions, memories) and in
    skill bodies the controls show as their code points."""
    shown = f"[U+{ord(control):04X}]"
    assert shown in render(md(f"name {control}evil")).replace("\\", "")
    out = render(f"Body {control}evil and `{control}code`")
    assert control not in out and out.count(shown) == 2
    out = render(f"![alt {control}x](https://e.com/x.png) [l](https://e.com \"t{control}x\")\n\n"
                 f"```\nfenced {control}code\n```\n")
    assert control not in out and out.count(shown) == 3, out  # link text, title, fenced code


def test_a_body_links_only_the_files_the_bundle_publishes(tmp_path: Path):
    """A body's relative link to a file the bundle does not have (a script left out of the
    repository, a folder, an excluded sibling skill's file) was rewritten into api/files/ anyway: a
    404 on the site.  It is text now; `{baseDir}/…` (Claude's placeholder for the skill's folder,
    which trailofbits' skills use) was a 404 too and now reaches the file."""
    needs_mkdocs()
    from conftest import write_skill

    write_skill(tmp_path / "team", "links", body=(
        "# Links\n\n[ref]({baseDir}/references/r.md) [ref2](references/r.md#top) [spaced](references/my%20notes.md)\n"
        "[script](scripts/run.sh) [folder](references) [sibling](../broken/SKILL.md) ![pic](img/p.png)\n"
        "![gone](img/gone.png)\n"))
    (tmp_path / "team/links/references").mkdir()
    (tmp_path / "team/links/references/r.md").write_text("# R\n")
    (tmp_path / "team/links/references/my notes.md").write_text("# N\n")
    (tmp_path / "team/links/img").mkdir()
    (tmp_path / "team/links/img/p.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    write_skill(tmp_path / "team", "broken", name="Broken_Name")  # excluded: a lint error
    write_skill(tmp_path / "vendor", "other")
    r = build(tmp_path, "--keep-going")
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out"
    assert not (out / "api/files/broken").exists()
    page = (out / "skills/links/index.html").read_text()
    body = page[page.index('id="skillmd"'):]  # (the rendered body, after the Files list)
    targets = re.findall(r'(?:href|src)="\.\./\.\./((?:api/files|skills)/[^"#]*)', body)
    # Markdown references open as pages of the site; the image is the bundle's file.
    assert sorted(set(targets)) == ["api/files/links/img/p.png", "skills/links/_files/references/my%20notes.md/",
                                    "skills/links/_files/references/r.md/"], targets
    for t in targets:
        assert (out / unquote(t)).is_file() or (out / unquote(t) / "index.html").is_file(), t
    for text, target in (("script", "links/scripts/run.sh"), ("folder", "links/references"),
                         ("sibling", "broken/SKILL.md"), ("gone", "links/img/gone.png")):
        assert (f'<span class="skillc-missing-link" title="not published in this bundle: {target}">{text}</span>'
                in body), text


def page_titles(out: Path) -> dict[str, str]:
    """{title text: page} of every page of the site; fails on a page without a title or a repeated one."""
    titles: dict[str, str] = {}
    for page in sorted(out.rglob("*.html")):
        rel = page.relative_to(out).as_posix()
        if rel.startswith("api/") or not page.is_file():
            continue  # (a skill's own files, not pages of the site)
        m = re.search(r"<title>([^<]*)</title>", page.read_text(encoding="utf-8"))
        assert m, rel
        title = html.unescape(m.group(1))
        assert title not in titles, (rel, titles.get(title))
        titles[title] = rel
    return titles


def test_page_titles_are_unique_and_the_404_page_says_not_found(built: Path):
    """The 404 page's title was the site name alone, the home page's: a tab or a history entry for a
    missing page read "Skills".  Every page's title is its own."""
    assert page_titles(built)["Page not found - Skills"] == "404.html"


def test_skills_that_share_a_name_have_titles_of_their_own(tmp_path: Path):
    """Two skills named `codeql` (two plugins' copies) both had the title "codeql - Skills"; a skill
    named like a collection too.  Such a skill's title adds its ID; a name of its own stays alone."""
    needs_mkdocs()
    make_site_repos(tmp_path)
    for rel in ("plugins/static-analysis/skills/codeql", "skills/codeql", "tools/a&amp;'q'/codeql", "x/extraction"):
        write_skill(tmp_path / "team", rel)
    r = build(tmp_path, "--keep-going")
    assert r.returncode == 0, r.stderr
    titles = page_titles(tmp_path / "out")
    for title, page in (("codeql (plugins/static-analysis/skills/codeql) - Skills",
                         "skills/plugins/static-analysis/skills/codeql/index.html"),
                        ("codeql (skills/codeql) - Skills", "skills/skills/codeql/index.html"),
                        ("codeql (tools/a&amp;'q'/codeql) - Skills", "skills/tools/a&amp;'q'/codeql/index.html"),
                        ("extraction (x/extraction) - Skills", "skills/x/extraction/index.html"),
                        ("extraction - Skills", "collections/extraction/index.html"),
                        ("deploy-helper - Skills", "skills/deploy-helper/index.html")):
        assert titles[title] == page, title
    raw = (tmp_path / "out/skills/tools/a&amp;'q'/codeql/index.html").read_text(encoding="utf-8")
    assert "<title>codeql (tools/a&amp;amp;&#39;q&#39;/codeql) - Skills</title>" in raw


def test_a_title_is_text_never_markup(tmp_path: Path, monkeypatch):
    """Material prints `page.title | striptags`, which turns the heading's entities back into
    characters: a name `</title><script>…` was markup in <title>.  Titles and headings are escaped."""
    needs_mkdocs()
    import dataclasses

    from skillc.build.pipeline import BuildOptions, run_build
    from skillc.emit.docsite import model as site_model_module

    evil = "</title><script>alert(1)</script> &amp; \"q\" 'q'"
    real = site_model_module.site_model_memo

    def hostile_names(ctx, memo):
        m, kept = real(ctx, memo)
        return dataclasses.replace(m, skills=tuple(
            dataclasses.replace(s, name=evil) if s.id in ("hostile", "deploy-helper") else s for s in m.skills)), kept

    monkeypatch.setattr(site_model_module, "site_model_memo", hostile_names)
    make_site_repos(tmp_path)
    run_build(BuildOptions(paths=("team",), out="out", cwd=tmp_path, cache_dir=tmp_path / "cache",
                           env={"SOURCE_DATE_EPOCH": "1700000000"}))
    for skill_id in ("hostile", "deploy-helper"):
        page = (tmp_path / "out/skills" / skill_id / "index.html").read_text(encoding="utf-8")
        assert "<script>alert" not in page and "</title><script>" not in page
        title = re.search(r"<title>([^<]*)</title>", page).group(1)
        assert html.unescape(title) == f"{evil} ({skill_id}) - Skills"
        h1 = re.search(r"<h1[^>]*>(.*?)</h1>", page).group(1)
        assert html.unescape(re.sub(r"<a [^>]*>.*?</a>", "", h1)) == evil


def test_the_404_page_links_the_site_from_skillc_site_url(tmp_path: Path):
    """The 404 page is served at any missing path, so mkdocs writes its links from the root
    (`/assets/…`): a site served under /team/ showed it unstyled, its links leaving the site.
    `SKILLC_SITE_URL` gives the site's path; without it the root is kept."""
    needs_mkdocs()
    make_site_repos(tmp_path)
    r = build(tmp_path, SKILLC_SITE_URL="https://acme.example/team")
    assert r.returncode == 0, r.stderr
    page = (tmp_path / "out/404.html").read_text(encoding="utf-8")
    assert 'href="/team/assets/stylesheets/' in page and 'href="/team/search/' in page
    assert not re.search(r'(href|src)="/(?!team/)', page)
    bad = build(tmp_path, SKILLC_SITE_URL='https://acme.example/"><script>')
    assert bad.returncode != 0 and "SKILLC_SITE_URL" in bad.stderr


# --- bodies as GitHub renders them --------------------------------------------------------------

@pytest.mark.parametrize("source", [
    "1. Run it:\n\n   ```bash\n   make test\n   ```\n\n2. Read the output.\n",  # GitHub's 3 columns after `1. `
    "- Run it:\n  ```bash\n  make test\n  ```\n- Read the output.\n",  # 2 after `- `, no blank lines
    "- Run it:\n    ```bash\n    make test\n    ```\n- Read the output.\n",  # Python-Markdown's own 4
    "- Steps\n  - Run it:\n\n    ```bash\n    make test\n    ```\n\n  - Read the output.\n",  # nested
])
def test_a_fence_inside_a_list_item_stays_a_highlighted_code_block(source: str):
    out = render(source)
    li_texts = re.findall(r"<li>(.*?)</li>", out, re.DOTALL)
    assert any("<pre>" in t and "make" in t for t in li_texts), out  # inside the item, a block
    assert "<code>bash" not in out and "```" not in out  # not one line of inline code
    assert 'class="nf"' in out or 'class="n"' in out or "language-bash" in out  # highlighted
    assert "Read the output." in re.findall(r"<li>(.*?)</li>", out, re.DOTALL)[-1]


def test_code_is_highlighted_into_css_classes():
    out = render("```python\ndef f(x):\n    return x\n```\n")
    assert '<span class="k">def</span>' in out and "style=" not in out  # classes: the CSP forbids no style here


def test_the_table_of_contents_keeps_a_body_that_opens_with_its_own_h1():
    md = __import__("skillc.emit.docsite.markdown_config", fromlist=["markdown"]).markdown()
    md.convert("# Skill name\n\n## Files\n\n## SKILL.md\n\n# Body title\n\n## Usage\n\n### Details\n")
    top = md.toc_tokens
    assert [t["name"] for t in top] == ["Skill name"]
    assert [t["name"] for t in top[0]["children"]] == ["Files", "SKILL.md", "Body title"]
    assert [t["name"] for t in top[0]["children"][2]["children"]] == ["Usage"]


def test_a_link_to_a_renamed_heading_follows_it():
    out = render("See [setup](#md-setup).\n\n## md-setup\n")
    assert 'href="#h-md-setup"' in out and 'id="h-md-setup"' in out


# --- the list pages' cards: generated HTML, passed through only on the pages that hold it ----------

MARKED = "before\n\n<!--skillc:html-->\n<ul><li><b>x</b></li></ul>\n<!--/skillc:html-->\n\nafter"


def test_a_generated_html_block_is_text_unless_the_page_is_marked():
    """The block lines a list page's cards sit between are text like any raw HTML on a page its front
    matter does not mark (a skill body, a description), and in any renderer but the site's."""
    from skillc.emit.docsite.markdown_config import markdown as site_markdown
    from skillc.emit.docsite.markdown_safe import trusted_html

    assert "<ul>" not in render(MARKED) and "&lt;ul&gt;" in render(MARKED)
    converter = site_markdown()
    trusted_html(converter, {"skillc_html": True})
    assert "<ul><li><b>x</b></li></ul>" in converter.convert(MARKED)
    converter.reset()
    trusted_html(converter, {"skillc_html": "yes"})  # (only the templates' own `true`)
    assert "<ul>" not in converter.convert(MARKED)
    converter.reset()
    trusted_html(converter, {"skillc_html": True})
    unclosed = converter.convert(MARKED.replace("<!--/skillc:html-->", ""))
    assert "<ul>" not in unclosed and "&lt;ul&gt;" in unclosed


HOSTILE_CARD = "</ul><!--/skillc:html--> <script>alert(1)</script> \"q\" & <img src=x onerror=alert(1)>"


def test_cards_print_every_skill_value_as_text():
    """A name, description, collection, source or tag cannot close the cards' block or add markup."""
    import dataclasses

    from skillc.emit.docsite.markdown_safe import HTML_END
    from skillc.emit.docsite.model import SkillInfo
    from skillc.emit.docsite.pages import Page, skill_cards

    base = SkillInfo(id="c/x", name=HOSTILE_CARD, description=HOSTILE_CARD + "\n" + HOSTILE_CARD, collection="c",
                     repository=HOSTILE_CARD, repository_type="path", location="", tier="team", priority=0,
                     shadowed=(), lint="ok", warnings=0, diagnostics=(), files=(), withheld=(), archive=None, size=1,
                     body="", body_lines=0, body_tokens=1, metadata=(), tags=(HOSTILE_CARD,))
    cards = skill_cards(Page("all/index.md"), [base, dataclasses.replace(base, id='a"b/<y>', collection='a"b')])
    lines = cards.splitlines()
    assert lines[-1] == HTML_END and HTML_END not in lines[:-1]
    assert not re.search(r"<(script|img)\b", cards) and "onerror=alert(1)&gt;" in cards
    assert html.unescape(re.sub(r"<[^>]+>", "", cards)).count(HOSTILE_CARD) == 10  # (each card: name, description ×2, source, tag)
    assert 'href="../skills/a%22b/%3Cy%3E/"' in cards and 'href="../collections/a%22b/"' in cards


def test_list_pages_show_hostile_cards_as_text_and_a_body_cannot_mark_its_page(tmp_path: Path):
    """Built by mkdocs: the list pages hold the cards as HTML, every value escaped; a skill body that
    writes the block lines (and front matter of its own) shows them as text."""
    needs_mkdocs()
    write_skill(tmp_path / "team", "tools/evil", description=HOSTILE_CARD.replace("\"", ""),
                body="---\nskillc_html: true\n---\n\n<!--skillc:html-->\n<img src=x onerror=alert(1)>\n"
                     "<!--/skillc:html-->\n")
    write_skill(tmp_path / "team", "tools/good")
    r = run_skillc("build", "team", "--out", "out", "--keep-going", cwd=tmp_path,
                   env={"SKILLC_CACHE_DIR": str(tmp_path / "cache"), "SOURCE_DATE_EPOCH": "1700000000"})
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out"
    for page in ("index.html", "all/index.html", "collections/tools/index.html"):
        text = (out / page).read_text()
        article = text[text.index("<article"):text.index("</article>")]
        assert not re.search(r"<(script|img)\b", article), page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in article, page
        assert re.search(r'<li>\s*<p><strong><a href="[./]*skills/tools/good/">good</a></strong> ✓ ok', article), page
    body = (out / "skills/tools/evil/index.html").read_text()
    assert "<img" not in body[body.index("<article"):] and "&lt;!--skillc:html--&gt;" in body
