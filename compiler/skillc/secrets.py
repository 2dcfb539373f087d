"""A pure secret scanner: find likely credentials in text, and redact them.

``scan(text)`` returns where each likely secret is (its kind and span, never its value);
``redact(text)`` replaces each with ``[REDACTED:<kind>]`` and counts the redactions per kind.
Lint reports the matches (rule B707); the build and the memory snapshot redact with it, so a
secret in a skill is never copied into a bundle.

Design:

* Provider formats with a fixed prefix (AWS ``AKIA…``, GitHub ``ghp_…``, ``sk-ant-…``, Stripe
  ``sk_live_…``, JWT, PEM private keys) are matched exactly; they have almost no false positives.
* Generic assignments (``password=…``, ``token: …``, ``api_key = "…"``), ``Authorization:``
  headers and URLs with ``user:password@`` need a value that does not look like a placeholder
  (``<your-token>``, ``${TOKEN}``, ``$TOKEN``, ``{{token}}``, ``xxx``, ``****``, ``...``,
  ``changeme``, ``your_api_key``, an environment variable name, a type name) nor like code
  (``args.password``, ``os.environ[...]``), nor like a path to a key file; and it must hold a
  machine-made run of at least 8 letters and digits mixed (so ``hardcoded-value`` or
  ``sk-or-v1-project1-key`` in a tutorial are not reported, and plain-word passphrases are missed).
* The well-known documentation examples (AWS's ``AKIAIOSFODNN7EXAMPLE``, jwt.io's sample
  token) are not reported.
* Where matches overlap, the more specific kind wins (``token: ghp_…`` is one ``github-token``).
* The span of an assignment is its value only, so ``password=[REDACTED:password-assignment]``
  keeps the text readable.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Callable, Iterator, Pattern

from .textscan import LazyPattern

try:  # google-re2: one pass over the text finds every trigger at once (see _TRIGGER_SET)
    import re2 as _re2
except ImportError:  # (a platform without its wheel: the same triggers, one `in` search each)
    _re2 = None

__all__ = ["SecretMatch", "KINDS", "SECRET_RULE", "scan", "scan_bytes", "redact", "is_placeholder", "is_reference"]


@dataclass(frozen=True, slots=True)
class SecretMatch:
    """Where a likely secret is.  Deliberately holds no copy of the value."""

    kind: str
    start: int  # character offset of the secret's first character
    end: int  # offset just past it
    line: int  # 1-based
    column: int  # 1-based


_PLACEHOLDER_WORDS = (
    "your", "example", "placeholder", "changeme", "change_me", "change-me", "redacted", "dummy",
    "sample", "fake", "replace", "insert", "todo", "fixme", "xxxx", "password", "passwd", "secret",
    "token", "apikey", "api_key", "api-key", "mytoken", "mykey", "foobar", "lorem", "<", ">",
    # stand-ins and textbook weak passwords that documentation uses as examples
    "xxx", "demo", "1234", "abc123", "abcd", "xyz", "hardcoded", "default", "admin", "hunter2", "qwerty",
    "letmein", "test", "key", "p@ss", "ssw0rd", "secure",
)
_PLACEHOLDER_WORD = LazyPattern("|".join(map(re.escape, _PLACEHOLDER_WORDS)))  # (one pass, not one per word)
_RUN = LazyPattern(r"(.)\1{5,}")
_TYPE_WORDS = frozenset({
    "string", "str", "number", "integer", "int", "boolean", "bool", "null", "none", "nil", "true",
    "false", "required", "optional", "undefined", "secret", "password", "value", "env", "text",
})
_FILLER = frozenset("xX*#._-•…0")
_ENV_NAME = LazyPattern(r"[A-Z]+(?:_[A-Z0-9]+)*")
_REFERENCE = LazyPattern(r"\$\{|\{\{|\$\(|%\(|%s\b|^\$[A-Za-z_]|^\{[^}]*\}$|^%[A-Za-z_]+%$")
_KNOWN_EXAMPLES = frozenset({
    "JBSWY3DPEHPK3PXP",  # the TOTP secret in Google Authenticator's documentation
    "AKIAIOSFODNN7EXAMPLE",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    # jwt.io's sample token (header.payload.signature) as printed in countless tutorials
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
})


def is_placeholder(value: str) -> bool:
    """True when ``value`` is a stand-in for a secret rather than one."""
    v = value.strip().strip("'\"`")
    if not v or set(v) <= _FILLER:
        return True
    low = v.lower()
    if low in _TYPE_WORDS or "..." in v or "…" in v:
        return True
    if _REFERENCE.search(v) or _ENV_NAME.fullmatch(v):
        return True
    if _PLACEHOLDER_WORD.search(low):
        return True
    # a run of four or more identical characters, e.g. "sk-aaaaaaaa" or "1111111"
    return _RUN.search(v) is not None


def _random_looking(v: str, min_len: int) -> bool:
    return len(v) >= min_len and any(c.isdigit() for c in v) and any(c.isalpha() for c in v)


# ---------------------------------------------------------------- value checks per kind

def _ok_token(v: str) -> bool:
    """Provider formats: only obvious stand-ins are skipped (random text may contain any word)."""
    if v in _KNOWN_EXAMPLES or "EXAMPLE" in v or "..." in v or _REFERENCE.search(v):
        return False
    low = v.lower()
    if any(w in low for w in ("your", "xxxx", "example", "placeholder", "abcdef", "123456")):
        return False
    digits = re.sub(r"\D", "", v)
    if len(digits) >= 6 and digits in "0123456789" * 4:  # A1B2C3D4E5… made up by hand
        return False
    return not _RUN.search(v)


def _ok_openai(v: str) -> bool:
    body = v[3:]
    return _ok_token(v) and sum(c.isdigit() for c in body) >= 2 and sum(c.isalpha() for c in body) >= 8


def _ok_pem(v: str) -> bool:
    """The block holds key material: base64 between its header and footer, not ``...`` or prose.
    Its line breaks may be LF, CR LF or CR, ``\\n`` (a key inside a JSON string: a cloud
    service-account file), or spaces (a key pasted on one line)."""
    body = re.sub(r"^-----BEGIN [^-]*-----|-----END [^-]*-----$", "", v.strip())
    body = re.sub(r"(?m)^[ \t]*[A-Za-z-]+:[^\r\n]*$", "", body.replace("\\r", "\r").replace("\\n", "\n"))  # Proc-Type:, DEK-Info:
    body = re.sub(r"\s+", "", body)
    return len(body) >= 40 and re.fullmatch(r"[A-Za-z0-9+/=]+", body) is not None


def _quotes(v: str) -> int:
    """How many characters quote ``v`` on each side: 1 (`"…"`), 2 (`\\"…\\"`, escaped) or 0."""
    if v[:2] in ('\\"', "\\'") and v[-2:] == v[:2] and len(v) >= 4:
        return 2
    return 1 if v[:1] in "'\"`" and v[-1:] == v[:1] and len(v) >= 2 else 0


def _ok_generic(v: str) -> bool:
    q = _quotes(v)
    inner = v[q:len(v) - q]
    if inner in _KNOWN_EXAMPLES or is_placeholder(inner) or any(c.isspace() for c in inner):
        return False
    if inner.isdigit():  # `token: 5`, a PIN-length number is never worth a report
        return False
    if re.fullmatch(r"0x[0-9a-fA-F]{40}", inner):
        return False  # a public blockchain address (`token: 0xA0b8…` names a currency)
    if re.search(r"[()\[\]{}<>]", inner) or _looks_like_path(inner):
        return False  # code (calls, indexing), templates, or a path to a credentials file
    return _random_segment(inner) or _mixed_classes(inner)


def _mixed_classes(v: str) -> bool:
    """A password a person chose with symbols (`Xk#9mP!q2z`): upper and lower case, a digit and a symbol."""
    return (len(v) >= 10 and any(c.isupper() for c in v) and any(c.islower() for c in v)
            and any(c.isdigit() for c in v) and any(not c.isalnum() for c in v))


def _looks_like_path(v: str) -> bool:
    return ("/" in v or "\\" in v) and re.search(r"\.[A-Za-z]{2,5}$", v) is not None or v.startswith(("./", "~/"))


def _random_segment(v: str) -> bool:
    """True when ``v`` holds machine-made randomness, not words a person typed.

    A secret has a run of at least 8 letters and digits (two or more) mixed (``Xk93mPq2``, hex digests);
    ``hardcoded-value``, ``sk-or-v1-project1-key`` and ``default`` do not.
    """
    for seg in re.split(r"[^A-Za-z0-9]+", v):
        if len(seg) >= 8 and sum(c.isdigit() for c in seg) >= 2 and any(c.isalpha() for c in seg):
            return True
    return False


def _ok_bearer(v: str) -> bool:
    return not is_placeholder(v) and _random_looking(v, 12)


# Hosts of examples and of a developer's own machine, matched whole (`db.acme-corp.io` or
# `server01.acme.io` are real hosts, whose passwords are real; so is a compose service named `db`).
_URL_PLACEHOLDER_HOSTS = frozenset({"localhost", "127.0.0.1", "0.0.0.0", "[::1]", "host", "server", "hostname",
                                    "host.docker.internal"})
# The host name itself: a bracketed IPv6 literal, or letters, digits, dots and hyphens (prose may
# follow it: `…@localhost).`, `…@localhost,`).
_HOST_NAME = LazyPattern(r"\[[0-9a-f:.]*\]|[a-z0-9.-]*")
_URL_EXAMPLE_DOMAINS = LazyPattern(r"(^|[.@])example\.(com|org|net)\b|\.(local|test|example|invalid)\b")


def _ok_url(v: str) -> bool:
    # v is "user:password@host…"; only the password decides, the host can make it a local example
    creds, _, host = v.rpartition("@")
    _, _, password = creds.partition(":")
    if re.search(r"[.\]][+*]|\\", password):  # a pattern (`http.?://.+:.+@.*`), not a password
        return False
    low_host = host.lower()
    if _HOST_NAME.match(low_host).group().rstrip(".") in _URL_PLACEHOLDER_HOSTS or _URL_EXAMPLE_DOMAINS.search(low_host):
        return False
    return not is_placeholder(password) and password.lower() not in {"pass", "pwd", "pw", "admin", "root", "guest"}


def _ok_slack(v: str) -> bool:
    return _ok_token(v) and sum(c.isdigit() for c in v) >= 4


def _ok_user_password(v: str) -> bool:
    """``curl -u user:password``: the password decides, as in an assignment."""
    _, _, password = v.partition(":")
    return bool(password) and _ok_generic(password)


_REFERENCE_WHOLE = LazyPattern(
    r"\$\{[^}]*\}|\$\(?[A-Za-z_][A-Za-z0-9_]*\)?|%[A-Za-z_][A-Za-z0-9_]*%|\{\{[^}]*\}\}|<[^<>]*>|\[[^\[\]]*\]")


def is_reference(value: str) -> bool:
    """True when ``value`` is plainly not a credential but a reference to one or a mask: empty,
    ``${VAR}``, ``$VAR``, ``%VAR%``, ``{{ var }}``, ``<your-token>``, ``[REDACTED:…]``, ``****``, ``...``.
    The publishing gate publishes nothing else assigned to a credential's name (lint's stand-in
    words, `changeme` or `hunter2`, are guesses; a wrong guess would publish a password)."""
    v = value.strip().strip("'\"`")
    if v[:2] in ('\\"', "\\'"):
        v = v[2:-2] if len(v) >= 4 and v[-2:] == v[:2] else v[2:]
    if not v or set(v) <= _FILLER or "..." in v or "…" in v:
        return True
    return _REFERENCE_WHOLE.fullmatch(v) is not None


# Code, not a value: `args.password`, `process.env.TOKEN`, `settings.SECRET_KEY`, `get_token()`.
_DOTTED = LazyPattern(r"[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z_$][A-Za-z0-9_$]*)+")
_NOT_VALUES = _TYPE_WORDS | {"nil", "undefined", "yes", "no", "on", "off"}


def _strict_value(v: str) -> bool:
    """The publishing gate's test of an assigned value: anything but a reference, a type name or code."""
    q = _quotes(v)
    inner = v[q:len(v) - q]
    if is_reference(inner) or inner.lower() in _NOT_VALUES or inner.endswith(":"):
        return False
    if re.search(r"[()\[\]{}<>]", inner) or _DOTTED.fullmatch(inner) or _looks_like_path(inner):
        return False
    if q == 0 and (inner in _CODE_WORDS or _SNAKE_NAME.fullmatch(inner) and _CREDENTIAL_WORD.search(inner)):
        return False  # code: `api_key=api_key`, `secret = await …`, `token=continuation_token`
    return not (q == 0 and inner.isdigit() and len(inner) < 4)  # (`token: 5`, a count)


_CODE_WORDS = frozenset({"await", "new", "self", "this", "function", "lambda", "return", "def", "var", "let", "const"})
_SNAKE_NAME = LazyPattern(r"[a-z_][a-z0-9_]*")
_CREDENTIAL_WORD = LazyPattern(r"pass|pwd|secret|token|key")


def _strict_url(v: str) -> bool:
    creds, _, _ = v.rpartition("@")
    _, _, password = creds.partition(":")
    return not re.search(r"[.\]][+*]|\\", password) and not is_reference(password)


@dataclass(frozen=True, slots=True)
class _Pattern:
    kind: str
    regex: Pattern[str] | LazyPattern  # (compiled when first used: most runs never use most)
    triggers: tuple[str, ...]  # lower-case substrings; the regex runs only when one is present
    accept: Callable[[str], bool]
    group: int | str = 0  # the group that is the secret (its span is reported and redacted)
    span_group: int | str | None = None  # a narrower group to redact, when it differs from `group`
    lower: bool = False  # match the key case-insensitively (on lower-cased text, which is faster than (?i))
    assignment: bool = False  # needs `<trigger>[a-z_-]*["'`]?\s*[:=]` somewhere (a cheap check before the regex)
    prefilter: Pattern[str] | LazyPattern | None = None  # instead of triggers: a literal search in the original text
    # Every match starts with one of these literals (lower-case for `lower` patterns): the regex is
    # tried only where they occur instead of at every character (a pattern that opens with `\b`, a
    # group or `(?i)` has no literal prefix the regex engine could search for by itself)
    starts: tuple[str, ...] = ()
    # The publishing gate's acceptance (``scan(strict=True)``): None means "anything that is not
    # plainly a reference" (``is_reference``); lint's heuristics (stand-in words, randomness) are not used.
    strict: Callable[[str], bool] | None = None


# The names a credential is assigned to.  A name may have a prefix (`DB_PASSWORD`, `dbPassword`,
# `apiSecret`, `SessionToken`: where the key starts is checked by ``_key_starts_word``) and a `…key`
# suffix (`secret_key`, `SecretAccessKey`).
_ASSIGN_KEYS = (
    r"(?P<key>(?:pass(?:word|wd|phrase)?|pwd|secret|token|api[_-]?key|private[_-]?key|access[_-]?key|"
    r"account[_-]?key|signing[_-]?key|encryption[_-]?key|master[_-]?key)(?:[_-]?(?:access[_-]?)?key)?)"
)
# A value: quoted on one line, or unquoted up to whitespace/punctuation that ends a value.  Quotes
# escaped with a backslash are quotes too: the assignment is inside a JSON or YAML double-quoted
# string (`"env": "API_KEY=\\"…\\""`, `description: "… password = \\"…\\""`).
_VALUE = (r"(?P<value>\\\"[^\"\\\n]{0,200}\\\"|\\'[^'\\\n]{0,200}\\'|"
          r"\"[^\"\n]{0,200}\"|'[^'\n]{0,200}'|[^\s\"',;=][^\s\"',;]{0,200})")

# Between a key and its value: a closing quote (escaped too: JSON inside a YAML or JSON string), or
# the `**`/`__` closing a Markdown bold label (`- **Client Secret**: `c77b…``, how a skill's notes
# list credentials), then `:`, `=` or `:=`.
_KEY_END = r"(?:\\?[\"'`]|\*\*|__)?[ \t]*(?::=|[:=])[ \t]*"


def _token(kind: str, regex: str, starts: tuple[str, ...], accept: Callable[[str], bool] | None = None,
           group: int | str = 0) -> _Pattern:
    """A provider format with fixed literal prefixes (``starts``).  No word boundary before it: a
    token right after letters (SQLite stores `githubghp_…` in a binary page) is still a token."""
    return _Pattern(kind, LazyPattern(regex, re.A), tuple(sorted({s.lower() for s in starts})), accept or _ok_token,
                    group, starts=starts)


# Order is priority: on overlapping matches the earlier kind wins.  The provider formats' `\b` is
# ASCII's (re.A): a key glued to a non-ASCII letter, as in Chinese or Japanese prose (`使用ghp_…`) or in
# a binary file read one character per byte (the byte before it `é` or `þ`), is still delimited.
PATTERNS: tuple[_Pattern, ...] = (
    _Pattern("private-key", LazyPattern(
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        re.S), ("private key",), _ok_pem, strict=_ok_pem),
    _Pattern("putty-private-key", LazyPattern(
        r"private-lines:[ \t]*\d+[ \t]*\r?\n(?P<v>(?:[a-z0-9+/=]{8,}[ \t]*\r?\n?)+)"),
        ("private-lines",), _ok_token, "v", lower=True, starts=("private-lines",)),
    _Pattern("aws-access-key-id", LazyPattern(r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|A3T[A-Z0-9])[A-Z2-7]{16}\b", re.A),
             (), _ok_token, prefilter=LazyPattern("A(?:KIA|SIA|BIA|CCA|GPA|IDA|ROA|IPA|NPA|NVA|3T)")),
    _Pattern("aws-secret-access-key", LazyPattern(
        r"(?i)(?:aws_?secret(?:_?access)?_?key|secretaccesskey|aws_?session_?token|sessiontoken)\\?[\"']?\s*[:=]\s*\\?[\"']?"
        r"(?P<v>[A-Za-z0-9/+=]{40,})(?![A-Za-z0-9/+=])"),
        ("secret", "token"), _ok_token, "v", lower=True, assignment=True, starts=("aws", "secretaccesskey", "sessiontoken")),
    _token("gcp-api-key", r"AIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])", ("AIza",)),
    _token("google-oauth-secret", r"GOCSPX-[A-Za-z0-9_\-]{24,40}(?![A-Za-z0-9_\-])", ("GOCSPX-",)),
    _token("github-token", r"(?:gh[pousr]_[A-Za-z0-9_]{36,255}|github_pat_[A-Za-z0-9_]{50,255})(?![A-Za-z0-9_])",
           ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    _token("gitlab-token", r"(?:(?:glpat|gldt|glft|glsoat|glrt|glcbt|glimt|glptt|gloas|glagent)-|GR1348941)"
           r"[A-Za-z0-9_\-]{20,128}(?![A-Za-z0-9_\-])",
           ("glpat-", "gldt-", "glft-", "glsoat-", "glrt-", "glcbt-", "glimt-", "glptt-", "gloas-", "glagent-", "GR1348941")),
    _token("slack-token", r"(?:xox[abposre]|xapp)-(?:[0-9]+-)?(?:[A-Za-z0-9]{1,40}-)+[A-Za-z0-9]{6,}(?![A-Za-z0-9-])",
           ("xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-", "xoxe-", "xapp-"), _ok_slack),
    _Pattern("slack-webhook", LazyPattern(
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v>T[A-Za-z0-9_]{6,}/[A-Za-z0-9_/]{8,})", re.I),
        ("hooks.slack.com/",), _ok_token, "v", starts=("hooks.slack.com/",), lower=True),
    _token("anthropic-api-key", r"sk-ant-[A-Za-z0-9_\-]{20,}", ("sk-ant-",)),
    _token("stripe-secret-key", r"(?:(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9+/=]{24,})(?![A-Za-z0-9])",
           ("sk_live_", "rk_live_", "sk_test_", "rk_test_", "whsec_")),
    _token("sendgrid-api-key", r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}(?![A-Za-z0-9_\-])", ("SG.",)),
    _token("huggingface-token", r"hf_[A-Za-z0-9]{30,40}(?![A-Za-z0-9])", ("hf_",)),
    _token("npm-token", r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])", ("npm_",)),
    _token("pypi-token", r"pypi-AgE[A-Za-z0-9_\-]{50,}", ("pypi-AgE",)),
    _token("shopify-token", r"(?:shppa|shpca|shpat|shpss)_[a-fA-F0-9]{32,64}(?![A-Za-z0-9])",
           ("shppa_", "shpca_", "shpat_", "shpss_")),
    _token("vendor-token", r"(?:lin_api_[A-Za-z0-9_]{32,128}|gsk_[A-Za-z0-9]{52}|ntn_[0-9]{11}[A-Za-z0-9]{35}|"
           r"dckr_pat_[A-Za-z0-9_\-]{27}|figd_[A-Za-z0-9_\-]{40,200}|(?:cfk|cfut|cfat)_[A-Za-z0-9]{48}|"
           r"tskey-[a-z]{2,20}-[0-9A-Za-z_]{8,40}-[0-9A-Za-z_]{16,60}|hv[sbr]\.[A-Za-z0-9_\-]{90,300}|"
           r"(?:vcp|vci|vca|vcr|vck)_[A-Za-z0-9]{20,60}|dapi[a-f0-9]{32}|glc_[A-Za-z0-9+/]{32,400}={0,2}|"
           r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|ops_ey[A-Za-z0-9+/=]{100,1280}|sq0csp-[0-9A-Za-z_\-]{43}|"
           r"sq0atp-[0-9A-Za-z_\-]{22})(?![A-Za-z0-9_\-])",
           ("lin_api_", "gsk_", "ntn_", "dckr_pat_", "figd_", "cfk_", "cfut_", "cfat_", "tskey-", "hvs.", "hvb.", "hvr.",
            "vcp_", "vci_", "vca_", "vcr_", "vck_", "dapi", "glc_", "glsa_", "ops_ey", "sq0csp-", "sq0atp-")),
    _Pattern("twilio-key", LazyPattern(r"\b(?:SK|AC)[0-9a-f]{32}\b", re.A), (), _ok_token,
             prefilter=LazyPattern("(?:SK|AC)[0-9a-f]{32}")),
    _Pattern("discord-bot-token", LazyPattern(r"\b[MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}\b", re.A),
             (), _ok_token, prefilter=LazyPattern(r"[MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.")),
    _Pattern("telegram-bot-token", LazyPattern(r"\b[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}(?![A-Za-z0-9_\-])", re.A), (), _ok_token,
             prefilter=LazyPattern(r"[0-9]{8}:AA")),
    _Pattern("mailchimp-api-key", LazyPattern(r"\b[0-9a-f]{32}-us[0-9]{1,2}\b", re.A), (), _ok_token,
             prefilter=LazyPattern(r"[0-9a-f]{32}-us[0-9]")),
    _Pattern("azure-storage-key", LazyPattern(
        r"(?:accountkey|sharedaccesskey)=(?P<v>[a-z0-9+/=]{30,100})", re.I),
        ("accountkey=", "sharedaccesskey="), _ok_token, "v", lower=True, starts=("accountkey=", "sharedaccesskey=")),
    _Pattern("azure-sas-signature", LazyPattern(r"[?&;]sig=(?P<v>[a-z0-9%+/=]{30,200})"),
             ("sig=",), _ok_token, "v", lower=True, starts=("?sig=", "&sig=", ";sig=")),
    _Pattern("npm-auth-token", LazyPattern(r"(?<![^:\n])_(?:authtoken|auth|password)[ \t]*=[ \t]*(?P<v>[^\s$][^\s]{7,})"),
             ("_auth", "_password"), _ok_token, "v", lower=True, starts=("_auth", "_password")),  # (an .npmrc line)
    _token("openai-api-key", r"\bsk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", ("sk-",), _ok_openai),
    _token("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}", ("eyJ",)),
    _Pattern("bearer-token", LazyPattern(
        r"(?i)authorization\\?[\"']?\s*[:=]\s*\\?[\"']?(?:bearer|token|basic)\s+(?P<v>[A-Za-z0-9._~+/\-]+=*)"),
        ("authorization",), _ok_bearer, "v", lower=True, starts=("authorization",)),
    _Pattern("basic-auth-credentials", LazyPattern(
        r"(?<![a-z0-9_-])(?:-u|--user)[ \t=]+[\"']?(?P<v>[^\s:\"'$]+:(?P<pw>[^\s\"']+))"),
        ("-u",), _ok_user_password, "v", "pw", starts=("-u", "--user")),
    _Pattern("url-credentials", LazyPattern(
        r"://(?P<v>[^\s:/@'\"<>`]*:(?P<pw>[^\s/'\"<>`]+)@[^\s/@'\"<>`]+)"),
        ("://",), _ok_url, "v", "pw", strict=_strict_url),
    _Pattern("password-assignment", LazyPattern(
        r"(?P<key>pass(?:word|wd|phrase)?|pwd)" + _KEY_END + _VALUE),
        ("pass", "pwd"), _ok_generic, "value", lower=True, assignment=True, starts=("pass", "pwd"),
        strict=_strict_value),
    _Pattern("secret-assignment", LazyPattern(_ASSIGN_KEYS + _KEY_END + _VALUE),
        ("secret", "token", "key"), _ok_generic, "value", lower=True, assignment=True,
        starts=("pass", "pwd", "secret", "token", "api", "access", "private", "account", "signing", "encryption",
                "master"), strict=_strict_value),  # _ASSIGN_KEYS
)

# `FROM_TOKEN=0x…`, `SPL_TOKEN=EPjF…`: a token here is a currency, not a credential.
_CURRENCY_KEY = LazyPattern(r"(?i)(?:from|to|in|out|sell|buy|dst|src|dest|spl|input|output|base|quote|native|reward|"
                           r"stake|erc20|payment)[_-]$")

# `PublicKeyToken=b03f…` (.NET), `publishable_key`, `max_tokens`, `next_page_token`: named like a
# credential, published on purpose or not one at all.
_PUBLIC_KEY = LazyPattern(r"(?i)(?:public|publishable|max|num|total|next|page)[_-]?(?:key[_-]?)?$")

# Every trigger, checked with `in` (a fast substring search; one regex alternation of them all is ~10x slower;
# the many short case-sensitive prefixes of AWS and GitHub tokens are one literal regex each instead).
# A trigger that contains another is looked for only where the shorter one was found (a miss costs
# a scan of the whole text; most texts hold neither).
_IMPLIED = {"sk-ant-": "sk-", "private key": "key"}
_TRIGGERS: tuple[str, ...] = tuple(sorted({t for p in PATTERNS for t in p.triggers} - _IMPLIED.keys()))
_PREFILTERED = frozenset(p.kind for p in PATTERNS if p.prefilter is not None)
_ASSIGNED = "="  # "=<kind>": an assignment pattern's key is followed by `:` or `=` somewhere (``_assigned``)
_STARTS = "^"  # "^<literal>": a lower-case pattern's start literal occurs (with google-re2 only)


# What the lower-cased text holds wherever one of the prefiltered formats occurs in the text: AWS's
# prefixes, a run of 32 hex digits (Twilio, Mailchimp), Telegram's `digits:AA`, Discord's `.xxxxxx.`
# (in the automaton, one small pattern: where it is found, ``_PREFILTER_ANY`` decides on the text).
_PREFILTER_NECESSARY = rb"a(?:kia|sia|bia|cca|gpa|ida|roa|ipa|npa|nva|3t)|[0-9a-f]{32}|[0-9]{8}:aa|\.[a-z0-9_\-]{6}\."
_PREFILTERED_MAYBE = "?prefiltered"  # the automaton's name for it


def _trigger_set() -> tuple[object, tuple[str, ...]] | None:
    """With google-re2: one automaton of every trigger (the implied ones too), matched against the
    text in one pass, ignoring ASCII case (a fourth of the cost of a search per trigger on a typical
    SKILL.md: lint's costliest rule).

    The prefiltered formats are not in it, only ``_PREFILTER_NECESSARY`` (then ``_PREFILTER_ANY``
    searches for them in the text): their counted classes (`[0-9a-f]{32}`, `[A-Za-z0-9_\\-]{23,25}`)
    multiply the states of a set's automaton, which then kept resetting its cache: 48 ns a byte on
    openclaw/skills' 37 MB of text instead of 3.5, over a third of that repository's lint."""
    if _re2 is None:
        return None
    needles = (*_TRIGGERS, *_IMPLIED)
    options = _re2.Options()
    options.encoding = _re2.Options.Encoding.LATIN1  # (bytes in: only ASCII literals are looked for)
    options.case_sensitive = False  # (the patterns are lower-case: this reads `API_KEY` as `api_key`)
    automaton = _re2.Set.SearchSet(options)
    for needle in needles:
        automaton.Add(re.escape(needle).encode())
    # An assignment pattern's necessary condition (``_assigned``): one of its triggers, then
    # ``_AFTER_KEY``, whose ``\s`` is Unicode's: any byte of a non-ASCII character stands for it here
    # (wider, never narrower: the pattern's own regex decides).
    assigning = tuple(p for p in PATTERNS if p.assignment)
    for p in assigning:
        keys = "|".join(re.escape(t) for t in p.triggers)
        automaton.Add(f"(?:{keys})".encode() + rb"[a-z0-9_\-]*(?:\\?[\"'`]|\*\*)?[\t\n\x0b\x0c\r \x1c-\x1f\x80-\xff]*[:=]")
    # Which of the lower-case patterns' start literals occur (``_STARTS`` + literal): where a pattern
    # runs, only those are searched for (a search for each literal is a scan of the whole text).
    starts = tuple(sorted({s for p in PATTERNS if p.lower for s in p.starts}))
    for literal in starts:
        automaton.Add(re.escape(literal).encode())
    automaton.Add(_PREFILTER_NECESSARY)
    automaton.Compile()
    # (the compiled set itself when the wrapper exposes it: its Match is one Python call more per
    # text, ~35,000 texts in a 10,000-skill lint; both return an empty answer as falsy)
    names = (*needles, *(_ASSIGNED + p.kind for p in assigning), *(_STARTS + s for s in starts), _PREFILTERED_MAYBE)
    return getattr(automaton, "_set", automaton), names


def _prefilter_any() -> object | None:
    """With google-re2: one search for every prefiltered format at once, on the original text; a
    hit (rare: a few files of a repository) lets each format's own prefilter decide."""
    if _re2 is None:
        return None
    options = _re2.Options()
    options.encoding = _re2.Options.Encoding.LATIN1  # (their classes are ASCII: other bytes never match)
    return _re2.compile("|".join(f"(?:{p.prefilter.pattern})" for p in PATTERNS if p.prefilter is not None).encode(),
                        options)


_TRIGGER_SET = _trigger_set()
_PREFILTER_ANY = _prefilter_any()


def _present(text: str) -> set[str]:
    """The triggers found in ``text`` lower-cased; the kinds of the prefiltered formats where their
    own prefilter still has to decide; ``=<kind>`` for the assignment patterns whose key is followed
    by `:` or `=`."""
    if _TRIGGER_SET is not None:
        automaton, names = _TRIGGER_SET
        # The automaton ignores ASCII case itself: ASCII text (nearly every file) is matched as it
        # is, without a lower-cased copy (a pass over every byte, for files where nothing is found).
        # Other text is lower-cased first, as the patterns read it: a few non-ASCII letters become
        # ASCII ones (the Kelvin sign `K` becomes `k`).  ASCII is kept byte for byte whatever the
        # encoding: a lone surrogate (from JSON's \\ud800) cannot make a trigger appear or vanish.
        folded = text if text.isascii() else text.lower()
        found = automaton.Match(folded.encode("utf-8", "surrogatepass"))  # type: ignore[attr-defined]
        present = {names[i] for i in found} if found else set()
        if _PREFILTERED_MAYBE in present:
            present.discard(_PREFILTERED_MAYBE)
            if _PREFILTER_ANY.search(text.encode("utf-8", "surrogatepass")):  # type: ignore[attr-defined]
                present.update(_PREFILTERED)
        return present
    low = text.lower()
    present = {t for t in _TRIGGERS if t in low}
    present.update(t for t, base in _IMPLIED.items() if base in present and t in low)
    present.update(_PREFILTERED)
    last = None
    for p in PATTERNS:
        if p.assignment and not present.isdisjoint(p.triggers):
            if last is None:  # (an occurrence after the last `:` or `=` cannot be followed by one)
                last = max(low.rfind(":"), low.rfind("="))
            if _assigned(low, p.triggers, last):
                present.add(_ASSIGNED + p.kind)
    return present
# What follows a trigger in a `key = value` assignment (the key's rest, a quote, blanks, `:` or `=`):
# a necessary condition of the assignment patterns, tested at each occurrence before running them.
_AFTER_KEY = LazyPattern(r"[a-z0-9_\-]*(?:\\?[\"'`]|\*\*)?\s*[:=]")  # (`__` is in the key's rest)


def _assigned(low: str, triggers: tuple[str, ...], last: int | None = None) -> bool:
    """Some occurrence of a trigger in ``low`` is followed by what an assignment needs.

    ``last``: the offset of the last ``:`` or ``=`` in ``low``; an occurrence after it cannot be
    followed by one (prose mentions "token" often, and rarely after its last colon).
    """
    if last is None:
        last = max(low.rfind(":"), low.rfind("="))
    for t in triggers:
        pos = low.find(t)
        while 0 <= pos and pos + len(t) <= last:
            if _AFTER_KEY.match(low, pos + len(t)):
                return True
            pos = low.find(t, pos + 1)
    return False


def _matches_at(regex: Pattern[str], text: str, starts: tuple[str, ...]) -> Iterator[re.Match[str]]:
    """``regex.finditer(text)`` for a regex whose every match starts with one of ``starts``."""
    positions = []
    for literal in starts:
        pos = text.find(literal)
        while pos >= 0:
            positions.append(pos)
            pos = text.find(literal, pos + 1)
    end = 0
    for pos in sorted(positions):
        if pos < end:  # inside the previous match (finditer resumes after it)
            continue
        m = regex.match(text, pos)
        if m:
            yield m
            end = m.end()


class _Rematch:
    """A match found in lower-cased text, read back from the original text (same offsets)."""

    __slots__ = ("_m", "_text")

    def __init__(self, m: re.Match[str], text: str) -> None:
        self._m, self._text = m, text

    def group(self, g: int | str = 0) -> str:
        start, end = self._m.span(g)
        return self._text[start:end]

    def span(self, g: int | str = 0) -> tuple[int, int]:
        return self._m.span(g)

    def start(self, g: int | str = 0) -> int:
        return self._m.start(g)

    def end(self, g: int | str = 0) -> int:
        return self._m.end(g)


KINDS: tuple[str, ...] = tuple(p.kind for p in PATTERNS)
SECRET_RULE = "B707"  # the lint rule that reports what this scanner finds (the build and import ask for it)


def _key_starts_word(text: str, start: int) -> bool:
    """A credential name starts where a word or a camelCase part does: `DB_PASSWORD`, `dbPassword`,
    `apiSecret`, `SessionToken`; not `bypass` nor `BYPASS`."""
    if start == 0 or not (text[start - 1].isascii() and text[start - 1].isalnum()):
        return True  # (a non-ASCII letter: CJK prose, or a binary file's byte read as Latin-1)
    return text[start].isupper() and (text[start - 1].islower() or text[start - 1].isdigit())


def _strict_accepts(pat: _Pattern, text: str, m: re.Match[str] | _Rematch, value: str) -> bool:
    if pat.group != "value":
        return (pat.strict or (lambda v: not is_reference(v)))(value)
    if m.group("key").lower() == "pass":
        return False  # (`pass: true`, a test's verdict: only lint's reading of a bare `pass`)
    if pat.strict is None or not pat.strict(value):
        return False
    # `Password: the one you chose`: prose after a colon, not an assignment (an unquoted lower-case
    # word that a sentence goes on after); `password=hunter` is one whatever follows
    end = m.end(pat.group)
    after_colon = text[m.start(pat.group) - 1:m.start(pat.group)].strip() in ("", ":") and "=" not in text[
        m.end("key"):m.start(pat.group)]
    return not (after_colon and value.isalpha() and value.islower() and re.match(r" [A-Za-z]", text[end:end + 2]))


# What ``_present`` found -> the patterns that may match.  Texts share a few such sets (the synthetic
# corpus's prose names "token" and "secret" and assigns nothing: no pattern runs), so the test of
# every pattern's triggers is made once per set instead of once per text.
_CANDIDATES: dict[frozenset[str], tuple[_Pattern, ...]] = {}


def _candidates(present: set[str]) -> tuple[_Pattern, ...]:
    key = frozenset(present)
    found = _CANDIDATES.get(key)
    if found is None:
        found = tuple(
            p for p in PATTERNS
            if (p.kind in present if p.prefilter is not None else not present.isdisjoint(p.triggers))
            and (not p.assignment or _ASSIGNED + p.kind in present)
        )
        if len(_CANDIDATES) > 4096:
            _CANDIDATES.clear()
        _CANDIDATES[key] = found
    return found


def scan(text: str, strict: bool = False) -> list[SecretMatch]:
    """Every likely secret in ``text``, ordered by position (never overlapping).

    ``strict``: the publishing gate's reading (build, pack, export, memory freeze): a value assigned
    to a credential's name, or in a provider's format, is a secret unless it is plainly a reference
    (``is_reference``); lint's guesses that a value is a stand-in are not used."""
    present = _present(text)
    candidates = _candidates(present) if present else ()
    if not candidates:  # (no trigger, or none a pattern needs: no pattern can match; most files)
        return []
    low: str | None = None  # (made when a lower-case pattern runs: most files with a trigger run none)
    same_length = True  # lower() can change lengths (İ); then fall back to (?i)
    found: list[tuple[int, int, str]] = []
    # The spans kept so far, disjoint, sorted by start (so their ends are sorted too): a new match
    # can only overlap the last one starting before its end (a file full of keys: no quadratic scan).
    taken_starts: list[int] = []
    taken_ends: list[int] = []
    for pat in candidates:
        if pat.prefilter is not None and not pat.prefilter.search(text):
            continue
        if pat.lower and low is None:
            low = text.lower()
            same_length = len(low) == len(text)
        haystack = low if pat.lower and same_length else text
        regex = re.compile(pat.regex.pattern, re.I) if pat.lower and not same_length else pat.regex
        # (a lower-case pattern on the original text, after a length-changing lower(), has no literals)
        if pat.starts and (haystack is low or not pat.lower):
            literals = pat.starts
            if haystack is low and _TRIGGER_SET is not None:  # (the automaton saw which occur)
                literals = tuple(lit for lit in literals if _STARTS + lit in present)
            found_here = _matches_at(regex, haystack, literals)
        else:
            found_here = regex.finditer(haystack)
        for m in found_here:
            if haystack is not text:
                m = _Rematch(m, text)
            value = m.group(pat.group)
            if pat.group == "value" and not _key_starts_word(text, m.start("key")):
                continue  # (`bypass:`, `compass =`: a word that ends like a key)
            if not pat.accept(value) and not (strict and _strict_accepts(pat, text, m, value)):
                continue
            if pat.group == "value" and (_CURRENCY_KEY.search(text, max(0, m.start("key") - 12), m.start("key"))
                                         or _PUBLIC_KEY.search(text, max(0, m.start("key") - 12), m.start("key"))):
                continue
            g = pat.span_group if pat.span_group is not None else pat.group
            start, end = m.span(g)
            if pat.group == "value" and value[:1] in "'\"\\":  # redact inside the quotes
                q = 1 if value[:1] != "\\" else _quotes(value)
                start, end = start + q, end - q
            i = bisect.bisect_left(taken_starts, end)
            if i and taken_ends[i - 1] > start:
                continue
            taken_starts.insert(i, start)
            taken_ends.insert(i, end)
            found.append((start, end, pat.kind))
    if not found:
        return []
    found.sort()
    line_starts = [0]
    line_starts.extend(m.end() for m in re.finditer("\n", text))
    out = []
    for start, end, kind in found:
        line = bisect.bisect_right(line_starts, start)
        out.append(SecretMatch(kind, start, end, line, start - line_starts[line - 1] + 1))
    return out


def scan_bytes(data: bytes, strict: bool = False) -> list[SecretMatch]:
    """``scan`` of a file's bytes, whatever they hold: UTF-8 as text, anything else one character per
    byte (keys and tokens are ASCII, so a token inside a binary file or a file in another encoding is
    found too).  UTF-16 (what Windows PowerShell writes by default) is read as such when it starts
    with a byte-order mark; other text with NUL bytes between its characters (UTF-16 without a mark,
    wide strings in a binary) is scanned again without them.  What is about to be published is
    scanned whole, however large."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            return scan(data.decode("utf-16"), strict)
        except UnicodeDecodeError:
            pass
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    found = scan(text, strict)
    if not found and b"\0" in data:
        found = scan(data.replace(b"\0", b"").decode("latin-1"), strict)
    return found


def redact(text: str, strict: bool = False) -> tuple[str, dict[str, int]]:
    """``text`` with every likely secret replaced by ``[REDACTED:<kind>]``, and counts per kind
    (``strict``: as ``scan``'s)."""
    matches = scan(text, strict)
    if not matches:
        return text, {}
    parts: list[str] = []
    counts: dict[str, int] = {}
    pos = 0
    for m in matches:
        parts.append(text[pos:m.start])
        parts.append(f"[REDACTED:{m.kind}]")
        counts[m.kind] = counts.get(m.kind, 0) + 1
        pos = m.end
    parts.append(text[pos:])
    return "".join(parts), dict(sorted(counts.items()))
