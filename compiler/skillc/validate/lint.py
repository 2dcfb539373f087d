"""The validate stage: run the rule registry over discovered, parsed documents."""

from __future__ import annotations

import fnmatch
import gc
import os
import stat
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from .. import secrets
from ..discover import rules as discover_rules
from ..discover.walk import DiscoveryOptions, config_relative, discover, path_key
from ..model import (
    ITEM_KIND_OF,
    SEVERITY_OF,
    Diagnostic,
    DiscoveredItem,
    Discovery,
    Document,
    Frontmatter,
    ItemKind,
    Severity,
)
from ..parse import rules as parse_rules
from ..parse.document import (
    MAX_FILE_BYTES,
    parse_document,
    positions_from_record,
    positions_record,
    scalars_from_record,
    scalars_record,
)
from .manifests import SkillVerdict, lint_manifests
from .rules.loader import load_all
from .rules.registry import PROFILES, RULES, Finding, LintSettings, Rule, RuleContext, matches


@dataclass(frozen=True, slots=True)
class LintConfig:
    profile: str = "recommended"
    select: tuple[str, ...] = ()  # replaces the profile's rule set when given
    extend_select: tuple[str, ...] = ()  # adds rules to the profile's set, or to ``select``'s
    ignore: tuple[str, ...] = ()
    per_path_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (glob, codes)
    settings: LintSettings = field(default_factory=LintSettings)
    discovery: DiscoveryOptions = field(default_factory=DiscoveryOptions)
    source: str | None = None  # the file the configuration came from
    # per-path-ignores globs are relative to the configuration file's folder; this is the linted
    # root's path from there ("" when the config sits in the root), prepended before matching.
    ignore_base: str = ""
    # ...or, when the configuration sits below the linted root (a file linted from a folder above its
    # repository), that folder's path from the root, taken off before matching.
    ignore_strip: str = ""

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            from ..errors import ConfigError

            raise ConfigError(f"unknown profile {self.profile!r}; choose one of {', '.join(PROFILES)}")

    def active(self, rule: Rule) -> bool:
        # extend-select adds to whichever set is in force, as in Ruff: a `select` in the file and
        # `--extend-select` on the command line (or the reverse) must not drop the added rules silently.
        base = matches(rule.code, self.select) if self.select else self.profile in rule.profiles
        return (base or matches(rule.code, self.extend_select)) and not matches(rule.code, self.ignore)

    def ignored_at(self, code: str, path: str) -> bool:
        if not self.per_path_ignores:
            return False
        if self.ignore_base or self.ignore_strip:
            seen = config_relative(path, self.ignore_base, self.ignore_strip)
            if seen is None:
                return False  # not below the configuration's folder
            path = seen
        return any(
            matches(code, codes) and (fnmatch.fnmatchcase(path, glob) or fnmatch.fnmatchcase(path, glob.rstrip("/") + "/*"))
            for glob, codes in self.per_path_ignores
        )


@dataclass(frozen=True, slots=True)
class LintedItem:
    item: DiscoveredItem
    document: Document
    diagnostics: tuple[Diagnostic, ...]

    @property
    def verdict(self) -> str:
        if any(d.severity is Severity.ERROR for d in self.diagnostics):
            return "error"
        if any(d.severity is Severity.WARNING for d in self.diagnostics):
            return "warning"
        return "ok"


@dataclass(frozen=True, slots=True)
class LintResult:
    root: str  # absolute path of the linted root
    items: tuple[LintedItem, ...]
    diagnostics: tuple[Diagnostic, ...]  # all of them, sorted, including discovery-level ones
    discovery: Discovery

    @property
    def skills(self) -> tuple[LintedItem, ...]:
        return self.items

    def count(self, severity: Severity) -> int:
        return sum(1 for d in self.diagnostics if d.severity is severity)


def read_item(root: str, item: DiscoveredItem) -> Document:
    """Read and parse one discovered file (I/O at the edge: size checked before reading)."""
    skill = item.skill_dir if item.kind is ItemKind.SKILL else item.path
    full = os.path.join(root, item.path)
    try:
        # One open, fstat and read on the descriptor: half the cost of stat + open() + read() on
        # small files (no path walked twice, no buffered file object).
        fd = os.open(full, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO must not block the run
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):  # a link to a FIFO or a device: never read it
                d = discover_rules.UNREADABLE_PATH.diagnostic(item.path, 0, 0, "cannot read: not a regular file", skill)
                return Document(item.path, item.kind, "", 0, "", None, "", 1, (d,))
            size = st.st_size
            if size > MAX_FILE_BYTES:
                with open(fd, "rb", closefd=False) as fh:  # hash in chunks, never hold it all
                    import hashlib

                    digest = hashlib.file_digest(fh, "sha256").hexdigest()
                d = parse_rules.FILE_TOO_LARGE.diagnostic(
                    item.path, 0, 0, f"file is {size:,} bytes; files over {MAX_FILE_BYTES:,} bytes are not parsed", skill)
                return Document(item.path, item.kind, digest, size, "", None, "", 1, (d,))
            raw = os.read(fd, size + 1)
            if len(raw) != size:  # the file changed since fstat: read to its end, as read() would
                parts = [raw]
                while more := os.read(fd, 1 << 16):
                    parts.append(more)
                raw = b"".join(parts)
        finally:
            os.close(fd)
    except OSError as exc:
        d = discover_rules.UNREADABLE_PATH.diagnostic(item.path, 0, 0, f"cannot read: {exc.strerror or exc}", skill)
        return Document(item.path, item.kind, "", 0, "", None, "", 1, (d,))
    return parse_document(raw, item.path, item.kind, skill)


# Messages recur (a rule's fixed text, the same value quoted in many files): each is scanned once.
_SHOWN: dict[str, str] = {}


def _shown_message(message: str) -> str:
    """``message`` with what looks like a secret redacted (the scan of each distinct text memoised)."""
    shown = _SHOWN.get(message)
    if shown is None:
        shown = secrets.redact(message)[0] if secrets.scan(message) else message
        if len(_SHOWN) > 4096:
            _SHOWN.clear()
        _SHOWN[message] = shown
    return shown


def _findings_to_diagnostics(rule: Rule, ctx: RuleContext, findings: Iterable[Finding]) -> list[Diagnostic]:
    sev = rule.severity_for(ctx.profile)
    out = []
    for f in findings:
        line, col = (f.position.line, f.position.column) if f.position else (0, 0)
        # A message quotes values (`skill name '…' must be lowercase`): one that is a likely secret
        # shows redacted, as B707 shows it, in every format (CI logs, SARIF uploads keep them).
        message, fix = f.message, f.fix
        message = _shown_message(message)
        if fix is not None and secrets.scan(fix.description):
            fix = replace(fix, description=secrets.redact(fix.description)[0])
        out.append(rule.diagnostic(f.path or ctx.item.path, line, col, message, ctx.skill_id, fix, severity=sev))
    return out


# (rules list, kind) -> the document-scope rules for that kind, in order.  A lint run passes the same
# list for every file; filtering it once per run instead of per file matters at ~50 rules a file.
_PLANS: dict[tuple[int, int, ItemKind], tuple[Sequence[Rule], tuple[tuple[Callable, Rule, frozenset[str] | None], ...]]] = {}


def _document_rules(rules: Sequence[Rule], kind: ItemKind) -> tuple[tuple[Callable, Rule, frozenset[str] | None], ...]:
    key = (id(rules), len(rules), kind)
    cached = _PLANS.get(key)
    if cached is not None and cached[0] is rules:
        return cached[1]
    plan = tuple((r.check, r, r.keys) for r in rules if r.scope == "document" and kind in r.kinds)
    if len(_PLANS) > 64:
        _PLANS.clear()
    _PLANS[key] = (rules, plan)  # holding ``rules`` keeps its id from being reused while cached
    return plan


# (plan id, the frontmatter's keys) -> (plan, the plan's rules that read one of those keys or declare
# none).  Files of a repository share a few sets of keys: the rules a file needs are looked up
# once per set instead of testing each rule's keys on every file.
_ACTIVE: dict[tuple[int, frozenset[str]], tuple[tuple, tuple[tuple[Callable, Rule], ...]]] = {}


def check_document(ctx: RuleContext, rules: Sequence[Rule]) -> list[Diagnostic]:
    """Run document-scope rules on one context (pure: no I/O beyond what a rule reads)."""
    out: list[Diagnostic] = []
    plan = _document_rules(rules, ctx.item.kind)
    names = frozenset(ctx.meta)
    cached = _ACTIVE.get((id(plan), names))
    if cached is None or cached[0] is not plan:
        # (a rule none of whose keys the file has cannot find anything)
        active = tuple((check, rule) for check, rule, keys in plan if keys is None or not keys.isdisjoint(names))
        if len(_ACTIVE) > 1024:
            _ACTIVE.clear()
        cached = _ACTIVE[(id(plan), names)] = (plan, active)
    for check, rule in cached[1]:
        for finding in check(ctx):  # most rules find nothing: no per-rule work before a finding
            out.extend(_findings_to_diagnostics(rule, ctx, (finding,)))
    return out


def check_collection(ctxs: Sequence[RuleContext], rules: Sequence[Rule]) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    eligible_by_kinds: dict[frozenset[ItemKind], list[RuleContext]] = {}  # (rules share their kinds)
    for rule in rules:
        if rule.scope != "collection":
            continue
        eligible = eligible_by_kinds.get(rule.kinds)
        if eligible is None:
            eligible = eligible_by_kinds[rule.kinds] = [c for c in ctxs if c.item.kind in rule.kinds]
        for ctx, finding in rule.check(eligible):
            out.extend(_findings_to_diagnostics(rule, ctx, [finding]))
    return out


def finalize(diags: Iterable[Diagnostic], config: LintConfig) -> list[Diagnostic]:
    """Apply selection, per-path ignores and profile severities to diagnostics from any stage."""
    verdicts = _verdicts(config)
    out = []
    for d in diags:
        verdict = verdicts.get(d.code)
        if verdict is None:
            rule = RULES.get(d.code)
            active = rule is not None and config.active(rule)
            verdict = verdicts[d.code] = (active, rule.severity_by_profile.get(config.profile) if active else None)
        active, override = verdict
        if not active or config.ignored_at(d.code, d.path):
            continue
        if override is not None and override is not d.severity:
            d = replace(d, severity=override)
        out.append(d)
    out.sort(key=Diagnostic.sort_key)
    return out


# (configuration id, rule count) -> (configuration, code -> (selected, the profile's severity)):
# a lint finalizes each file's diagnostics apart, 10,000 times with the same few codes.
_VERDICTS: dict[tuple[int, int], tuple[LintConfig, dict[str, tuple[bool, Severity | None]]]] = {}


def _verdicts(config: LintConfig) -> dict[str, tuple[bool, Severity | None]]:
    key = (id(config), len(RULES))
    cached = _VERDICTS.get(key)
    if cached is None or cached[0] is not config:
        if len(_VERDICTS) > 64:
            _VERDICTS.clear()
        cached = _VERDICTS[key] = (config, {})  # (holding the configuration keeps its id from being reused)
    return cached[1]


def active_rules(config: LintConfig) -> list[Rule]:
    load_all()
    return [r for r in sorted(RULES.values(), key=lambda r: r.code) if config.active(r)]


PARALLEL_MIN_ITEMS = 400  # below this, starting worker processes costs more than it saves
_CHUNK = 64


def _check_chunk(root: str, items: Sequence[DiscoveredItem], config: LintConfig,
                 rules: Sequence[Rule] | None = None,
                 keys: frozenset[str] | None = None) -> list[tuple[RuleContext, list[Diagnostic]]]:
    """Read, parse and run the document rules on some items (the per-file, order-free work).

    ``keys``: keep each document's ``summary`` only, as workers send theirs.  A whole document (its
    text, every frontmatter event) is ~15 KB: freed at once, its memory serves the next file instead
    of new pages (a 10,000-skill lint held ~180 MB, and page faults were a sixth of its time)."""
    rules = active_rules(config) if rules is None else rules
    root_path = Path(root)
    settings, profile = config.settings, config.profile
    out = []
    # All the chunk's files are read and parsed first, then checked: one kind of work at a time keeps
    # its code and data in the processor's caches (~5% less CPU than alternating file by file).
    documents = [read_item(root, item) for item in items]
    for item, document in zip(items, documents):
        ctx = RuleContext(item, document, root_path, settings, profile)
        found = lint_item(ctx, rules)
        if keys is not None:
            ctx = RuleContext(item, summary(ctx.document, keys), root_path, settings, profile)
        out.append((ctx, found))
    return out


def lint_item(ctx: RuleContext, rules: Sequence[Rule]) -> list[Diagnostic]:
    """One item's diagnostics before the configuration selects them (``finalize``): what reading it
    found and what the document rules find.  ``skillc lint`` (``_check_chunk``) and ``skillc build``
    (``build.pipeline.lint_skills``, which caches the result) both lint an item through this, so the
    two cannot drift."""
    found = check_document(ctx, rules)
    return [*ctx.document.diagnostics, *found] if ctx.document.diagnostics else found


# Results cross from worker processes as plain tuples: pickling frozen slotted dataclasses runs
# Python code per object (~70 us to dump and ~120 us to load a document with its positions),
# more than linting the file.  The body is sent as its length when it ends the text (it nearly
# always does); frontmatter positions cross as plain dicts of tuples and stay lazy on the other side
# (parse.positions_record, parse.scalars_record).

def _diagnostic_record(d: Diagnostic) -> tuple:
    return (d.code, d.severity.value, d.path, d.line, d.column, d.message, d.skill, d.fix)


def _diagnostic_from_record(r: tuple) -> Diagnostic:
    return Diagnostic(r[0], SEVERITY_OF[r[1]], r[2], r[3], r[4], r[5], r[6], r[7])


def collection_keys(rules: Sequence[Rule]) -> frozenset[str] | None:
    """The frontmatter keys the collection rules among ``rules`` read, or None when one of them
    does not declare its keys (it then needs whole documents)."""
    keys: set[str] = set()
    for rule in rules:
        if rule.scope == "collection":
            if rule.keys is None:
                return None
            keys |= rule.keys
    return frozenset(keys)


def summary(doc: Document, keys: Collection[str]) -> Document:
    """``doc`` reduced to what collection rules read: the top-level frontmatter ``keys`` (values,
    key and value positions); no text, no body (see ``lint_root(documents=False)``).  What a worker
    sends (``_document_record`` with ``keys``) reads back as this (built here directly: this process
    checks half the files of a large lint itself)."""
    fm = doc.frontmatter
    if fm is not None:
        data = fm.data
        paths = [(k,) for k in keys if k in data]
        fm = Frontmatter({p[0]: data[p[0]] for p in paths}, positions_from_record(positions_record(fm.keys, paths)),
                         scalars_from_record(scalars_record(fm.scalars, paths)), fm.start_line, fm.end_line)
    return Document(doc.path, doc.kind, doc.sha256, doc.size, "", fm, "", doc.body_line, ())


def _document_record(doc: Document, keys: Collection[str] | None = None) -> tuple:
    """``doc`` as plain tuples; with ``keys``, its ``summary`` (the diagnostics are sent apart)."""
    fm = doc.frontmatter
    if keys is not None:
        paths = None if fm is None else [(k,) for k in keys if k in fm.data]
        fm_rec = None if fm is None else ({p[0]: fm.data[p[0]] for p in paths}, positions_record(fm.keys, paths),
                                          scalars_record(fm.scalars, paths), fm.start_line, fm.end_line)
        return (doc.path, doc.kind.value, doc.sha256, doc.size, "", fm_rec, "", doc.body_line, ())
    fm_rec = None if fm is None else (fm.data, positions_record(fm.keys), scalars_record(fm.scalars), fm.start_line,
                                      fm.end_line)
    body: str | int = len(doc.body) if doc.text.endswith(doc.body) else doc.body
    return (doc.path, doc.kind.value, doc.sha256, doc.size, doc.text, fm_rec, body, doc.body_line,
            tuple(map(_diagnostic_record, doc.diagnostics)))


def _document_from_record(r: tuple) -> Document:
    path, kind, digest, size, text, fm_rec, body, body_line, diags = r
    if isinstance(body, int):
        body = text[len(text) - body:] if body else ""
    if fm_rec is None:
        fm = None
    else:
        data, keys, scalars, start_line, end_line = fm_rec
        fm = Frontmatter(data, positions_from_record(keys), scalars_from_record(scalars), start_line, end_line)
    return Document(path, ITEM_KIND_OF[kind], digest, size, text, fm, body, body_line,
                    tuple(map(_diagnostic_from_record, diags)))


# The state forked workers share with this process (set before they start):
# (root, items so far, config, rules, claims, keys, the worker's item feeds, this pid).
# ``claims`` is the next chunk index to check (shared by every process); each worker reads the items
# found after it started from its own feed, and ``keys`` (when not None) reduces the documents sent
# back to their ``summary``.
_SHARED: list = []


def _claim(claims, workers: Sequence | None = None) -> int:
    """The next chunk index.  ``workers`` (this process's claims): wait for the lock a second at a
    time, and fail if a worker died meanwhile: one killed in the moment it held the lock never
    releases it, and this process would wait forever."""
    lock = claims.get_lock()
    while not lock.acquire(timeout=None if workers is None else 1):
        if any(w.exitcode not in (None, 0) for w in workers):  # type: ignore[union-attr]
            raise _died()
    try:
        i = claims.value
        claims.value = i + 1
        return i
    finally:
        lock.release()


def _died():
    from ..errors import SkillcError

    return SkillcError("a lint worker process died (killed, or out of memory?)",
                       hint="run again; if it dies again, use fewer workers: SKILLC_JOBS=1")


def _item_record(item: DiscoveredItem) -> tuple:
    return (item.kind.value, item.path, item.skill_dir, item.file_name, item.listing)


def _item_from_record(r: tuple) -> DiscoveredItem:
    return DiscoveredItem(ITEM_KIND_OF[r[0]], r[1], r[2], r[3], (), r[4])


def _worker_loop(worker: int, results) -> None:
    """In a forked worker: claim chunks until none is left, waiting on the feed for items discovery
    has not handed over yet, and send each chunk's results as soon as they are ready (as plain
    records: the parent rebuilds each context from the document, see _document_record), then
    ``None``, on its own queue; an error is sent as its text."""
    from ..parallel import die_with_parent  # (multiprocessing is loaded by now: _start imported it)

    root, items, config, rules, claims, keys, feeds, parent = _SHARED
    die_with_parent(parent)
    feed, total = feeds[worker], None
    try:
        while True:
            lo = _claim(claims) * _CHUNK
            while total is None and len(items) < lo + _CHUNK:
                batch, total = feed.get()
                items.extend(batch)  # (records: an item is made when its chunk is claimed, here or not at all)
            if total is not None and lo >= total:
                break
            chunk = [i if isinstance(i, DiscoveredItem) else _item_from_record(i) for i in items[lo : lo + _CHUNK]]
            results.put((lo // _CHUNK, [(_document_record(ctx.document, keys), tuple(map(_diagnostic_record, diags)))
                                        for ctx, diags in _check_chunk(root, chunk, config, rules)]))
    except BaseException as exc:  # noqa: BLE001 - reported by the parent, which raises it
        import traceback

        results.put((-1, f"lint worker {worker} failed: {exc!r}\n{traceback.format_exc()}"))
    results.put(None)
    results.close()
    results.join_thread()


def _workers() -> int:
    env = os.environ.get("SKILLC_JOBS")
    if env is not None:
        return max(1, int(env)) if env.isascii() and env.isdigit() else 1
    try:
        return max(1, min(len(os.sched_getaffinity(0)), 8))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, min(os.cpu_count() or 1, 8))


class _Checker:
    """The per-file stage (read, parse, document rules), fed item by item (``add``) while discovery
    walks, on several cores for large repositories; ``finish()`` returns the results in the order
    the items came.

    Each file's result depends on that file alone, so splitting the work changes nothing in the
    output.  Once ``PARALLEL_MIN_ITEMS`` items have come, worker processes are forked (they share
    the loaded rule registry and the items so far); later items reach them through a feed per
    worker, so they check while the walk goes on.  Every process, this one too once the walk is
    done, claims chunks of ``_CHUNK`` items from one shared counter.  Without ``fork``, with
    ``SKILLC_JOBS=1``, or with other threads running (forking them can deadlock the child),
    everything runs here.  ``keys``: workers send back ``summary(document, keys)`` instead of whole
    documents (the frontmatter's positions are most of what crossing between processes costs).
    """

    def __init__(self, root: str, config: LintConfig, rules: Sequence[Rule], keys: frozenset[str] | None) -> None:
        import threading

        self.root, self.config, self.rules, self.keys = root, config, rules, keys
        self.items: list[DiscoveredItem] = []
        self.jobs = _workers()
        self.parallel = self.jobs >= 2 and threading.active_count() == 1
        self.workers: list = []
        self.sent = 0  # items the workers know

    def add(self, item: DiscoveredItem) -> None:
        self.items.append(item)
        if self.workers:
            if len(self.items) - self.sent >= _CHUNK:
                self._feed(None)
        elif self.parallel and len(self.items) >= PARALLEL_MIN_ITEMS:
            self._start()

    def _start(self) -> None:
        # (imported here: a small repository, the usual pre-commit run, never needs it)
        import multiprocessing

        if "fork" not in multiprocessing.get_all_start_methods():
            self.parallel = False
            return
        context = multiprocessing.get_context("fork")
        self.claims = context.Value("i", 0)
        # (a Queue, not a pipe written here: its thread buffers what a busy worker has not read yet,
        # so the walk never waits for the workers)
        self.feeds = [context.Queue() for _ in range(self.jobs - 1)]
        # This process works too once the walk is done: with N cores, N-1 workers plus this one.
        _SHARED[:] = [self.root, self.items, self.config, self.rules, self.claims, self.keys, self.feeds, os.getpid()]
        self.sent = len(self.items)
        # Each worker sends its results on a queue of its own: one killed while it writes (halfway
        # through a message, a shared queue's write lock held) then blocks no other worker.
        self.results = []
        from ..parallel import signals_held

        try:
            with signals_held():  # (a Ctrl-C while forking reaches the workers once they ignore it)
                gc.freeze()
                for n in range(self.jobs - 1):
                    results = context.Queue()
                    self.results.append(results)
                    self.workers.append(context.Process(target=_worker_loop, args=(n, results), daemon=True))
                    self.workers[-1].start()
                    # This process only reads it: with its write end closed here (before the next
                    # worker is forked), the worker holds the only one, so if it dies, even halfway
                    # through a message, reading ends (EOFError) instead of waiting for the rest.
                    results._writer.close()
        finally:
            gc.unfreeze()
            _SHARED.clear()

    def _feed(self, total: int | None) -> None:
        batch = [_item_record(item) for item in self.items[self.sent :]]
        self.sent = len(self.items)
        for feed in self.feeds:
            feed.put((batch, total))

    def finish(self) -> list[tuple[RuleContext, list[Diagnostic]]]:
        if not self.workers:
            return _check_chunk(self.root, self.items, self.config, self.rules, self.keys)
        items = self.items
        total = len(items)
        self._feed(total)
        root_path = Path(self.root)
        settings, profile = self.config.settings, self.config.profile
        done: dict[int, list[tuple[RuleContext, list[Diagnostic]]]] = {}
        from multiprocessing.connection import wait

        sending = [q._reader for q in self.results]  # the workers that have not sent their None yet

        def receive(timeout: float | None) -> None:
            for reader in wait(sending, timeout):
                try:
                    message = reader.recv()
                except (EOFError, OSError):  # its only writer killed (out of memory, a signal), maybe
                    raise _died() from None  # halfway through the message ("end of file during message")
                if message is None:
                    sending.remove(reader)
                    continue
                i, records = message
                if i < 0:
                    raise RuntimeError(records)
                done[i] = [(RuleContext(item, _document_from_record(doc), root_path, settings, profile),
                            list(map(_diagnostic_from_record, diags)))
                           for item, (doc, diags) in zip(items[i * _CHUNK : (i + 1) * _CHUNK], records)]

        try:
            while (lo := _claim(self.claims, self.workers) * _CHUNK) < total:
                done[lo // _CHUNK] = _check_chunk(self.root, items[lo : lo + _CHUNK], self.config, self.rules, self.keys)
                receive(0)
            while sending:
                receive(None)
            self.stop(finished=True)
        finally:
            self.stop()
        return [pair for i in range((total + _CHUNK - 1) // _CHUNK) for pair in done[i]]

    def stop(self, finished: bool = False) -> None:
        """End the workers and close the queues.  ``finished``: every worker read its whole feed,
        so this waits for the feeds' threads (a later lint in this process then forks again)."""
        for w in self.workers:
            if w.pid is None:
                continue  # never started (forking an earlier one failed)
            if w.is_alive():
                w.kill()
            w.join()
        if self.workers:
            for results in self.results:
                results._reader.close()
            for feed in self.feeds:
                feed.close()
                if finished:
                    feed.join_thread()
                else:
                    feed.cancel_join_thread()  # what a killed worker never read is dropped
        self.workers = []
        self.results = []


def _selected(item: DiscoveredItem, only: Collection[str]) -> bool:
    return item.path in only or (item.kind is ItemKind.SKILL and item.skill_dir in only)


def _concerns(diag: Diagnostic, only: Collection[str]) -> bool:
    """Whether a discovery diagnostic is about one of the selected paths (or a folder above one)."""
    return any(
        not o
        or diag.path == o
        or diag.path.startswith(o + "/")
        or (diag.code == discover_rules.UNREADABLE_PATH.code and (diag.path in ("", ".") or o.startswith(diag.path + "/")))
        for o in only
    )


def lint_root(root: str | os.PathLike[str], config: LintConfig = LintConfig(),
              only: Collection[str] | None = None, *, documents: bool = True) -> LintResult:
    """Lint everything under ``root``.

    ``only`` selects what to lint: skill directories (relative posix paths, ``""`` for a skill at
    the root) and file paths (lightweight and convention files).  The walk then visits only the
    folders leading to them, and collection-wide rules see only the selected items.

    The cyclic garbage collector is paused meanwhile: a lint holds every document and its
    frontmatter (many small acyclic objects) until the end, which repeated full collections would
    traverse again and again (~10-15% of a 10,000-skill lint); reference counting still frees them.

    ``documents=False``: for a caller that needs only the diagnostics (the report, not ``--fix``).
    An item's document is then its ``summary`` (no text or body, only the frontmatter keys the
    collection rules read): worker processes send those back at a fraction of a whole document's
    cost, and no process holds every text until the end.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _lint_root(root, config, only, documents)
    finally:
        if was_enabled:
            gc.enable()


SPEC_PREFIXES = ("S3", "P2")  # the specification's and the parser's rules: what "fails the spec" means (G111)


def _manifest_diagnostics(disc: Discovery, per_item: dict[str, list[Diagnostic]], contexts: Sequence[RuleContext],
                          only: Collection[str] | None, rules: Sequence[Rule]) -> list[Diagnostic]:
    paths = [p for p in disc.manifests if only is None or p in only]
    skills = ((c.item.skill_dir, per_item.get(c.item.path, ())) for c in contexts if c.item.kind is ItemKind.SKILL)
    return lint_manifest_files(disc.root, paths, skills, rules)


def lint_manifest_files(root: str, paths: Sequence[str], skills: Iterable[tuple[str, Iterable[Diagnostic]]],
                        rules: Sequence[Rule]) -> list[Diagnostic]:
    """The manifest stage (G1xx) over the plugin and marketplace manifests at ``paths`` (relative to
    ``root``), when one of its rules is active.  ``skills``: each skill folder of the repository with
    its diagnostics (a listed skill with a specification error is G111).  ``skillc lint`` and
    ``skillc build`` both run it."""
    if not paths or not any(r.scope == "manifest" for r in rules):
        return []
    verdicts = {
        skill_dir: SkillVerdict(tuple(sorted({d.code for d in diags
                                              if d.severity is Severity.ERROR and d.code.startswith(SPEC_PREFIXES)})))
        for skill_dir, diags in skills
    }
    return lint_manifests(root, paths, verdicts)


def _lint_root(root: str | os.PathLike[str], config: LintConfig, only: Collection[str] | None,
               documents: bool = True) -> LintResult:
    rules = active_rules(config)
    keys = None if documents else collection_keys(rules)
    discovery = config.discovery
    checker = _Checker(os.path.realpath(root), config, rules, keys)
    try:
        # Each item is checked as soon as discovery has it (on other cores while the walk goes on).
        if only is None:
            disc = discover(root, discovery, on_item=checker.add)
        else:
            only = frozenset(only)
            dirs = set(only) | {o.rsplit("/", 1)[0] if "/" in o else "" for o in only}
            selected = only

            def add(item: DiscoveredItem) -> None:
                if _selected(item, selected):
                    checker.add(item)

            disc = discover(root, replace(discovery, only_dirs=frozenset(dirs)), on_item=add)
        checked = checker.finish()
    except BaseException:
        checker.stop()
        raise
    final = {item.path: item for item in disc.items}  # with their aliases, known at the end of the walk
    contexts: list[RuleContext] = []
    per_item: dict[str, list[Diagnostic]] = {}
    for ctx, diags in checked:
        item = final[ctx.item.path]
        if item.aliases:
            ctx = RuleContext(item, ctx.document, ctx.root, ctx.settings, ctx.profile)
        contexts.append(ctx)
        per_item[ctx.item.path] = diags
    contexts.sort(key=lambda c: path_key(c.item.path))  # the walk's order is not byte order
    for d in check_collection(contexts, rules):
        per_item.setdefault(d.path, []).append(d)
    loose = [d for d in disc.diagnostics if only is None or _concerns(d, only)]
    loose += _manifest_diagnostics(disc, per_item, contexts, only, rules)
    items = []
    all_diags: list[Diagnostic] = finalize(loose, config)
    for ctx in contexts:
        found = per_item.get(ctx.item.path)
        diags = finalize(found, config) if found else []
        items.append(LintedItem(ctx.item, ctx.document, tuple(diags)))
        all_diags.extend(diags)
    all_diags.sort(key=Diagnostic.sort_key)
    return LintResult(disc.root, tuple(items), tuple(all_diags), disc)
