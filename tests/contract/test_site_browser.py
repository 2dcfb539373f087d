"""The docs site in a real browser: `skillc build` (mkdocs + material) of a fixture with a hostile
skill, served by `skillc serve` on loopback, driven in headless chromium over the DevTools protocol.

Checks what a reader relies on: the home page lists collections and skills; a skill page shows the
winning repository, what it shadowed, lint status and size; the Search page finds a skill through
the bundle's own index (and a memory); the hostile skill's script, ``onerror`` handler and
``javascript:`` link never run (``document.title`` and a global stay unchanged); the site's own
pages raise no Content-Security-Policy violation (material still works under ``script-src 'self'``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import run_skillc, skillc_command, stop_process
from site_fixture import make_site_repos

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--remote-debugging-port=0"]


def _need_site_tools() -> None:
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (tests/setup_system.sh installs it with apt)")
    pytest.importorskip("websocket", reason="websocket-client is in the test extra")
    from skillc.emit.docsite import available

    if not available():
        pytest.skip("mkdocs + mkdocs-material are not installed (pip install 'skillc[site]')")


class Browser:
    """One headless chromium and one page, over the DevTools protocol (websocket-client)."""

    def __init__(self, profile: Path) -> None:
        import websocket

        self.proc = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not port_file.is_file() or not port_file.read_text().strip():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                pytest.fail("chromium did not start its DevTools endpoint")
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        import urllib.request

        deadline = time.monotonic() + 10
        while True:
            try:
                targets = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5).read())
                page = next(t for t in targets if t.get("type") == "page")
                break
            except (OSError, StopIteration):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=30,
                                              suppress_origin=True)
        self.next_id = 0
        self.events: list[dict] = []
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Log.enable")

    def call(self, method: str, **params) -> dict:
        self.next_id += 1
        mid = self.next_id
        self.ws.send(json.dumps({"id": mid, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == mid:
                if "error" in msg:
                    raise AssertionError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def wait_event(self, method: str, timeout: float = 30) -> dict:
        deadline = time.monotonic() + timeout
        for i, ev in enumerate(self.events):
            if ev.get("method") == method:
                return self.events.pop(i)
        self.ws.settimeout(timeout)
        while time.monotonic() < deadline:
            msg = json.loads(self.ws.recv())
            if msg.get("method") == method:
                return msg
            self.events.append(msg)
        raise AssertionError(f"no {method} within {timeout}s")

    def goto(self, url: str) -> None:
        self.events.clear()
        self.call("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired")

    def js(self, expression: str):
        res = self.call("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in res:
            raise AssertionError(f"{expression}: {res['exceptionDetails']}")
        return res["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.js(expression)
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {expression}")

    def csp_violations(self) -> list[str]:
        self.js("new Promise(r => setTimeout(r, 200))")  # let queued console/log events arrive
        out = []
        for ev in self.events:
            text = ""
            if ev.get("method") == "Log.entryAdded":
                text = ev["params"]["entry"].get("text", "")
            elif ev.get("method") == "Runtime.consoleAPICalled":
                text = " ".join(str(a.get("value", "")) for a in ev["params"].get("args", ()))
            if "Content Security Policy" in text or "Content-Security-Policy" in text:
                out.append(text)
        return out

    def close(self) -> None:
        try:
            self.ws.close()
        except OSError:
            pass  # chromium already gone
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    _need_site_tools()
    tmp = tmp_path_factory.mktemp("site-browser")
    make_site_repos(tmp)
    r = run_skillc("build", "team", "vendor", "--out", "out", cwd=tmp,
                   env={"SKILLC_CACHE_DIR": str(tmp / "cache"), "SOURCE_DATE_EPOCH": "1700000000"})
    assert r.returncode == 0, r.stderr
    assert (tmp / "out/skills/hostile/index.html").is_file(), "the mkdocs site was not built"
    proc = subprocess.Popen([*skillc_command(), "serve", str(tmp / "out"), "--port", "0", "--quiet"], cwd=tmp,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    m = re.search(r"http://127\.0\.0\.1:(\d+)/", proc.stdout.readline())
    assert m, proc.stderr.read() if proc.poll() is not None else "no URL printed"
    browser = Browser(tmp / "profile")
    yield browser, f"http://127.0.0.1:{m.group(1)}/"
    browser.close()
    stop_process(proc, signal.SIGINT)


def test_home_page_lists_collections_and_skills(site):
    browser, base = site
    browser.goto(base)
    links = browser.js("[...document.querySelectorAll('article a')].map(a => a.textContent.trim())")
    for expected in ("extraction", "medical", "email", "deploy-helper", "hostile", "vendor-only"):
        assert expected in links
    text = browser.js("document.querySelector('article').innerText")
    assert "6 skills in 3 collections from 2 repositories" in text
    assert browser.csp_violations() == []  # material's own scripts run under script-src 'self'
    assert browser.js("document.documentElement.classList.contains('js')")  # material's bundle ran


def test_skill_page_shows_provenance_lint_and_size(site):
    browser, base = site
    browser.goto(base + "skills/extraction/email/")
    rows = dict(browser.js(
        "[...document.querySelectorAll('article table tr')].map(r => [...r.cells].map(c => c.innerText.trim()))"
        ".filter(r => r.length == 2 && r[0])"))
    assert rows["Repository"] == "team (filesystem, project tier, priority 250)"
    assert rows["Location"] == "team"  # relative to where the build ran: no path of the build machine
    assert rows["Shadows"].startswith("vendor (priority 250)")
    summary = browser.js("document.querySelector('article h1 ~ p:nth-of-type(2)').innerText")
    assert summary.startswith("✓ ok · collection extraction · 1 file, 120 bytes"), summary
    assert "[WARN]" in browser.js("document.querySelector('article').innerText")  # the skill's memory note
    # The SKILL.md link reaches the bundle's copy of the file.
    href = browser.js("[...document.querySelectorAll('article a')].find(a => a.textContent == 'SKILL.md').href")
    assert href == base + "api/files/extraction/email/SKILL.md"
    assert browser.js(f"fetch({json.dumps(href)}).then(r => r.status)") == 200


def test_search_finds_a_skill_and_a_memory(site):
    browser, base = site
    browser.goto(base + "search/?q=kubectl%20canary")
    hits = browser.wait_for("(() => { const a = [...document.querySelectorAll('#skillc-search-results a')];"
                            " return a.length ? a.map(x => [x.textContent, x.href]) : null })()")
    assert hits[0] == ["deploy-helper", base + "skills/deploy-helper/"]
    # Typing into the box and submitting searches again (and finds a memory by its keyword).
    browser.js("document.getElementById('skillc-search-input').value = 'pnpm';"
               "document.getElementById('skillc-search-form').requestSubmit()")
    status = browser.wait_for("(() => { const s = document.getElementById('skillc-search-status').textContent;"
                              " return s.includes('pnpm') ? s : null })()")
    assert "result" in status
    texts = browser.js("[...document.querySelectorAll('#skillc-search-results li')].map(li => li.textContent)")
    assert any("Always use pnpm" in t for t in texts)
    assert browser.csp_violations() == []


def test_hostile_skill_cannot_run_script(site):
    browser, base = site
    browser.goto(base + "skills/hostile/")
    browser.js("new Promise(r => setTimeout(r, 300))")  # give an onerror handler time to fire
    assert browser.js("document.title") == "hostile - Skills"
    assert browser.js("typeof window.__pwned") == "undefined"
    article = browser.js("document.querySelector('article').innerText")
    # The hostile text is shown, literally, as text.
    assert '<script>document.title = "pwned-script"' in article
    assert "{baseDir} $ARGUMENTS {{ user_input }} {% raw %} ${HOME}" in article
    assert "Hostile <img src=x onerror=alert(1)> {baseDir} $ARGUMENTS {{ x }} *not bold*" in article
    assert browser.js("document.querySelectorAll('article script, article img, article [onerror]').length") == 0
    # No link with a script URL survives; clicking the neutralised one does nothing.
    assert browser.js("[...document.querySelectorAll('a[href]')].filter(a => !/^(https?:|mailto:)/.test(a.href)).length") == 0
    browser.js("[...document.querySelectorAll('.skillc-unsafe-link')].forEach(e => e.click())")
    assert browser.js("document.title") == "hostile - Skills"
    # The body's relative link to a reference opens the reference's own page.
    assert browser.js("[...document.querySelectorAll('article a')].find(a => a.textContent == 'the reference').href") \
        == base + "skills/hostile/_files/references/REFERENCE.md/"
    # A fenced block with the ID material reads its settings from did not take its place.
    assert browser.js("document.querySelector('#__config').tagName") == "SCRIPT"
    pre_ids = browser.js("[...document.querySelectorAll('pre')].map(p => p.id)")  # (material prefixes __code_)
    assert any(i.endswith("h-__config") for i in pre_ids) and "__config" not in pre_ids, pre_ids
    # Memory text is hostile too.
    browser.goto(base + "memory/")
    assert "Tests live in Vitest <script>alert(1)</script>." in browser.js("document.querySelector('article').innerText")
    assert browser.js("document.querySelectorAll('article script').length") == 0


@pytest.mark.parametrize("name", ["guide.html", "diagram.svg"])
def test_a_skills_own_files_cannot_run_script_on_the_sites_origin(site, name):
    """A supporting page or SVG opened from the site (its Files list links them) is not run: it is
    plain text or a sandboxed document."""
    browser, base = site
    browser.goto(base + f"api/files/hostile/{name}")
    time.sleep(0.3)  # (not a page timer: in a sandboxed document none runs)
    assert browser.js("typeof window.__pwned") == "undefined"
    assert browser.js("document.title") != "pwned-file"
    assert browser.js("document.documentElement.getAttribute('data-pwned')") is None
    # Loaded as a script into a page of the site, the skill's .js file is refused (plain text, nosniff).
    browser.goto(base + "skills/hostile/")
    browser.js("new Promise(r => { const s = document.createElement('script'); s.src = '../../api/files/hostile/app.js';"
               " s.onload = s.onerror = r; document.head.appendChild(s); })")
    assert browser.js("typeof window.__pwned") == "undefined"


def test_a_missing_page_is_the_sites_404_page(site):
    from bundle_contract import fetch

    browser, base = site
    status, headers, body = fetch(base.rstrip("/"), "/skills/no-such-skill/")
    assert status == 404 and headers["content-type"].startswith("text/html") and b"404" in body
    status, headers, body = fetch(base.rstrip("/"), "/api/skills/no-such-skill")
    assert status == 404 and headers["content-type"].startswith("application/json")  # the API's JSON 404


def test_the_search_page_fits_a_phone_and_the_skill_table_has_a_header(site):
    """At 375 px the search box shrinks (it pushed the button 7 px past the screen); the skill page's
    property table has a header row, not an empty band; the home page links the collections as the
    .json file a static host serves as JSON."""
    browser, base = site
    browser.call("Emulation.setDeviceMetricsOverride", width=375, height=740, deviceScaleFactor=1, mobile=True)
    try:
        browser.goto(base + "search/?q=kubectl")
        browser.wait_for("document.querySelectorAll('#skillc-search-results a').length || null")
        assert browser.js("document.documentElement.scrollWidth") <= 375
    finally:
        browser.call("Emulation.clearDeviceMetricsOverride")
    browser.goto(base + "skills/extraction/email/")
    assert browser.js("[...document.querySelector('article table thead').innerText.split('\\t')].map(s => s.trim())"
                      ) == ["Property", "Value"]
    browser.goto(base)
    href = browser.js("[...document.querySelectorAll('article a')].find(a => a.textContent.includes("
                      "'skill-collections')).getAttribute('href')")
    assert href.endswith("api/skill-collections.json"), href


# --- the whole site, page by page (issue 21 item 7) ---------------------------------------------

AXE = Path(__file__).resolve().parents[2] / ".clients/site/node_modules/axe-core/axe.min.js"
PAGES = {  # name: path below the site, and what must be on it
    "home": ("", "Install this registry"),
    "skill": ("skills/deploy-helper/", "npx skills add"),
    "reference": ("skills/hostile/_files/references/REFERENCE.md/", "Reference"),
    "collection": ("collections/extraction/", "email"),
    "all": ("all/", "deploy-helper"),
    "lint": ("lint/", "By rule"),
    "lint-rule": ("lint/rules/B704/", "hostile"),
    "memory": ("memory/", "Always use pnpm"),
    "search": ("search/?q=deploy", "deploy-helper"),
}


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> Path:
    """Screenshots of every page at both widths, kept with the test run's temporary files."""
    folder = tmp_path_factory.getbasetemp() / "artifacts" / "site-browser"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def page_errors(browser: Browser) -> list[str]:
    """Console errors, uncaught exceptions and CSP reports of the page loaded last."""
    browser.js("new Promise(r => setTimeout(r, 200))")
    out = []
    for ev in browser.events:
        method, params = ev.get("method"), ev.get("params", {})
        if method == "Log.entryAdded" and params["entry"].get("level") == "error":
            out.append(params["entry"].get("text", ""))
        elif method == "Runtime.exceptionThrown":
            out.append(json.dumps(params.get("exceptionDetails", {}))[:300])
        elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            out.append(" ".join(str(a.get("value", "")) for a in params.get("args", ())))
    return out + browser.csp_violations()


@pytest.mark.parametrize("width", [1400, 390])
def test_every_page_works_fits_and_has_no_error(site, artifacts, width):
    """Home, a skill, a reference, a collection, the catalog, the lint report, memory and search:
    no console error or CSP violation, nothing wider than the window, a screenshot of each."""
    import base64

    browser, base = site
    browser.call("Emulation.setDeviceMetricsOverride", width=width, height=900, deviceScaleFactor=1, mobile=width < 500)
    try:
        for name, (path, expected) in PAGES.items():
            browser.goto(base + path)
            browser.wait_for(f"document.body.innerText.includes({json.dumps(expected)})")
            assert page_errors(browser) == [], name
            overflow = browser.js("document.documentElement.scrollWidth - window.innerWidth")
            assert overflow <= 0, f"{name} is {overflow} px wider than {width} px"
            shot = browser.call("Page.captureScreenshot", format="png")["data"]
            (artifacts / f"{name}-{width}.png").write_bytes(base64.b64decode(shot))
    finally:
        browser.call("Emulation.clearDeviceMetricsOverride")


def test_accessibility_without_serious_violations(site):
    """axe-core (from npm, tests/setup/site.sh) run inside each page: nothing serious or critical."""
    if not AXE.is_file():
        pytest.skip("axe-core is not installed (tests/setup/site.sh installs it from npm)")
    browser, base = site
    source = AXE.read_text(encoding="utf-8")
    for name, (path, expected) in PAGES.items():
        browser.goto(base + path)
        browser.wait_for(f"document.body.innerText.includes({json.dumps(expected)})")
        browser.js(source + ";0")  # (DevTools evaluation: not a script of the page, so the CSP allows it)
        found = browser.js("axe.run(document, {resultTypes: ['violations']}).then(r => r.violations"
                           ".filter(v => v.impact === 'serious' || v.impact === 'critical')"
                           ".map(v => v.id + ': ' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', ')))")
        assert found == [], (name, found)


def test_every_internal_link_resolves(site):
    """Every link and asset of every page of the site (crawled from the home page) answers 200."""
    from html.parser import HTMLParser
    from urllib.parse import urljoin, urlsplit
    from urllib.request import urlopen

    _, base = site

    class Links(HTMLParser):
        def __init__(self):
            super().__init__()
            self.found: list[str] = []

        def handle_starttag(self, tag, attrs):
            for key, value in attrs:
                if key in ("href", "src") and value and not value.startswith(("#", "mailto:")):
                    self.found.append(value)

    seen, queue, broken = set(), [base], []
    while queue:
        url = queue.pop()
        if url in seen:
            continue
        seen.add(url)
        try:
            with urlopen(url, timeout=10) as r:
                kind, body = r.headers.get("content-type", ""), r.read()
        except OSError as exc:
            broken.append(f"{url}: {exc}")
            continue
        if not kind.startswith("text/html") or "/api/" in url:
            continue
        parser = Links()
        parser.feed(body.decode("utf-8"))
        for link in parser.found:
            target = urljoin(url, link).split("#")[0]
            if urlsplit(target).netloc == urlsplit(base).netloc and target not in seen:
                queue.append(target)
    assert broken == []
    assert len(seen) > 40  # (the crawl reached the skill, collection, lint and memory pages)


def test_header_search_answers_while_typing_with_snippets_and_highlights(site):
    browser, base = site
    browser.goto(base + "collections/")
    browser.js("""(() => { const i = document.getElementById('skillc-qs-input'); i.focus();
        for (const ch of 'kubectl') { i.value += ch; i.dispatchEvent(new Event('input', {bubbles: true})); } })()""")
    first = browser.wait_for("(() => { const a = document.querySelector('#skillc-qs-results .skillc-hit a');"
                             " return a ? [a.textContent, a.href] : null })()")
    assert first == ["deploy-helper", base + "skills/deploy-helper/"]
    assert not browser.js("document.getElementById('skillc-qs-results').hidden")
    # One hit: no "More results" button is shown.
    assert browser.js("getComputedStyle(document.querySelector('#skillc-qs-results .skillc-more')).display") == "none"
    # A term found in the description is highlighted in its snippet.
    browser.js("""(() => { const i = document.getElementById('skillc-qs-input'); i.value = 'production';
        i.dispatchEvent(new Event('input', {bubbles: true})); })()""")
    marks = browser.wait_for("(() => { const m = [...document.querySelectorAll('#skillc-qs-results .skillc-hit__snippet mark')];"
                             " return m.length ? m.map(x => x.textContent) : null })()")
    assert marks == ["production"]
    assert page_errors(browser) == []


def test_search_ranks_as_skillc_search_does_and_pages_every_hit(site, tmp_path):
    """The site's ranking is `skillc search`'s (same index, same reader arithmetic), all of it: the
    Search page shows every hit a page at a time, never a silent cap."""
    browser, base = site
    query = "skills extract deploy use the"
    r = run_skillc("search", base, query, "--top-k", "100", "--json")
    assert r.returncode == 0, r.stderr
    expected = [hit["id"] for hit in json.loads(r.stdout)["results"]]
    assert len(expected) >= 5
    browser.goto(base + "search/?q=" + query.replace(" ", "%20"))
    browser.wait_for("document.querySelectorAll('.skillc-search-skills .skillc-hit').length || null")
    for _ in range(10):  # "More results" until every hit is shown
        more = browser.js("(() => { const b = document.querySelector('.skillc-search-skills .skillc-more');"
                          " if (!b || b.hidden) return false; b.click(); return true })()")
        if not more:
            break
        browser.js("new Promise(r => setTimeout(r, 150))")
    shown = browser.js("[...document.querySelectorAll('.skillc-search-skills .skillc-hit__id')].map(e => e.textContent.trim())")
    assert shown == expected


def test_catalog_filters_and_sorts_without_a_server(site):
    browser, base = site
    browser.goto(base + "all/")
    browser.wait_for("!document.getElementById('skillc-facets').hidden")
    browser.js("""(() => { const s = document.getElementById('skillc-f-collection'); s.value = 'extraction';
        s.dispatchEvent(new Event('input', {bubbles: true})); })()""")
    names = browser.wait_for("(() => { const r = document.getElementById('skillc-f-results');"
                             " return r.hidden ? null : [...r.querySelectorAll('li strong a')].map(a => a.textContent) })()")
    assert names == ["email", "diagnosis"]  # the collection and below, by ID
    browser.js("""(() => { const s = document.getElementById('skillc-f-lint'); s.value = 'warning';
        document.getElementById('skillc-f-collection').value = '';
        s.dispatchEvent(new Event('input', {bubbles: true})); })()""")
    names = browser.wait_for("(() => { const r = [...document.querySelectorAll('#skillc-f-results li strong a')]"
                             ".map(a => a.textContent); return r.includes('hostile') ? r : null })()")
    assert "deploy-helper" not in names
    assert page_errors(browser) == []


def test_dark_mode_follows_the_system_and_toggles(site):
    browser, base = site
    browser.call("Emulation.setEmulatedMedia", features=[{"name": "prefers-color-scheme", "value": "dark"}])
    try:
        browser.goto(base)
        assert browser.js("getComputedStyle(document.body).backgroundColor") != "rgb(255, 255, 255)"
        assert browser.js("document.body.getAttribute('data-md-color-media')") == "(prefers-color-scheme)"
    finally:
        browser.call("Emulation.setEmulatedMedia", features=[{"name": "prefers-color-scheme", "value": "light"}])
    browser.goto(base)
    assert browser.js("getComputedStyle(document.body).backgroundColor") == "rgb(255, 255, 255)"
    assert browser.js("document.querySelectorAll('form[data-md-component=palette] label').length") == 3
