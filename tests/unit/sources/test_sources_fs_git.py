"""Filesystem and git sources (real git, bare repositories created by the tests)."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import run_skillc, write_skill
from skillc.resolve_types import Repository, Tier
from skillc.sources import SourceError, open_source
from skillc.validate.lint import LintConfig


def fs_repo(path: Path, **kw) -> Repository:
    return Repository("fs", "filesystem", str(path), Tier.PROJECT, 250, **kw)


def listing_of(repo: Repository, cache: Path):
    return open_source(repo, cache_dir=cache, lint=LintConfig()).skills()


def test_filesystem_ids_files_and_collections(tmp_path, repo):
    write_skill(repo, "skills/extraction/email")
    write_skill(repo, "skills/extraction/medical/diagnosis")
    (repo / "skills/extraction/COLLECTION.md").write_text("Entity extraction\n")
    (repo / "skills/extraction/email/scripts").mkdir()
    (repo / "skills/extraction/email/scripts/parse.py").write_text("print('x')\n")
    (repo / "skills/extraction/email/.DS_Store").write_bytes(b"junk")
    (repo / "skills/extraction/email/node_modules/x").mkdir(parents=True)
    (repo / "skills/extraction/email/node_modules/x/i.js").write_text("1")
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    os.symlink(outside, repo / "skills/extraction/email/leak.txt")
    os.symlink("scripts/parse.py", repo / "skills/extraction/email/alias.py")
    listing = listing_of(fs_repo(repo, skills_root="skills"), tmp_path / "cache")
    assert [s.id for s in listing.skills] == ["extraction/email", "extraction/medical/diagnosis"]
    email = listing.skills[0]
    assert [f.path for f in email.files] == ["SKILL.md", "alias.py", "scripts/parse.py"]
    assert email.files[0].sha256 == email.document.sha256 and email.files[2].size == 11
    assert listing.collection_docs["extraction"] == "Entity extraction"
    assert listing.input.location == str(repo)


def test_nested_skill_files_are_not_listed_twice(tmp_path, repo):
    write_skill(repo, "outer")
    write_skill(repo, "outer/inner")
    (repo / "outer/inner/ref.md").write_text("x")
    listing = listing_of(fs_repo(repo), tmp_path / "c")
    outer, inner = listing.skills
    assert (outer.id, inner.id) == ("outer", "outer/inner")
    assert [f.path for f in outer.files] == ["SKILL.md"]
    assert [f.path for f in inner.files] == ["SKILL.md", "ref.md"]


def test_repository_that_is_one_skill_is_named_by_its_folder(tmp_path):
    write_skill(tmp_path, "pdf-tools")
    listing = listing_of(fs_repo(tmp_path / "pdf-tools"), tmp_path / "c")
    assert [s.id for s in listing.skills] == ["pdf-tools"]


def test_include_exclude_globs(tmp_path, repo):
    for rel in ("a/x", "a/y", "b/z"):
        write_skill(repo, rel)
    listing = listing_of(fs_repo(repo, include=("a",), exclude=("a/y",)), tmp_path / "c")
    assert [s.id for s in listing.skills] == ["a/x"]


def test_missing_path_and_skills_root_are_clear_errors(tmp_path, repo):
    with pytest.raises(SourceError, match="is not a directory"):
        listing_of(fs_repo(tmp_path / "nope"), tmp_path / "c")
    with pytest.raises(SourceError, match="skills_root 'skillz' not found"):
        listing_of(fs_repo(repo, skills_root="skillz"), tmp_path / "c")
    (repo / "README.md").write_text("# not a folder\n")
    with pytest.raises(SourceError, match="skills_root 'README.md' is a file, not a folder,"):
        listing_of(fs_repo(repo, skills_root="README.md"), tmp_path / "c")


def test_empty_repository_is_a_warning(tmp_path, repo):
    listing = listing_of(fs_repo(repo), tmp_path / "c")
    assert listing.skills == () and [d.code for d in listing.diagnostics] == ["R107"]


# ---------------------------------------------------------------- git

def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def remote(tmp_path: Path) -> tuple[Path, Path]:
    """A bare repository with skills under skills/, a tag v1 and a later commit on main."""
    work = tmp_path / "work"
    work.mkdir()
    git("init", "-q", "-b", "main", cwd=work)
    write_skill(work, "skills/tools/pdf", description="Version one. Use when asked.")
    git("add", ".", cwd=work)
    git("commit", "-q", "-m", "one", cwd=work)
    git("tag", "-a", "v1", "-m", "v1", cwd=work)
    write_skill(work, "skills/tools/pdf", description="Version two. Use when asked.")
    write_skill(work, "skills/tools/csv")
    git("add", ".", cwd=work)
    git("commit", "-q", "-m", "two", cwd=work)
    bare = tmp_path / "remote.git"
    git("clone", "-q", "--bare", str(work), str(bare), cwd=tmp_path)
    return work, bare


def git_repo(url: str, ref: str = "main", ref_type: str = "branch", **kw) -> Repository:
    return Repository("company", "git", url, Tier.PROJECT, 250, git_ref=ref, ref_type=ref_type,
                      skills_root=kw.pop("skills_root", "skills"), **kw)


def test_git_branch_tag_and_commit(tmp_path, remote):
    work, bare = remote
    url = bare.as_uri()
    cache = tmp_path / "cache"
    head = git("rev-parse", "HEAD", cwd=work)
    first = git("rev-parse", "HEAD~1", cwd=work)

    branch = listing_of(git_repo(url), cache)
    assert [s.id for s in branch.skills] == ["tools/csv", "tools/pdf"]
    assert branch.input.resolved == head and branch.input.type == "git"
    assert "Version two" in branch.skills[1].description

    tag = listing_of(git_repo(url, "v1", "tag"), cache)
    assert [s.id for s in tag.skills] == ["tools/pdf"] and tag.input.resolved == first
    assert "Version one" in tag.skills[0].description

    commit = listing_of(git_repo(url, first, "commit"), cache)
    assert commit.input.resolved == first
    short = listing_of(git_repo(url, first[:10], "commit"), cache)
    assert short.input.resolved == first
    clones = sorted(p.name for p in (cache / "git").iterdir() if p.is_dir())
    assert len(clones) == 4  # one checkout per (url, ref)
    from skillc.sources.git import GitSource

    checkout = GitSource(git_repo(url), cache_dir=cache, lint=LintConfig()).checkout
    shallow = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], capture_output=True, text=True,
                             cwd=checkout).stdout.strip()
    assert shallow == "true"  # a branch is fetched with --depth 1


def test_git_branch_refresh_after_refresh_seconds(tmp_path, remote):
    work, bare = remote
    cache = tmp_path / "cache"
    repo = git_repo(bare.as_uri(), refresh_seconds=0)
    first = listing_of(repo, cache)
    write_skill(work, "skills/tools/new")
    git("add", ".", cwd=work)
    git("commit", "-q", "-m", "three", cwd=work)
    git("push", "-q", str(bare), "main", cwd=work)
    second = listing_of(repo, cache)
    assert second.input.resolved != first.input.resolved and "tools/new" in [s.id for s in second.skills]
    cached = listing_of(git_repo(bare.as_uri(), refresh_seconds=3600), tmp_path / "cache2")
    git("commit", "-q", "--allow-empty", "-m", "four", cwd=work)
    git("push", "-q", str(bare), "main", cwd=work)
    again = listing_of(git_repo(bare.as_uri(), refresh_seconds=3600), tmp_path / "cache2")
    assert again.input.resolved == cached.input.resolved  # fresh cache: not fetched again


def test_git_stale_cache_is_used_when_the_remote_disappears(tmp_path, remote):
    _, bare = remote
    repo = git_repo(bare.as_uri(), refresh_seconds=0)
    first = listing_of(repo, tmp_path / "cache")
    bare.rename(tmp_path / "gone.git")
    second = listing_of(repo, tmp_path / "cache")
    assert second.input.resolved == first.input.resolved
    assert [d.code for d in second.diagnostics] == ["R105"]


def test_git_errors(tmp_path, remote):
    _, bare = remote
    cache = tmp_path / "cache"
    with pytest.raises(SourceError, match="cannot fetch") as exc:
        listing_of(git_repo((tmp_path / "missing.git").as_uri()), cache)
    assert "company" in str(exc.value)
    with pytest.raises(SourceError, match="branch 'nope' not found"):
        listing_of(git_repo(bare.as_uri(), "nope"), cache)
    with pytest.raises(SourceError, match="tag 'v9' not found"):
        listing_of(git_repo(bare.as_uri(), "v9", "tag"), cache)
    with pytest.raises(SourceError, match="commit 'deadbeef' not found"):
        listing_of(git_repo(bare.as_uri(), "deadbeef", "commit"), cache)
    with pytest.raises(SourceError, match="skills_root 'nothing' not found"):
        listing_of(git_repo(bare.as_uri(), skills_root="nothing"), cache)
    assert not [p for p in (cache / "git").iterdir() if p.name.startswith(".")]  # no half-made clone left


def test_a_ref_or_skills_root_that_names_nothing_says_where_it_was_declared(tmp_path, remote):
    """A git_ref or skills_root typo is a configuration problem: its error names the file and line
    of the repository, as a filesystem repository's missing path does."""
    _, bare = remote
    where = f"{tmp_path / 'skills.toml'}:3"
    for ref, ref_type, root, words in (("nope", "branch", "skills", "branch 'nope' not found"),
                                       ("v9", "tag", "skills", "tag 'v9' not found"),
                                       ("deadbeef", "commit", "skills", "commit 'deadbeef' not found"),
                                       ("main", "branch", "nothing", "skills_root 'nothing' not found")):
        with pytest.raises(SourceError, match=words) as exc:
            listing_of(git_repo(bare.as_uri(), ref, ref_type, skills_root=root, config_file=where), tmp_path / "c")
        assert f"(declared at {where})" in str(exc.value), str(exc.value)


def test_git_token_never_written_or_printed(tmp_path, remote):
    _, bare = remote
    token = "tok_0123456789abcdef"
    cache = tmp_path / "cache"
    listing = listing_of(git_repo(bare.as_uri(), auth_token=token), cache)
    assert listing.skills
    for path in cache.rglob("*"):
        if path.is_file():
            assert token.encode() not in path.read_bytes(), path
    with pytest.raises(SourceError) as exc:
        listing_of(git_repo(f"https://user:{token}@127.0.0.1:9/x.git", auth_token=token), cache)
    assert token not in str(exc.value)


def test_git_through_the_cli_config(tmp_path, remote):
    """A skills.toml git repository is read by load_build_config + open_source end to end."""
    from skillc.config.build import load_build_config

    _, bare = remote
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "skills.toml").write_text(
        f'[[repositories]]\nname = "company"\ntype = "git"\nurl = "{bare.as_uri()}"\nskills_root = "skills"\n'
        'git_ref = "v1"\nref_type = "tag"\n')
    cfg = load_build_config([], None, cwd=proj, home=tmp_path / "home", env={})
    listing = open_source(cfg.repositories[0], cache_dir=tmp_path / "c", lint=cfg.lint).skills()
    assert [s.id for s in listing.skills] == ["tools/pdf"]


def test_repositories_on_one_url_and_branch_read_one_commit(tmp_path, remote):
    """Two repositories on one url and branch share a checkout.  With different refresh_seconds the
    first (still fresh) listed the cached commit, then the second fetched the moved branch into the
    same folder: the build failed ("… changed while the build was reading it") naming a cache file.
    Both read one commit, fetched by the shorter refresh_seconds."""
    work, bare = remote
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "skills.toml").write_text(
        f'[[repositories]]\nname = "pdf"\ntype = "git"\nurl = "{bare.as_uri()}"\nskills_root = "skills"\n'
        'include = ["tools/pdf"]\n'
        f'[[repositories]]\nname = "csv"\ntype = "git"\nurl = "{bare.as_uri()}"\nskills_root = "skills"\n'
        'include = ["tools/csv"]\nrefresh_seconds = 0\n')
    env = {"SKILLC_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path / "home")}
    assert run_skillc("build", "--out", "out", "-q", cwd=proj, env=env).returncode == 0
    write_skill(work, "skills/tools/pdf", description="Version three. Use when asked.")
    (work / "skills/tools/pdf/notes.md").write_text("new notes\n")
    git("add", ".", cwd=work)
    git("commit", "-q", "-m", "three", cwd=work)
    git("push", "-q", str(bare), "main", cwd=work)
    r = run_skillc("build", "--out", "out", "-q", cwd=proj, env=env)
    assert r.returncode == 0, r.stderr
    manifest = json.loads((proj / "out/api/manifest.json").read_text())
    head = git("rev-parse", "HEAD", cwd=work)
    assert [(i["repository"], i["resolved"]) for i in manifest["inputs"]] == [("pdf", head), ("csv", head)]
    assert (proj / "out/api/files/tools/pdf/notes.md").read_text() == "new notes\n"


def test_no_cache_leaves_no_clone_behind(tmp_path, remote):
    """`skillc build --no-cache` of a git repository fetches into a temporary folder it removes."""
    _, bare = remote
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "skills.toml").write_text(
        f'include_embedded = false\n[[repositories]]\nname = "company"\ntype = "git"\nurl = "{bare.as_uri()}"\n'
        'skills_root = "skills"\n')
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir()
    r = run_skillc("build", "--out", "out", "--no-cache", "--no-site", cwd=proj,
                   env={"TMPDIR": str(tmpdir), "HOME": str(tmp_path / "home")})
    assert r.returncode == 0, r.stderr
    assert json.loads((proj / "out/api/skills.json").read_text())["skills"][0]["id"] == "tools/csv"
    assert list(tmpdir.iterdir()) == []


def test_a_short_token_is_masked_only_where_it_stands_alone():
    """Masking every "x" would garble git's message ("e***ists"); a real token is still masked."""
    from skillc.sources.git import GitSource

    def scrub(token: str, text: str) -> str:
        source = GitSource.__new__(GitSource)
        source.repository = git_repo("https://example.invalid/r.git", auth_token=token)
        return source._scrub(text)

    assert scrub("x", "fatal: repository does not exist (token x)") == "fatal: repository does not exist (token ***)"
    long = "ghp_" + "a1" * 18
    assert long not in scrub(long, f"fatal: auth {long} at https://u:{long}@host/r.git failed")


def test_a_commit_pin_is_never_redirected_by_a_tag_of_that_name(tmp_path, remote):
    """git prefers a ref named like an abbreviated hash over the hash: a commit pin reads ids alone."""
    work, bare = remote
    head, first = git("rev-parse", "HEAD", cwd=work), git("rev-parse", "HEAD~1", cwd=work)
    git("tag", head[:10], first, cwd=work)  # a tag named like HEAD's hash, pointing at the first commit
    git("tag", "abcdef1234", first, cwd=work)  # and one named like no commit at all
    git("push", "-q", "--tags", str(bare), cwd=work)
    pinned = listing_of(git_repo(bare.as_uri(), head[:10], "commit"), tmp_path / "cache")
    assert pinned.input.resolved == head
    with pytest.raises(SourceError, match="commit 'abcdef1234' not found"):
        listing_of(git_repo(bare.as_uri(), "abcdef1234", "commit"), tmp_path / "cache")
    # a cache that holds another commit than the pin (resolved through the tag before) is not used
    from skillc.sources.git import GitSource

    source = GitSource(git_repo(bare.as_uri(), head[:10], "commit"), cache_dir=tmp_path / "cache", lint=LintConfig())
    state_file = source.checkout / ".git" / "skillc-state.json"
    state_file.write_text(json.dumps({**json.loads(state_file.read_text()), "commit": first}))
    assert listing_of(git_repo(bare.as_uri(), head[:10], "commit"), tmp_path / "cache").input.resolved == head


class _SmartHttp(http.server.BaseHTTPRequestHandler):
    """git's smart HTTP protocol (git http-backend as CGI), answering 401 without the expected
    Authorization header."""

    root: Path
    authorization: str
    seen: list

    def log_message(self, *args):
        pass

    def _cgi(self):
        type(self).seen.append(self.headers.get("Authorization"))
        if self.headers.get("Authorization") != self.authorization:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        env = {"PATH": os.environ["PATH"], "GIT_PROJECT_ROOT": str(self.root), "GIT_HTTP_EXPORT_ALL": "1",
               "REQUEST_METHOD": self.command, "PATH_INFO": path, "QUERY_STRING": query,
               "CONTENT_TYPE": self.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(body)),
               "REMOTE_USER": "u", "REMOTE_ADDR": "127.0.0.1"}
        out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True, check=True).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        headers = [line.split(":", 1) for line in head.decode().split("\r\n") if ":" in line]
        status = next((int(v.split()[0]) for k, v in headers if k.lower() == "status"), 200)
        self.send_response(status)
        for k, v in headers:
            if k.lower() != "status":
                self.send_header(k, v.strip())
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = _cgi


def test_credentials_in_a_git_url_reach_git_only_in_its_environment(tmp_path, remote, monkeypatch):
    """http://user:secret@host/… : the secret authenticates (a real smart-HTTP server on loopback)
    but is never in .git/config, the cache, git's command line or a message."""
    import base64
    import threading

    _, bare = remote
    secret = "s3cr3t-0123456789"
    handler = type("H", (_SmartHttp,), {"root": bare.parent, "seen": [],
                                        "authorization": "Basic " + base64.b64encode(f"bob:{secret}".encode()).decode()})
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    shim = tmp_path / "bin"
    shim.mkdir()
    log = tmp_path / "argv.log"
    (shim / "git").write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {log}\nexec {shutil.which("git")} "$@"\n')
    (shim / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    try:
        url = f"http://bob:{secret}@127.0.0.1:{srv.server_address[1]}/{bare.name}"
        listing = listing_of(git_repo(url), tmp_path / "cache")
        assert [s.id for s in listing.skills] == ["tools/csv", "tools/pdf"]
        assert log.read_text() and secret not in log.read_text()
        for path in (tmp_path / "cache").rglob("*"):
            assert secret not in str(path)
            if path.is_file():
                assert secret.encode() not in path.read_bytes(), path
        assert handler.seen and all(seen == handler.authorization for seen in handler.seen)  # sent up front
        handler.authorization = "Basic nobody"  # refused: the message names the url without the secret
        with pytest.raises(SourceError) as exc:
            listing_of(git_repo(url, refresh_seconds=0, ref="other"), tmp_path / "cache")
        assert secret not in str(exc.value)
    finally:
        srv.shutdown()
        srv.server_close()


def test_a_relative_git_url_resolves_against_the_configuration_files_folder(tmp_path, remote):
    """`url = "../remote.git"` is a local path like `path`: read from the config's folder, not from
    the cache folder git runs in; scp-like and scheme urls are left alone."""
    from skillc.config.build import load_build_config

    _, bare = remote
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "skills.toml").write_text(
        '[[repositories]]\nname = "company"\ntype = "git"\nurl = "../remote.git"\nskills_root = "skills"\n'
        '[[repositories]]\nname = "scp"\ntype = "git"\nurl = "git@example.invalid:org/r.git"\n'
        '[[repositories]]\nname = "https"\ntype = "git"\nurl = "https://example.invalid/../r.git"\n')
    cfg = load_build_config([], "proj/skills.toml", cwd=tmp_path, home=tmp_path / "home", env={})
    company, scp, https = cfg.repositories
    assert company.location == str(bare)
    assert scp.location == "git@example.invalid:org/r.git" and https.location == "https://example.invalid/../r.git"
    listing = open_source(company, cache_dir=tmp_path / "c", lint=cfg.lint).skills()
    assert [s.id for s in listing.skills] == ["tools/csv", "tools/pdf"]


def test_a_deleted_branch_is_an_error_warm_as_cold(tmp_path, remote):
    """R105's cached fallback is for an unreachable remote; one that answers the branch is gone fails
    the build whether or not a checkout is cached."""
    work, bare = remote
    git("push", "-q", str(bare), "main:feature", cwd=work)
    repo = git_repo(bare.as_uri(), "feature", refresh_seconds=0)
    assert listing_of(repo, tmp_path / "cache").skills
    git("push", "-q", str(bare), ":feature", cwd=work)
    with pytest.raises(SourceError, match="branch 'feature' not found"):
        listing_of(repo, tmp_path / "cold")
    with pytest.raises(SourceError, match="branch 'feature' not found"):
        listing_of(repo, tmp_path / "cache")


def test_a_remote_that_hangs_falls_back_to_the_cached_commit(tmp_path, remote, monkeypatch):
    """A server that accepts the connection and never answers is unreachable too: R105 and the
    cached checkout (GIT_TIMEOUT shortened so the test does not wait ten minutes)."""
    import threading

    import skillc.sources.git as git_source

    _, bare = remote
    hang, release = threading.Event(), threading.Event()

    class Hanging(_SmartHttp):
        def _cgi(self):
            if hang.is_set():
                release.wait(60)  # (never answers while the test runs)
                return
            super()._cgi()

        do_GET = do_POST = _cgi

    handler = type("H", (Hanging,), {"root": bare.parent, "seen": [], "authorization": None})
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{srv.server_address[1]}/{bare.name}"
        first = listing_of(git_repo(url, refresh_seconds=0), tmp_path / "cache")
        assert [s.id for s in first.skills] == ["tools/csv", "tools/pdf"]
        hang.set()
        monkeypatch.setattr(git_source, "GIT_TIMEOUT", 2)
        second = listing_of(git_repo(url, refresh_seconds=0), tmp_path / "cache")
        assert [d.code for d in second.diagnostics] == ["R105"] and "timed out" in second.diagnostics[0].message
        assert [s.id for s in second.skills] == ["tools/csv", "tools/pdf"]
    finally:
        release.set()
        srv.shutdown()
        srv.server_close()


def test_a_checkout_holds_the_committed_bytes(tmp_path, remote, monkeypatch):
    """One commit, one bundle: neither the repository's `.gitattributes` (eol=crlf, ident) nor the
    user's `core.autocrlf` changes what is published."""
    work, bare = remote
    (work / ".gitattributes").write_text("* text eol=crlf\n*.txt ident\n")
    (work / "skills/tools/pdf/notes.txt").write_text("$Id$\nline two\n")
    git("add", ".", cwd=work)
    git("commit", "-q", "-m", "attributes", cwd=work)
    git("push", "-q", str(bare), "main", cwd=work)
    committed = subprocess.run(["git", "show", "HEAD:skills/tools/pdf/SKILL.md"], cwd=work, capture_output=True,
                               check=True).stdout
    assert b"\r" not in committed
    user = tmp_path / "gitconfig"
    user.write_text("[core]\n\tautocrlf = true\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(user))
    listing = listing_of(git_repo(bare.as_uri()), tmp_path / "cache")
    files = {f.path: Path(f.source_path).read_bytes() for f in listing.skills[1].files}
    assert files["SKILL.md"] == committed
    assert files["notes.txt"] == b"$Id$\nline two\n"


def test_a_checkout_runs_no_filter_driver_of_the_users_git_config(tmp_path, remote, monkeypatch):
    """Git LFS (`filter=lfs` in .gitattributes, the driver in ~/.gitconfig) and any smudge filter
    changed the published bytes with the machine: the real object where git-lfs is installed (and
    the remote reachable), the pointer elsewhere, and a `required` driver that is not installed
    failed the checkout.  The committed bytes (the pointer) are published everywhere."""
    work, bare = remote
    (work / ".gitattributes").write_text("*.txt filter=lfs\n*.md filter=up\n")
    pointer = b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"0" * 64 + b"\nsize 12345\n"
    (work / "skills/tools/pdf/big.txt").write_bytes(pointer)
    git("add", ".", cwd=work)
    git("commit", "-q", "-m", "lfs", cwd=work)
    git("push", "-q", str(bare), "main", cwd=work)
    committed = subprocess.run(["git", "show", "HEAD:skills/tools/pdf/SKILL.md"], cwd=work, capture_output=True,
                               check=True).stdout
    user = tmp_path / "gitconfig"
    user.write_text("[filter \"up\"]\n\tsmudge = tr a-z A-Z\n"
                    "[filter \"lfs\"]\n\tsmudge = git-lfs-not-installed smudge %f\n\trequired = true\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(user))
    listing = listing_of(git_repo(bare.as_uri()), tmp_path / "cache")
    files = {f.path: Path(f.source_path).read_bytes() for f in listing.skills[1].files}
    assert files["SKILL.md"] == committed
    assert files["big.txt"] == pointer


def test_a_checkout_runs_no_hook_of_the_users_git_config(tmp_path, remote, monkeypatch):
    """A `core.hooksPath` in the user's ~/.gitconfig (a secrets scanner, a team's hooks) ran its
    post-checkout hook in skillc's cache checkout: a program the configuration never named, free to
    change what is published (here it appended to SKILL.md)."""
    work, bare = remote
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    ran = tmp_path / "hook-ran"
    for name in ("post-checkout", "reference-transaction"):
        (hooks / name).write_text(f"#!/bin/sh\ntouch {ran}\necho HOOKED >> skills/tools/pdf/SKILL.md\nexit 0\n")
        (hooks / name).chmod(0o755)
    user = tmp_path / "gitconfig"
    user.write_text(f"[core]\n\thooksPath = {hooks}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(user))
    listing = listing_of(git_repo(bare.as_uri(), refresh_seconds=0), tmp_path / "cache")
    listing_of(git_repo(bare.as_uri(), refresh_seconds=0), tmp_path / "cache")  # (the refresh fetch too)
    pdf = listing.skills[1]
    committed = subprocess.run(["git", "show", "HEAD:skills/tools/pdf/SKILL.md"], cwd=work, capture_output=True,
                               check=True).stdout
    assert Path(pdf.files[0].source_path).read_bytes() == committed
    assert not ran.exists()


def test_a_committed_link_is_a_link_whatever_the_users_core_symlinks(tmp_path, remote, monkeypatch):
    """`core.symlinks = false` in the user's ~/.gitconfig (a setting carried over from Windows) checked
    a committed link out as a file holding its target's name: `alias.md` published `real.md`
    on that machine and the real file's text everywhere else."""
    work, bare = remote
    (work / "skills/tools/pdf/real.md").write_text("real content\n")
    os.symlink("real.md", work / "skills/tools/pdf/alias.md")
    git("add", ".", cwd=work)
    git("commit", "-q", "-m", "link", cwd=work)
    git("push", "-q", str(bare), "main", cwd=work)
    user = tmp_path / "gitconfig"
    user.write_text("[core]\n\tsymlinks = false\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(user))
    listing = listing_of(git_repo(bare.as_uri()), tmp_path / "cache")
    files = {f.path: Path(f.source_path).read_bytes() for f in listing.skills[1].files}
    assert files["alias.md"] == files["real.md"] == b"real content\n"


def test_a_damaged_cache_is_cloned_again_when_the_branch_is_refreshed(tmp_path, remote):
    """A cached checkout that lost its HEAD fails the refresh fetch and the checkout of the cached
    commit: the branch is cloned again (not an internal error, not an R105 on a working remote)."""
    work, bare = remote
    repo = git_repo(bare.as_uri(), refresh_seconds=0)
    source = open_source(repo, cache_dir=tmp_path / "cache", lint=LintConfig())
    assert source.skills().skills
    (source.checkout / ".git" / "HEAD").unlink()
    again = listing_of(repo, tmp_path / "cache")
    assert [s.id for s in again.skills] == ["tools/csv", "tools/pdf"] and not again.diagnostics
    assert again.input.resolved == git("rev-parse", "HEAD", cwd=work)


def test_a_git_hooks_environment_never_reaches_the_users_repository(tmp_path, remote, monkeypatch):
    """`skillc build` run from a git hook (pre-commit, post-checkout) inherits GIT_DIR, GIT_WORK_TREE,
    GIT_INDEX_FILE for the user's repository: the cache's init, checkout and clean must not follow them
    (they added a remote to it, moved its HEAD, replaced its work tree, wrote its commit's index)."""
    _, bare = remote
    user = tmp_path / "user"
    user.mkdir()
    git("init", "-q", "-b", "main", cwd=user)
    (user / "mine.txt").write_text("mine\n")
    git("add", ".", cwd=user)
    git("commit", "-q", "-m", "mine", cwd=user)
    (user / "draft.txt").write_text("not committed yet\n")
    head = git("rev-parse", "HEAD", cwd=user)
    monkeypatch.setenv("GIT_DIR", str(user / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(user))
    monkeypatch.setenv("GIT_INDEX_FILE", str(user / ".git" / "index"))
    listing = listing_of(git_repo(bare.as_uri()), tmp_path / "cache")
    assert [s.id for s in listing.skills] == ["tools/csv", "tools/pdf"]
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(name)
    assert git("rev-parse", "HEAD", cwd=user) == head and git("remote", cwd=user) == ""
    assert git("status", "--porcelain", cwd=user) == "?? draft.txt"


def test_a_submodule_where_the_skills_are_is_named_not_silently_empty(tmp_path, remote):
    """git leaves a submodule an empty folder: its skills would be missing from the bundle with no
    word of it. R111 names the submodules in or above skills_root (not one elsewhere)."""
    work, bare = remote
    vendored = git("rev-parse", "HEAD", cwd=work)  # (any commit id stands for the submodule's)
    (work / ".gitmodules").write_text('[submodule "vendor"]\n\tpath = skills/vendor\n\turl = https://example.invalid/v.git\n'
                                      '[submodule "docs"]\n\tpath = docs/theme\n\turl = https://example.invalid/t.git\n')
    git("update-index", "--add", "--cacheinfo", f"160000,{vendored},skills/vendor", cwd=work)
    git("update-index", "--add", "--cacheinfo", f"160000,{vendored},docs/theme", cwd=work)
    git("add", ".gitmodules", cwd=work)
    git("commit", "-q", "-m", "submodules", cwd=work)
    git("push", "-q", str(bare), "main", cwd=work)
    listing = listing_of(git_repo(bare.as_uri()), tmp_path / "cache")
    assert [s.id for s in listing.skills] == ["tools/csv", "tools/pdf"]
    (warning,) = [d for d in listing.diagnostics if d.code == "R111"]
    assert "'skills/vendor'" in warning.message and "docs/theme" not in warning.message
    whole = listing_of(git_repo(bare.as_uri(), skills_root=""), tmp_path / "cache2")
    (warning,) = [d for d in whole.diagnostics if d.code == "R111"]
    assert "'docs/theme'" in warning.message and "'skills/vendor'" in warning.message


@pytest.mark.parametrize("suffix", ["/.git", "/.git/", ".git", ""])
def test_a_git_repository_that_is_one_skill_is_named_by_its_url_without_dot_git(tmp_path, suffix):
    """Git's own rule names a clone of `.../pdf-tools/.git` `pdf-tools`; skillc took the empty last
    segment and fell back to the cache folder's name (`tmp_..._.git-5efcfb601b61`): an ID that
    changed with the machine and the cache, published as the skill's ID."""
    work = tmp_path / "pdf-tools"
    work.mkdir()
    git("init", "-q", "-b", "main", cwd=work)
    write_skill(tmp_path, "pdf-tools")
    git("add", ".", cwd=work)
    git("commit", "-q", "-m", "one", cwd=work)
    if suffix == ".git":
        shutil.move(work / ".git", tmp_path / "pdf-tools.git")  # a bare-style `pdf-tools.git`
        url = (tmp_path / "pdf-tools.git").as_uri()
    else:
        url = work.as_uri() + suffix
    listing = listing_of(git_repo(url, skills_root=""), tmp_path / "cache")
    assert [s.id for s in listing.skills] == ["pdf-tools"]
