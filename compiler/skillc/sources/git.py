"""Git repositories, through the real ``git`` program.

The repository is fetched into ``cache_dir/git/<sanitised url>-<hash>`` (one checkout per URL and
ref): a branch or a tag with ``--depth`` (default 1), a full commit id the same way (servers speaking
protocol v2 allow it), an abbreviated commit after a full fetch.  Tags and commits never change, so
they are fetched once; a branch is fetched again after ``refresh_seconds``, and if that fetch fails
the last checkout is used with an R105 warning when the remote cannot be reached (one that answers
that the ref is gone is an error, cached or not).  The resolved commit is recorded in
``SourceInput.resolved``.

Credentials go to git as an ``http.extraHeader`` through ``GIT_CONFIG_*`` environment variables:
never on a command line, never in ``.git/config``, never in a message (messages are scrubbed).

The checkout holds the committed bytes: no end-of-line conversion (``.gitattributes`` ``eol``/``text``,
the user's ``core.autocrlf``), ``ident`` expansion or ``working-tree-encoding``, so one commit gives
one bundle on every machine (``SourceInput.resolved`` names what is published).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.parse
from pathlib import Path

from ..model import Diagnostic
from ..parallel import child_dies_with_build
from ..resolve_types import STALE_SOURCE, SUBMODULE_NOT_FETCHED, Repository, SourceInput, SourceListing
from ..validate.lint import LintConfig
from .base import ReadItem, SourceError
from .filesystem import declared, display, list_directory, skills_root_of

GIT_TIMEOUT = 600
_STATE = "skillc-state.json"
# `.git/info/attributes` outranks every `.gitattributes` in the tree: check out the blobs as committed.
# `-filter` too: a smudge driver (Git LFS's, from the user's ~/.gitconfig) made the bytes depend on
# the machine (the real object where git-lfs is installed, the pointer elsewhere; a `required`
# driver that is missing failed the checkout), and it runs a program the configuration never named.
_COMMITTED_BYTES = "* -text -eol -ident -filter -working-tree-encoding\n"
# In the state file: a checkout made before the bytes were kept (1), or through a filter, a hook or
# `core.symlinks = false` (2), is made again.
_CHECKOUT_FORMAT = 3
# What `git rev-parse --local-env-vars` lists: a git hook (pre-commit, post-checkout…) exports them for
# the user's repository, and inherited they would point the cache's init, checkout and clean at it
# (its index, HEAD and work tree).
_REPOSITORY_ENV = ("GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
                   "GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE", "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE",
                   "GIT_INDEX_FILE", "GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE", "GIT_PREFIX",
                   "GIT_INTERNAL_SUPER_PREFIX", "GIT_SHALLOW_FILE", "GIT_COMMON_DIR")


class _Build:
    """The checkouts of the build under way (``one_commit_per_checkout``)."""

    def __init__(self, refresh: dict[Path, int]) -> None:
        self.refresh = refresh  # checkout -> the shortest refresh_seconds of the repositories sharing it
        self.commits: dict[Path, str] = {}  # checkout -> the commit synced for this build


_build: _Build | None = None


@contextlib.contextmanager
def one_commit_per_checkout(repositories, cache_dir: Path):
    """Within the block, the repositories on one url and ref (one checkout) read one commit.

    They share a folder: one still fresh listed the cached commit, then one with a shorter
    ``refresh_seconds`` fetched the moved branch into that folder under the files already listed
    (the build failed "changed while the build was reading it", or published two commits of one
    branch).  The first sync of a checkout decides for all, refreshing by the shortest
    ``refresh_seconds`` among them."""
    global _build
    refresh: dict[Path, int] = {}
    for repo in repositories:
        if repo.type == "git":
            checkout = GitSource(repo, cache_dir=cache_dir, lint=LintConfig()).checkout
            refresh[checkout] = min(refresh.get(checkout, repo.refresh_seconds), repo.refresh_seconds)
    saved, _build = _build, _Build(refresh)
    try:
        yield
    finally:
        _build = saved


def sanitise(text: str, limit: int = 60) -> str:
    text = re.sub(r"^[a-z+]+://", "", re.sub(r"(://)[^/@\s]+@", r"\1", text))
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_.")[:limit] or "repo"


def split_credentials(url: str) -> tuple[str, str | None]:
    """``(url without its user:password, "user:password")`` for an http(s) url (percent-decoded, as
    git would send them); other urls unchanged (ssh's ``git@`` is a login name, not a secret)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or "@" not in parts.netloc:
        return url, None
    userinfo, _, host = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    bare = urllib.parse.urlunsplit(parts._replace(netloc=host))
    return bare, f"{urllib.parse.unquote(user)}:{urllib.parse.unquote(password)}"


class GitSource:
    def __init__(self, repository: Repository, *, cache_dir: Path, lint: LintConfig) -> None:
        self.repository = repository
        self.cache_dir = cache_dir
        self.lint = lint
        # Credentials in the url reach git only as a header in its environment (``_env``), never
        # in .git/config, on a command line or in the cache folder's name.
        self.url, self.userinfo = split_credentials(repository.location)
        key = hashlib.sha256(f"{self.url}\0{repository.ref_type}\0{repository.git_ref}".encode()).hexdigest()
        self.checkout = cache_dir / "git" / f"{sanitise(self.url)}-{key[:12]}"

    # -------------------------------------------------------------- git plumbing

    def _env(self) -> dict[str, str]:
        env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GCM_INTERACTIVE": "never", "LC_ALL": "C"}
        for k in [k for k in env if k.startswith("GIT_CONFIG_KEY_") or k.startswith("GIT_CONFIG_VALUE_")
                  or k in _REPOSITORY_ENV]:
            del env[k]
        # No hooks: a `core.hooksPath` in the user's ~/.gitconfig ran its post-checkout (and
        # reference-transaction) hook in the cache checkout, a program the configuration never
        # named, free to change what is published.  Links checked out as links: a user's
        # `core.symlinks = false` made a committed link a file holding its target's name.
        config = [("core.hooksPath", os.devnull), ("core.symlinks", "true")]
        token = self.repository.auth_token
        if token:
            if self.repository.auth_header:
                header = f"{self.repository.auth_header}: {token}"
            else:
                basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
                header = f"Authorization: Basic {basic}"
            config.append(("http.extraHeader", header))
        elif self.userinfo:  # http://user:password@host/… : the Basic auth git would have sent
            header = "Authorization: Basic " + base64.b64encode(self.userinfo.encode()).decode()
            config.append(("http.extraHeader", header))
        env["GIT_CONFIG_COUNT"] = str(len(config))
        for i, (key, value) in enumerate(config):
            env[f"GIT_CONFIG_KEY_{i}"], env[f"GIT_CONFIG_VALUE_{i}"] = key, value
        return env

    def _scrub(self, text: str) -> str:
        text = re.sub(r"(://)[^/@\s]+@", r"\1***@", text)
        text = re.sub(r"(://[^\s'\"?]*)\?[^\s'\"]+", r"\1?***", text)  # (a query: a presigned URL's credentials)
        token = self.repository.auth_token
        if token and len(token) >= 8:
            text = text.replace(token, "***")
        elif token:  # (a short one only where it stands alone: "x" inside "exists" is not it)
            text = re.sub(rf"(?<![\w-]){re.escape(token)}(?![\w-])", "***", text)
        lines = [ln for ln in text.strip().splitlines() if ln.strip() and not ln.startswith("hint:")]
        return " ".join(lines[-3:])[:500]

    def _git(self, *args: str, cwd: Path | None = None, check: bool = True,
             input_text: str | None = None) -> subprocess.CompletedProcess:
        if shutil.which("git") is None:
            raise SourceError(f"repository {self.repository.name!r}: the git program is not installed")
        stdin = {"input": input_text} if input_text is not None else {"stdin": subprocess.DEVNULL}
        try:
            proc = subprocess.run(["git", *args], cwd=cwd or self.checkout, env=self._env(), capture_output=True,
                                  text=True, timeout=GIT_TIMEOUT,
                                  preexec_fn=child_dies_with_build(), **stdin)
        except subprocess.TimeoutExpired:
            raise _TimedOut(f"repository {self.repository.name!r}: git {args[0]} timed out after "
                              f"{GIT_TIMEOUT} s ({display(self.repository)})") from None
        if check and proc.returncode != 0:
            raise _GitFailed(self._scrub(proc.stderr or proc.stdout))
        return proc

    def _fetch(self, where: Path) -> str:
        """Fetch the configured ref into ``where`` (a git repository) and return its commit id."""
        repo = self.repository
        ref, ref_type = repo.git_ref or "main", repo.ref_type or "branch"
        name = repo.name
        depth = ["--depth=1"]
        try:
            if ref_type in ("branch", "tag"):
                kind = "--heads" if ref_type == "branch" else "--tags"
                listed = self._git("ls-remote", kind, "origin", ref, cwd=where).stdout
                full = f"refs/heads/{ref}" if ref_type == "branch" else f"refs/tags/{ref}"
                if not any(line.split("\t")[-1] == full for line in listed.splitlines()):
                    raise SourceError(f"repository {name!r}: {ref_type} {ref!r} not found in {display(repo)}"
                                      f"{declared(repo)}")
                local = f"refs/remotes/origin/{ref}" if ref_type == "branch" else full
                self._git("fetch", "--quiet", "--no-tags", *depth, "origin", f"+{full}:{local}", cwd=where)
                return self._git("rev-parse", "--verify", f"{local}^{{commit}}", cwd=where).stdout.strip()
            # commit
            if len(ref) in (40, 64):
                attempt = self._git("fetch", "--quiet", "--no-tags", *depth, "origin", ref, cwd=where, check=False)
                if attempt.returncode == 0:
                    return self._commit_named(where, ref)
            self._git("fetch", "--quiet", "origin", "+refs/heads/*:refs/remotes/origin/*",
                      "+refs/tags/*:refs/tags/*", cwd=where)
            return self._commit_named(where, ref)
        except _GitFailed as exc:
            raise _Unreachable(f"repository {name!r}: cannot fetch {display(repo)}: {exc}") from None
        except _TimedOut as exc:  # (a remote that accepts the connection and never answers)
            raise _Unreachable(str(exc)) from None

    def _commit_named(self, where: Path, prefix: str) -> str:
        """The one commit whose id starts with ``prefix``.  Only object ids are looked at: git's own
        lookup (``rev-parse <prefix>``) prefers a tag or branch of that name, so a tag named like
        the pin could redirect it to any commit."""
        repo = self.repository
        listed = self._git("rev-parse", f"--disambiguate={prefix.lower()}", cwd=where, check=False).stdout.split()
        commits = []
        if listed:
            types = self._git("cat-file", "--batch-check=%(objecttype) %(objectname)", cwd=where,
                              input_text="\n".join(listed) + "\n").stdout.split("\n")
            commits = [line.split()[1] for line in types if line.startswith("commit ")]
        if not commits:
            raise SourceError(f"repository {repo.name!r}: commit {prefix!r} not found in {display(repo)} "
                              f"(a commit pin names a commit id, never a tag or branch){declared(repo)}")
        if len(commits) > 1:
            raise SourceError(f"repository {repo.name!r}: commit {prefix!r} is ambiguous in {display(repo)} "
                              f"({len(commits)} commits start with it); give more digits")
        return commits[0]

    def _checkout(self, where: Path, commit: str) -> None:
        info = where / ".git" / "info"
        info.mkdir(parents=True, exist_ok=True)
        (info / "attributes").write_text(_COMMITTED_BYTES, "utf-8")
        self._git("-c", "advice.detachedHead=false", "-c", "core.autocrlf=false", "-c", "core.eol=lf",
                  "checkout", "--quiet", "--force", "--detach", commit, cwd=where)
        self._git("clean", "-ffdxq", cwd=where)

    def _state(self) -> dict:
        try:
            return json.loads((self.checkout / ".git" / _STATE).read_text("utf-8"))
        except (OSError, ValueError):
            return {}

    def _save_state(self, where: Path, commit: str) -> None:
        repo = self.repository
        state = {"url": display(repo), "ref": repo.git_ref, "ref_type": repo.ref_type, "commit": commit,
                 "fetched_at": time.time(), "format": _CHECKOUT_FORMAT}
        (where / ".git" / _STATE).write_text(json.dumps(state), "utf-8")

    # -------------------------------------------------------------- sync

    def sync(self) -> tuple[Path, str, list[Diagnostic]]:
        """Make the cached checkout match the configured ref; return (checkout, commit, diagnostics).
        Within ``one_commit_per_checkout``, a checkout already synced is used as it is."""
        build = _build
        if build is not None and self.checkout in build.commits:
            return self.checkout, build.commits[self.checkout], []
        refresh = self.repository.refresh_seconds
        if build is not None:
            refresh = min(refresh, build.refresh.get(self.checkout, refresh))
        checkout, commit, diags = self._sync(refresh)
        if build is not None:
            build.commits[self.checkout] = commit
        return checkout, commit, diags

    def _sync(self, refresh_seconds: int) -> tuple[Path, str, list[Diagnostic]]:
        repo = self.repository
        self.checkout.parent.mkdir(parents=True, exist_ok=True)
        with open(self.checkout.parent / f"{self.checkout.name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            state = self._state()
            # (a commit pin's cache must hold that commit: an older skillc resolved it through a tag
            # named like the commit)
            pinned = repo.ref_type != "commit" or str(state.get("commit", "")).startswith((repo.git_ref or "").lower())
            current = state.get("format") == _CHECKOUT_FORMAT
            if state.get("commit") and (self.checkout / ".git").is_dir() and pinned and current:
                fresh = repo.ref_type in ("tag", "commit") or (
                    time.time() - float(state.get("fetched_at", 0)) < refresh_seconds)
                if fresh:
                    try:
                        self._checkout(self.checkout, state["commit"])
                        return self.checkout, state["commit"], []
                    except _GitFailed:
                        pass  # a damaged cache: fetch again below
                else:
                    # A damaged cache (no HEAD, lost objects) fails the fetch as if the remote were
                    # unreachable, then the checkout of the cached commit: clone afresh below, which
                    # tells a remote that is really unreachable.
                    try:
                        commit = self._fetch(self.checkout)
                    except _Unreachable as exc:  # (a remote that answers the ref is gone: an error, as cold)
                        try:
                            self._checkout(self.checkout, state["commit"])
                        except _GitFailed:
                            pass
                        else:
                            d = STALE_SOURCE.diagnostic(
                                "", 0, 0, f"{exc}; building from the cached commit {state['commit'][:12]}")
                            return self.checkout, state["commit"], [d]
                    else:
                        try:
                            self._checkout(self.checkout, commit)
                        except _GitFailed:
                            pass
                        else:
                            self._save_state(self.checkout, commit)
                            return self.checkout, commit, []
            # a fresh clone, built beside the cache entry and moved into place
            tmp = Path(tempfile.mkdtemp(prefix=f".{self.checkout.name}.", dir=self.checkout.parent))
            try:
                self._git("init", "--quiet", cwd=tmp)
                self._git("remote", "add", "origin", self.url, cwd=tmp)
                commit = self._fetch(tmp)
                try:
                    self._checkout(tmp, commit)
                except _GitFailed as exc:
                    raise SourceError(f"repository {repo.name!r}: cannot check out {commit[:12]}: {exc}") from None
                self._save_state(tmp, commit)
                if self.checkout.exists():
                    shutil.rmtree(self.checkout)
                os.replace(tmp, self.checkout)
            except _GitFailed as exc:
                raise SourceError(f"repository {repo.name!r}: git failed for {display(repo)}: {exc}") from None
            finally:
                if tmp.exists():
                    shutil.rmtree(tmp, ignore_errors=True)
            return self.checkout, commit, []

    def skills(self, read: ReadItem | None = None) -> SourceListing:
        checkout, commit, diags = self.sync()
        root = skills_root_of(self.repository, checkout)
        source_input = SourceInput(self.repository.name, "git", display(self.repository), commit)
        name = None
        if root == checkout:  # a repository that is one skill: named after the URL's last segment
            # (git's rule for a clone's folder: `…/pdf-tools/.git` is `pdf-tools`; the empty name
            # left by the `.git` segment fell back to the cache folder's name, machine-dependent)
            tail = self.url.rstrip("/").removesuffix("/.git").rstrip("/")
            name = tail.rsplit("/", 1)[-1].rsplit(":", 1)[-1].removesuffix(".git")
        listing = list_directory(self.repository, root, read, self.lint, source_input, name)
        diags = [*diags, *self._submodules(checkout)]
        if diags:
            from dataclasses import replace

            listing = replace(listing, diagnostics=tuple(diags) + listing.diagnostics)
        return listing


    def _submodules(self, checkout: Path) -> list[Diagnostic]:
        """R111 for the submodules in or above ``skills_root``: git leaves each an empty folder, so
        the skills in it are silently missing from the bundle (fetching them would run more remotes
        than the configuration names)."""
        try:
            text = (checkout / ".gitmodules").read_text("utf-8", "replace")
        except OSError:
            return []
        root = (self.repository.skills_root or "").strip("/")
        paths = sorted({m.group(1).strip().strip('"').strip("/") for m in _SUBMODULE_PATH.finditer(text)})
        hit = [p for p in paths if p and (not root or p == root or p.startswith(root + "/") or root.startswith(p + "/"))]
        if not hit:
            return []
        shown = ", ".join(repr(p) for p in hit[:5]) + (f" and {len(hit) - 5} more" if len(hit) > 5 else "")
        return [SUBMODULE_NOT_FETCHED.diagnostic(
                           "", 0, 0, f"repository {self.repository.name!r}: submodules are not fetched: {shown}; "
                           "the skills in them are not published")]


# `path = …` in .gitmodules (git-config syntax; a quoted value keeps its spaces)
_SUBMODULE_PATH = re.compile(r"^[ \t]*path[ \t]*=[ \t]*(.+?)[ \t]*$", re.MULTILINE)


class _GitFailed(Exception):
    """A git command failed (message already scrubbed of credentials)."""


class _TimedOut(SourceError):
    """A git command ran past GIT_TIMEOUT."""


class _Unreachable(SourceError):
    """git could not talk to the remote (the one failure a cached checkout stands in for)."""


__all__ = ["GitSource", "one_commit_per_checkout", "sanitise"]
