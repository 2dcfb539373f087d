"""HTTP repositories: another skillc bundle, or any server speaking the Meerkat Skills API.

``GET {base}/skills`` lists descriptors, ``GET {base}/skills/{quote(id, safe='')}`` returns each
document (descriptor + ``body``), ``GET {base}/skill-collections`` (optional) describes collections
(research/frameworks.md §1.5).  Responses are validated the way Meerkat's client validates them
(``metadata`` string→string, required ``id``/``name``/``description``/``body``).

Each document becomes a local ``SKILL.md`` (frontmatter rebuilt from the descriptor, then the body)
under ``cache_dir/http/…``, so remote skills go through the same parser and rules as local ones.
From another skillc bundle (its ``{base}/manifest.json`` is a skillc manifest) the skills come
whole: every file the manifest lists under ``api/files/<id>/`` (the original SKILL.md, and
``references/``, ``scripts/``, ``assets/``…) is fetched from ``{base}/files/<id>/<path>`` and kept
only when its SHA-256 and size match the manifest (R108 otherwise); unchanged files are reused
from the previous fetch without a request.
The cache lives ``refresh_seconds`` (Meerkat's TTL); after that documents are revalidated with
``If-None-Match`` (a skillc server answers 304).  Auth: ``auth_token`` alone sends
``Authorization: Bearer …``, with ``auth_header`` it sends ``{auth_header}: {token}``; credentials
are dropped on a redirect to another host and never written to the cache.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Any, Callable

import yaml

from ..cache import FORMAT as CACHE_FORMAT
from ..cache import diagnostics_in, diagnostics_out
from ..discover.walk import path_key
from ..fetch import DEADLINE, MAX_BYTES, FetchError, shown
from ..fetch import get as http_get
from ..jsonio import NESTED_TOO_DEEPLY, load_json
from ..layout import MANIFEST_KIND
from ..model import Diagnostic, DiscoveredItem, ItemKind, id_problem
from ..paths import inside
from ..resolve_types import Repository, SkillFile, SourceInput, SourceListing, SourceSkill
from ..validate.lint import LintConfig, read_item
from ..validate.rules.loader import rule_by_code_or_name
from ..version import __version__
from .base import ReadItem, SourceError
from .filesystem import display, hash_file, id_selected, skill_files

MAX_RESPONSE_BYTES = MAX_BYTES
MAX_SKILL_BYTES = 256 * 1024 * 1024  # all the files fetched for one skill from a remote bundle
_AUTO_DESCRIPTION = re.compile(r"^\d+ skills?$")
# The rules this source reports through (code and severity are declared with the rule)
_UNSAFE_ID, _MISSING, _NO_SKILL, _FILE_LEFT_OUT = (rule_by_code_or_name(c) for c in ("R104", "R106", "R107", "R108"))


def auth_headers(repo: Repository) -> dict[str, str]:
    """Meerkat's mapping: header+token → custom header; token alone → Bearer; header alone → nothing."""
    if not repo.auth_token:
        return {}
    if repo.auth_header:
        return {repo.auth_header: repo.auth_token}
    return {"Authorization": f"Bearer {repo.auth_token}"}


def deadline_of(repo: Repository) -> float:
    """When a fetch of ``repo`` starting now must be over (``time.monotonic()``): every request of
    it shares ``timeout_seconds``, so a server answering each one slowly cannot stall the build."""
    return time.monotonic() + repo.timeout_seconds


def request(repo: Repository, url: str, *, accept: str = "application/json",
            etag: str | None = None, until: float | None = None) -> tuple[int, bytes, dict[str, str]]:
    """GET ``url``: (status, body, headers).  2xx, 304 and 404 are returned; anything else raises
    (``skillc.fetch``: capped at MAX_RESPONSE_BYTES, a deadline, safe redirects).  ``until`` is the
    repository's deadline (``deadline_of``); one request alone has at most ``fetch.DEADLINE``."""
    headers = {"Accept": accept, "User-Agent": f"skillc/{__version__}", **auth_headers(repo)}
    if etag:
        headers["If-None-Match"] = etag
    left = DEADLINE if until is None else min(DEADLINE, until - time.monotonic())
    try:
        if left <= 0:
            raise FetchError("")
        resp = http_get(url, headers, max_bytes=MAX_RESPONSE_BYTES, deadline=left)
    except FetchError as exc:
        if until is not None and time.monotonic() >= until - 0.05:
            raise SourceError(f"repository {repo.name!r}: not fetched within timeout_seconds = "
                              f"{repo.timeout_seconds} (at {shown(url)}); raise it in the repository's "
                              "entry if the server is slow") from None
        hint = " (check auth_token / auth_header)" if exc.status in (401, 403) else ""
        raise SourceError(f"repository {repo.name!r}: {exc}{hint}") from None
    status = 404 if resp.status == 410 else resp.status
    return status, resp.body, resp.headers


def fetch(repo: Repository, url: str, *, accept: str = "application/json",
          until: float | None = None) -> tuple[bytes, dict[str, str]]:
    status, body, headers = request(repo, url, accept=accept, until=until)
    if status == 404:
        raise SourceError(f"repository {repo.name!r}: not found (HTTP 404): {display(repo)}")
    return body, headers


def _json(repo: Repository, url: str, body: bytes, headers: dict[str, str]) -> Any:
    head = body.lstrip()[:200].lower()
    if "html" in headers.get("content-type", "") or head.startswith((b"<!doctype", b"<html", b"<")):
        raise SourceError(f"repository {repo.name!r}: {shown(url)} answered HTML, not JSON; is the url the API root "
                          "(for a skillc bundle: https://host/api)?")
    try:
        value = load_json(body.decode("utf-8"))
        if "\\ud" in body.decode("utf-8") or "\\uD" in body.decode("utf-8"):
            # a \\ud800 escape decodes to a lone surrogate, which no file or UTF-8 text can hold
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        return value
    except json.JSONDecodeError as exc:
        if exc.msg == NESTED_TOO_DEEPLY:
            raise SourceError(f"repository {repo.name!r}: {shown(url)} answered JSON nested too deep") from None
        raise SourceError(f"repository {repo.name!r}: {shown(url)} did not answer valid JSON ({exc})") from None
    except UnicodeEncodeError:
        raise SourceError(f"repository {repo.name!r}: {shown(url)} answered text that is not Unicode (a lone "
                          "surrogate escape)") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise SourceError(f"repository {repo.name!r}: {shown(url)} did not answer valid JSON ({exc})") from None


def _check_descriptor(repo: Repository, url: str, d: Any, body: bool = False) -> dict[str, Any]:
    if not isinstance(d, dict):
        raise SourceError(f"repository {repo.name!r}: {shown(url)}: a skill descriptor is not an object")
    for key in ("id", "name", "description") + (("body",) if body else ()):
        if not isinstance(d.get(key), str):
            raise SourceError(f"repository {repo.name!r}: {shown(url)}: skill {d.get('id')!r}: {key!r} must be a string")
    meta = d.get("metadata", {})
    if meta is None:
        meta = {}
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise SourceError(f"repository {repo.name!r}: {shown(url)}: skill {d['id']!r}: metadata must map strings to strings")
    caps = d.get("requires_capabilities", [])
    if not isinstance(caps, list) or not all(isinstance(c, str) for c in caps or []):
        raise SourceError(f"repository {repo.name!r}: {shown(url)}: skill {d['id']!r}: requires_capabilities must be strings")
    return d


def published_files(manifest: Any, skill_ids: set[str]) -> dict[str, dict[str, tuple[str, int]]]:
    """What a skillc bundle publishes for each skill, from its manifest: ``{id: {path in the skill:
    (sha256, size)}}``.  A file belongs to the deepest skill ID its path starts with (a nested
    skill's files are its own).  Rows that are not well-formed are left out; ``{}`` for anything
    that is not a skillc manifest."""
    if not isinstance(manifest, dict) or manifest.get("kind") != MANIFEST_KIND or not isinstance(manifest.get("files"), list):
        return {}
    out: dict[str, dict[str, tuple[str, int]]] = {}
    for row in manifest["files"]:
        if not isinstance(row, dict):
            continue
        path, sha, size = row.get("path"), row.get("sha256"), row.get("size")
        if not (isinstance(path, str) and path.startswith("api/files/") and isinstance(sha, str)
                and isinstance(size, int) and not isinstance(size, bool) and size >= 0):
            continue
        parts = path[len("api/files/"):].split("/")
        for k in range(len(parts) - 1, 0, -1):
            skill_id = "/".join(parts[:k])
            if skill_id in skill_ids:
                out.setdefault(skill_id, {})["/".join(parts[k:])] = (sha.lower(), size)
                break
    return out


def executable_files(manifest: Any) -> frozenset[str]:
    """The bundle paths a skillc manifest lists as executable (none for older bundles or other servers)."""
    value = manifest.get("executables") if isinstance(manifest, dict) else None
    return frozenset(p for p in value if isinstance(p, str)) if isinstance(value, list) else frozenset()


def skill_text(doc: dict[str, Any]) -> str:
    """A SKILL.md rebuilt from a wire document: frontmatter from the descriptor, then the body."""
    fm: dict[str, Any] = {"name": doc["name"], "description": doc["description"]}
    if doc.get("metadata"):
        fm["metadata"] = dict(sorted(doc["metadata"].items()))
    if doc.get("requires_capabilities"):
        fm["requires_capabilities"] = list(doc["requires_capabilities"])
    head = yaml.safe_dump(fm, sort_keys=False, allow_unicode=True, width=1_000_000, default_flow_style=False)
    body = doc["body"]
    return f"---\n{head}---\n{body}"


class HttpSource:
    def __init__(self, repository: Repository, *, cache_dir: Path, lint: LintConfig) -> None:
        self.repository = repository
        self.cache_dir = cache_dir
        self.lint = lint
        self.base = repository.location.rstrip("/")
        key = hashlib.sha256(self.base.encode()).hexdigest()[:12]
        from .git import sanitise

        self.dir = cache_dir / "http" / f"{sanitise(self.base)}-{key}"

    def _url(self, *parts: str) -> str:
        return "/".join([self.base, *parts])

    def _sync(self, wanted: Callable[[str], bool]) -> dict:
        """The cached state, refreshed when it is older than refresh_seconds or lacks a document
        ``wanted`` selects.  The cache is keyed on the URL alone, so it holds the whole unfiltered
        list (seed 004: a filtered view must never poison it) and every document a repository on
        this URL selected; ``skills()`` applies include/exclude on every build.  The diagnostics of
        the fetch are kept in the state, so a warm build reports what the fetch did."""
        state_file = self.dir / "state.json"
        state = self._cached_state(state_file)
        if self._fresh(state, wanted):
            return state
        diags: list[Diagnostic] = []  # about the list itself (R104); a document's own go in its entry
        until = self._until = deadline_of(self.repository)
        listing, descriptors = self._fetch_listing(until)
        manifest = self._fetch_manifest(until)
        files = published_files(manifest, {d["id"] for d in descriptors})
        self._executables = executable_files(manifest)
        tmp = Path(tempfile.mkdtemp(prefix=".sync-", dir=self.dir))
        (tmp / "tree").mkdir()
        try:
            safe, docs = self._fetch_documents(descriptors, wanted, state.get("docs", {}), files, tmp, diags)
            collections = self._fetch_collections(until)
            if (self.dir / "tree").exists():
                shutil.rmtree(self.dir / "tree")
            os.replace(tmp / "tree", self.dir / "tree")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        # What was fetched: the list, and the files the remote bundle's manifest lists (they can
        # change while the list does not)
        resolved = hashlib.sha256(body_of(listing) + (body_of(files) if files else b"")).hexdigest()
        state = {"format": FETCH_FORMAT, "fetched_at": time.time(), "resolved": "sha256:" + resolved,
                 "listed": list(dict.fromkeys(safe)),
                 "diagnostics": diagnostics_out(diags), "docs": docs, "collections": collections,
                 "url": display(self.repository)}
        state_file.write_text(json.dumps(state, sort_keys=True), "utf-8")
        return state

    @staticmethod
    def _cached_state(state_file: Path) -> dict:
        try:
            state = json.loads(state_file.read_text("utf-8"))
        except (OSError, ValueError):
            state = {}
        if not isinstance(state, dict) or state.get("format") != FETCH_FORMAT:
            state = {}  # (fetched under other rules, by another version: its tree may hold what these leave out)
        return state

    def _fresh(self, state: dict, wanted: Callable[[str], bool]) -> bool:
        """Whether the cached state may serve as is: young enough, its tree there, and holding every
        document ``wanted`` selects."""
        listed = state.get("listed")
        return isinstance(listed, list) and time.time() - state.get("fetched_at", 0) < self.repository.refresh_seconds \
            and (self.dir / "tree").is_dir() and all(i in state.get("docs", {}) for i in listed if wanted(i))

    def _fetch_listing(self, until: float) -> tuple[Any, list[dict[str, Any]]]:
        """``GET {base}/skills``: the listing as answered and its checked descriptors."""
        repo = self.repository
        list_url = self._url("skills")
        status, body, headers = request(repo, list_url, until=until)
        if status == 404:
            raise SourceError(f"repository {repo.name!r}: {display(repo).rstrip('/')}/skills not found (HTTP 404); "
                              "is the url the API root (for a skillc bundle: https://host/api)?")
        listing = _json(repo, list_url, body, headers)
        if not isinstance(listing, dict) or not isinstance(listing.get("skills"), list):
            raise SourceError(f"repository {repo.name!r}: {shown(list_url)} must answer {{\"skills\": [...]}}")
        return listing, [_check_descriptor(repo, list_url, d) for d in listing["skills"]]

    def _fetch_manifest(self, until: float) -> Any:
        manifest_url = self._url("manifest.json")
        try:  # any wire server that has no skillc manifest (404, 401, HTML…): the documents alone
            mstatus, mbody, mheaders = request(self.repository, manifest_url, until=until)
            if 200 <= mstatus < 300:
                return _json(self.repository, manifest_url, mbody, mheaders)
        except SourceError:
            pass
        return None

    def _fetch_documents(self, descriptors: list[dict[str, Any]], wanted: Callable[[str], bool],
                         old_docs: dict[str, dict], files: dict[str, dict[str, tuple[str, int]]], tmp: Path,
                         diags: list[Diagnostic]) -> tuple[list[str], dict[str, dict]]:
        """Fetch every listed document that is wanted or was fetched before into ``tmp/tree``; return
        the safe IDs listed and the state entry of each document fetched."""
        docs: dict[str, dict] = {}
        safe: list[str] = []
        for d in descriptors:
            skill_id = d["id"]
            problem = id_problem(skill_id)
            if problem:  # (before it names a file in the cache)
                diags.append(Diagnostic(_UNSAFE_ID.code, _UNSAFE_ID.severity, skill_id, 0, 0,
                                        f"remote skill ID {skill_id!r} is not safe: {problem}; skipped"))
                continue
            safe.append(skill_id)
            if not wanted(skill_id) and skill_id not in old_docs:  # (what was fetched before stays fresh)
                continue
            docs[skill_id] = self._fetch_document(skill_id, old_docs.get(skill_id), files.get(skill_id), tmp)
        return safe, docs

    def _fetch_document(self, skill_id: str, cached: dict | None, listed: dict[str, tuple[str, int]] | None,
                        tmp: Path) -> dict:
        """Fetch one document (revalidated with its ETag) and, from a skillc bundle, its files; return
        its state entry."""
        repo = self.repository
        url = self._url("skills", urllib.parse.quote(skill_id, safe=""))
        cached_file = self.dir / "tree" / skill_id / "SKILL.md"
        etag = cached.get("etag") if cached and cached_file.is_file() else None
        status, body, headers = request(repo, url, etag=etag, until=self._until)
        if status == 404:
            gone = Diagnostic(_MISSING.code, _MISSING.severity, skill_id, 0, 0,
                              f"{display(repo)} lists {skill_id!r} but GET {shown(url)} answered 404")
            return {"missing": True, "diagnostics": diagnostics_out([gone])}
        target = tmp / "tree" / skill_id / "SKILL.md"
        target.parent.mkdir(parents=True, exist_ok=True)
        if status == 304 and etag:
            shutil.copyfile(cached_file, target)
            entry = {"etag": etag}
        else:
            doc = _check_descriptor(repo, url, _json(repo, url, body, headers), body=True)
            target.write_text(skill_text(doc), "utf-8", newline="")
            entry = {"etag": headers.get("etag")}
        if listed:
            left_out: list[Diagnostic] = []
            entry["files"] = self._fetch_files(skill_id, listed, cached or {}, tmp / "tree", left_out)
            entry["diagnostics"] = diagnostics_out(left_out)
        return entry

    def _fetch_collections(self, until: float) -> dict[str, str]:
        """``GET {base}/skill-collections``: the descriptions written by hand, by collection path."""
        collections: dict[str, str] = {}
        cstatus, cbody, cheaders = request(self.repository, self._url("skill-collections"), until=until)
        if 200 <= cstatus < 300:
            try:
                data = _json(self.repository, self._url("skill-collections"), cbody, cheaders)
                for c in data.get("collections", []) if isinstance(data, dict) else []:
                    if isinstance(c, dict) and isinstance(c.get("path"), str) and isinstance(c.get("description"), str) \
                            and not _AUTO_DESCRIPTION.match(c["description"]):
                        collections[c["path"]] = c["description"]
            except SourceError:
                pass  # like Meerkat: collections are derived when the endpoint is unusable
        return collections

    def _fetch_files(self, skill_id: str, listed: dict[str, tuple[str, int]], cached: dict, tree: Path,
                     diags: list[Diagnostic]) -> dict[str, str]:
        """Fetch the files a skillc bundle lists for one skill into ``tree/<id>/``, each checked
        against the manifest (a file fetched before with the same SHA-256 is copied, not fetched);
        return ``{path: sha256}`` of those kept.  The original SKILL.md replaces the one rebuilt
        from the wire document (it keeps every frontmatter key)."""
        repo = self.repository
        old_files: dict[str, str] = cached.get("files", {}) if isinstance(cached.get("files"), dict) else {}
        kept: dict[str, str] = {}
        total = 0

        def leave_out(rel: str, why: str) -> None:
            diags.append(Diagnostic(_FILE_LEFT_OUT.code, _FILE_LEFT_OUT.severity, skill_id, 0, 0,
                                    f"{display(repo)}/files/{skill_id}/{rel}: {why}; left out"))

        from ..emit.skills import publishable

        spelled = {"skill.md": "SKILL.md"}  # case-folded names kept (older bundles published case twins)
        for rel, (sha, size) in sorted(listed.items()):
            why = publishable(rel)  # (what a bundle may publish, checked before it names a file here)
            if why:
                leave_out(repr(rel), why)
                continue
            if size > MAX_RESPONSE_BYTES or total + size > MAX_SKILL_BYTES:
                leave_out(rel, f"the skill's files would pass {MAX_SKILL_BYTES:,} bytes")
                continue
            # A skill published as `skill.md` (stored so): that file is its SKILL.md, in the rebuilt one's
            # place; beside a listed SKILL.md (an older bundle published both) it is a case twin, left out.
            if rel.lower() == "skill.md" and rel != "SKILL.md" and "SKILL.md" in listed:
                leave_out(rel, "differs only by case from SKILL.md (case-insensitive file systems would merge them)")
                continue
            local = "SKILL.md" if rel.lower() == "skill.md" else rel
            parts = local.split("/")
            names = ["/".join(parts[: i + 1]) for i in range(len(parts))]
            twin = next((spelled[n.casefold()] for n in names
                         if spelled.get(n.casefold(), n) != n and n != "SKILL.md"), None)
            if twin is not None:
                leave_out(rel, f"differs only by case from {twin!r} (case-insensitive file systems would merge them)")
                continue
            target = tree / skill_id / local
            previous = self.dir / "tree" / skill_id / local
            data = None
            if old_files.get(local) == sha and previous.is_file() and not previous.is_symlink():
                data = previous.read_bytes()
            if data is None or hashlib.sha256(data).hexdigest() != sha:
                segments = [urllib.parse.quote(seg, safe="") for seg in f"{skill_id}/{rel}".split("/")]
                try:
                    status, data, _ = request(repo, self._url("files", *segments), accept="*/*", until=self._until)
                except SourceError as exc:
                    leave_out(rel, str(exc).split(": ", 1)[-1])
                    continue
                problem = ("answered 404" if status == 404 else
                           f"answered HTTP {status}" if not 200 <= status < 300 else
                           f"{len(data):,} bytes where the manifest lists {size:,}" if len(data) != size else
                           "SHA-256 differs from the manifest" if hashlib.sha256(data).hexdigest() != sha else None)
                if problem is not None:
                    leave_out(rel, problem)
                    continue
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                if not inside(os.path.realpath(target.parent), os.path.realpath(tree / skill_id)):  # (a safe path cannot leave it; belt and braces)
                    raise OSError("outside the skill folder")
                target.write_bytes(data)
                if f"api/files/{skill_id}/{rel}" in self._executables:
                    os.chmod(target, 0o755)  # (the bundle's zips keep the bit; its files rows cannot)
            except OSError as exc:  # e.g. a manifest listing both `x` and `x/y`
                leave_out(rel, f"cannot be written ({exc.strerror or exc})")
                continue
            total += size
            kept[local] = sha
            for n in names:
                spelled.setdefault(n.casefold(), n)
        return kept

    def skills(self, read: ReadItem | None = None) -> SourceListing:
        read = read or read_item
        repo = self.repository
        self.dir.mkdir(parents=True, exist_ok=True)
        with open(self.dir / "lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)

            def selected(skill_id: str) -> bool:
                return id_selected(skill_id, repo.include, repo.exclude)

            state = self._sync(selected)
            tree = self.dir / "tree"
            out: list[SourceSkill] = []
            docs: dict[str, dict] = state["docs"]
            chosen = [i for i in state["listed"] if selected(i) and i in docs]
            diags = [*diagnostics_in(state["diagnostics"]),
                     *(d for i in chosen for d in diagnostics_in(docs[i].get("diagnostics", ())))]
            present = {i for i, entry in docs.items() if not entry.get("missing")}  # (folders in the tree)
            digest = getattr(read, "file_digest", None) or hash_file
            for skill_id in sorted((i for i in chosen if i in present), key=path_key):
                item = DiscoveredItem(ItemKind.SKILL, f"{skill_id}/SKILL.md", skill_id, "SKILL.md")
                doc = read(str(tree), item)
                main = SkillFile("SKILL.md", doc.sha256, doc.size, str(tree / skill_id / "SKILL.md"))
                others = skill_files(str(tree), skill_id, present, "SKILL.md", digest) \
                    if docs[skill_id].get("files") else []
                out.append(SourceSkill(skill_id, repo, doc, (main, *others)))
        source_input = SourceInput(repo.name, "http", display(repo), state.get("resolved"))
        if not out:
            diags.append(Diagnostic(_NO_SKILL.code, _NO_SKILL.severity, "", 0, 0,
                                    f"repository {repo.name!r} offers no skill"))
        return SourceListing(tuple(out), source_input, tuple(diags), dict(state.get("collections", {})), repo)


# What a cached fetch was made under: another version's tree may hold files these rules leave out.
FETCH_FORMAT = f"{__version__}|{CACHE_FORMAT}"


def body_of(listing: Any) -> bytes:
    return json.dumps(listing, sort_keys=True, ensure_ascii=False).encode("utf-8")


__all__ = ["HttpSource", "auth_headers", "fetch", "request", "skill_text"]
