"""The secret scanner: every kind is found, placeholders are not, values never leak into reprs."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillc import secrets
from skillc.secrets import KINDS, PATTERNS, SecretMatch, is_placeholder, redact, scan


@pytest.fixture(autouse=True, params=["re2", "substring"])
def trigger_engine(request, monkeypatch):
    """Every test runs twice: with google-re2's one-pass trigger search (a dependency, what users
    run) and with the search per trigger a platform without its wheel falls back to."""
    if request.param == "re2":
        assert secrets._TRIGGER_SET is not None, "google-re2 is a dependency of skillc: pip install google-re2"
    else:
        monkeypatch.setattr(secrets, "_TRIGGER_SET", None)
    return request.param

# Fake credentials are assembled from pieces so that this file itself does not look like a leak.
AWS_ID = "AKIA" + "Q3EGRT7KZ5XW2MPL"
AWS_SECRET = "Jx8f2Lq9" + "Zr4Vt7Wm1Ks5Nd3Bp6Yh0Cg2Ea8Ru4Oi"
GCP = "AIza" + "SyD4k9Lm2Nq8Rt5Vw1Xz7Bc3Fg6Hj0Kp9Qs"
GHP = "ghp_" + "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
GH_PAT = "github_pat_" + "11AQ7ZK3Y0" + "mxgJTeKdNnFRIBXuDL7D_xtpYlSXpfKtHF4vUCsMehGAkWvj7FAc9QeWJKY4"
SLACK = "xoxb-" + "730519284016-4918273650192-" + "KLzdocJ2isAjIhKtJ0RlgLKO"
OPENAI = "sk-" + "proj-" + "Ab3dEf9hIj2lMn7pQr1tUv5xYz8AbCd"
ANTHROPIC = "sk-ant-" + "api03-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa"
STRIPE = "sk_" + "live_" + "51Hq7KLzdocJ2isAjIhKtJ0R"
JWT = "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiJhbGljZSIsInJvbGUiOiJhZG1pbiJ9" + ".k2Vb9Q8m1xZr7TcYp4LsN0fHd3WjE6gA5uIoKq"
PEM = ("-----BEGIN RSA " + "PRIVATE KEY-----\n" + "MIIEowIBAAKCAQEA7v1Qx2Lm9Zr4Vt7Wm1Ks5Nd3Bp6Yh0Cg2Ea8Ru4Oi\n" * 3
       + "-----END RSA " + "PRIVATE KEY-----")

POSITIVE = [
    ("aws-access-key-id", f"key id {AWS_ID} here", AWS_ID),
    ("aws-secret-access-key", f"aws_secret_access_key = {AWS_SECRET}\n", AWS_SECRET),
    ("gcp-api-key", f"const key = '{GCP}';", GCP),
    ("github-token", f"GITHUB_TOKEN={GHP}", GHP),
    ("github-token", f"use {GH_PAT}", GH_PAT),
    ("slack-token", f"SLACK_BOT_TOKEN: {SLACK}", SLACK),
    ("openai-api-key", f"OPENAI_API_KEY={OPENAI}", OPENAI),
    ("anthropic-api-key", f"export ANTHROPIC_API_KEY={ANTHROPIC}", ANTHROPIC),
    ("stripe-secret-key", f"stripe.api_key = '{STRIPE}'", STRIPE),
    ("jwt", f"token is {JWT}.", JWT),
    ("private-key", f"key:\n{PEM}\n", PEM),
    ("password-assignment", "DB_PASSWORD=Tq7vWz92Lm\n", "Tq7vWz92Lm"),
    ("password-assignment", 'password: "Zp4-Rw8Nq3Lv"\n', "Zp4-Rw8Nq3Lv"),
    ("password-assignment", "passwd: s3cr3tP4ss\n", "s3cr3tP4ss"),
    ("secret-assignment", "api_key=9f8e7d6c5b4a39281706\n", "9f8e7d6c5b4a39281706"),
    ("secret-assignment", '{"client_secret": "q8W2e4R6t8Y0u2I4"}', "q8W2e4R6t8Y0u2I4"),
    ("secret-assignment", "token: 7d1c2b9a8f3e4d5c\n", "7d1c2b9a8f3e4d5c"),
    ("bearer-token", "curl -H 'Authorization: Bearer 4f9a8b7c6d5e4f3a2b1c' https://api", "4f9a8b7c6d5e4f3a2b1c"),
    ("url-credentials", "git clone https://deploy:Zk29xPq81m@git.corp.internal/repo.git", "Zk29xPq81m"),
    # inside a JSON or YAML double-quoted string, whose quotes are escaped with a backslash
    ("secret-assignment", 'description: "Use when x. api_key = \\"q8W2e4R6t8Y0u2I4\\""', "q8W2e4R6t8Y0u2I4"),
    ("password-assignment", '{"cmd": "mysql --password=\\"Zp4Rw8Nq3Lv\\""}', "Zp4Rw8Nq3Lv"),
    ("secret-assignment", "cmd = 'export TOKEN=\\'7d1c2b9a8f3e4d5c\\''", "7d1c2b9a8f3e4d5c"),
]


@pytest.mark.parametrize("kind,text,secret", POSITIVE, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(POSITIVE)])
def test_each_kind_is_found_with_its_exact_span(kind, text, secret):
    matches = scan(text)
    assert [m.kind for m in matches] == [kind]
    m = matches[0]
    assert text[m.start:m.end] == secret
    redacted, counts = redact(text)
    assert secret not in redacted
    assert f"[REDACTED:{kind}]" in redacted
    assert counts == {kind: 1}


def test_every_kind_has_a_positive_case():
    from secret_forms import FORMS

    assert {k for k, _, _ in POSITIVE} | {f[1] for f in FORMS} | {"putty-private-key"} == set(KINDS)


NEGATIVE = [
    "password: <your-password>",
    "token: ${GITHUB_TOKEN}",
    "api_key = $API_KEY",
    "token: {{ secrets.TOKEN }}",
    "password: xxxxxxxx",
    "password: '********'",
    "secret: ...",
    "password: changeme",
    "api_key: your_api_key_here",
    "api_key: YOUR_API_KEY",
    "OPENAI_API_KEY=sk-...",
    "OPENAI_API_KEY=sk-your-key-here-and-more-words",
    "Authorization: Bearer $TOKEN",
    "Authorization: Bearer <token>",
    "Authorization: Bearer YOUR_ACCESS_TOKEN",
    "postgresql://user:password@localhost:5432/db",
    "https://user:pass@example.com/",
    "redis://:${REDIS_PASSWORD}@cache:6379",
    "token: str",
    "api_key: Optional[str] = None",
    "password = args.password",
    "password = os.environ['DB_PASSWORD']",
    "token = get_token()",
    "max_tokens: 1000",
    "token: 5",
    "the secret: keep prompts short",
    "`token`: the access token for the API",
    '"password": {"type": "string"}',
    '"token": "string"',
    "AWS docs use AKIAIOSFODNN7EXAMPLE as the sample key id",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----",
    "risk-assessment-framework-2024-edition is the task-12345678901234567890 name",
    "ghp_ prefix means a personal token",
    "fs = gcsfs.GCSFileSystem(token='path/to/credentials.json')",
    "export OPENROUTER_API_KEY='sk-or-v1-project1-key'",
    "modal secret create my-api-keys API_KEY=sk-xxx DB_PASSWORD=hunter2",
    "zot = Zotero(library_id='123456', api_key='ABC1234XYZ')",
    "https://api.nasa.gov/planetary/apod?api_key=DEMO_KEY&date=2024-01-15",
    'password = "hardcoded"',
    'private_key = "-----BEGIN"',
    "ADMIN_PASSWORD = 'admin123'",
    "SECRET_KEY = 'hardcoded-value'  # FLAG if committed",
    "ENV API_KEY=sk-12345",
    "password: correct-horse-battery-staple",
    "Use these test credentials: username: testuser@example.com, password: TestPass123",
    'DATABASE_URL = "postgresql://user:p@ssw0rd@prod-db.example.com/mydb"',
    'private_key = "-----BEGIN RSA PRIVATE KEY-----"\nprint(private_key)\n' + "A" * 80,
    "Example: AIza" + "SyA1B2C3D4E5F6G7H8I9J0K1L2M3N4O5P6Q",
    '"password": "testpass123",',
    "token: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',    // USDC on Ethereum",
    'SPL_TOKEN="EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"  # USDC',
    "- Example valid secret: `JBSWY3DPEHPK3PXP`",
    '"password": "SecurePass123!"',
    '"token": "0xNFTContractAddress",',
    r"grep -v 'http.?://.+:.+@.*\' ~/.bash_history  # a pattern, not a URL with a password",
]


@pytest.mark.parametrize("text", NEGATIVE)
def test_placeholders_and_code_are_not_secrets(text):
    assert scan(text) == [], text
    assert redact(text) == (text, {})


def test_positions_are_line_and_column():
    text = f"line one\n  key = {GHP}\n"
    (m,) = scan(text)
    assert (m.line, m.column) == (2, 9)


def test_repr_never_contains_the_value():
    (m,) = scan(f"x {GHP}")
    assert isinstance(m, SecretMatch)
    assert GHP not in repr(m) and GHP[4:] not in str(m)


def test_overlapping_matches_keep_the_specific_kind_once():
    (m,) = scan(f'token: "{GHP}"')
    assert m.kind == "github-token"


def test_redact_several_and_keep_the_rest_byte_exact():
    text = f"a {GHP} b\npassword=Tq7vWz92Lm c {AWS_ID}\n"
    out, counts = redact(text)
    assert out == ("a [REDACTED:github-token] b\npassword=[REDACTED:password-assignment] c "
                   "[REDACTED:aws-access-key-id]\n")
    assert counts == {"aws-access-key-id": 1, "github-token": 1, "password-assignment": 1}


def test_unclosed_private_key_block_is_redacted_to_the_end():
    text = "-----BEGIN OPENSSH " + "PRIVATE KEY-----\n" + "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAABlwAAAAdzc2gtcn\n" * 2
    (m,) = scan(text)
    assert m.kind == "private-key" and m.end == len(text)


@pytest.mark.parametrize("value,expected", [
    ("<token>", True), ("${X}", True), ("xxx", True), ("changeme", True), ("API_KEY", True),
    ("...", True), ("aaaaaaaa1", True), ("q8W2e4R6t8Y0", False), ("Tq7vWz92Lm", False), ("admin123", True),
])
def test_is_placeholder(value, expected):
    assert is_placeholder(value) is expected


def test_a_private_key_inside_a_json_key_file_is_found_and_redacted():
    """A cloud service-account file keeps its PEM in a JSON string, its line breaks written as \\n."""
    body = "MIIEvAIBADANBgkqhkiG9w0BAQEFAASCBKYwggSiAgEAAoIBAQC7VJTUt9Us8cKjMzEfYyjiWA4R4\\n" * 3
    text = ('{"type": "service_account", "private_key_id": "b08e88ff", "private_key": "-----BEGIN ' + 'PRIVATE KEY'
            + '-----\\n' + body + '-----END ' + 'PRIVATE KEY-----\\n", "client_email": "x@p.iam.gserviceaccount.com"}')
    (found,) = scan(text)
    assert found.kind == "private-key"
    redacted, counts = redact(text)
    assert "MIIEvAIB" not in redacted and counts == {"private-key": 1}


@pytest.mark.parametrize("url, secret", [
    ("postgres://app:Xk29fjQ8zLm3Pq@db.acme-corp.io:5432/app", True),  # (a real host named db.…)
    ("https://ci:Xk29fjQ8zLm3Pq@server01.acme.io/hook", True),
    ("https://u:Xk29fjQ8zLm3Pq@hosting.acme-corp.io/", True),
    ("postgres://user:Xk29fjQ8zLm3Pq@localhost:5432/db", False),  # a developer's own machine
    ("postgres://user:Xk29fjQ8zLm3Pq@db:5432/app", True),  # a compose service: a real database's password
    ("mysql://root:Xk29fjQ8zLm3Pq@host/app", False),
    # prose after the host, IPv6 loopback, a container's way to the developer's machine
    ("(for example postgres://app:Xk29fjQ8zLm3Pq@localhost).", False),
    ("DATABASE_URL=postgres://app:Xk29fjQ8zLm3Pq@localhost.", False),
    ("**postgres://app:Xk29fjQ8zLm3Pq@localhost**, then run", False),
    ("postgres://app:Xk29fjQ8zLm3Pq@[::1]:5432/app", False),
    ("postgres://app:Xk29fjQ8zLm3Pq@host.docker.internal:5432/app", False),
])
def test_url_credentials_on_real_hosts_whose_names_start_like_stand_ins(url: str, secret: bool):
    """`db`, `host`, `server` stand for a host in examples; `db.acme-corp.io` is one: its password
    was published (memory snapshots, prompt.md) because the host only *started* like a stand-in."""
    assert bool(scan(url)) is secret


# Pieces that make the scanner's triggers and prefixes appear, vanish and overlap in random text.
_PIECES = st.sampled_from([
    *(t for p in PATTERNS for t in p.triggers), *(t.upper() for p in PATTERNS for t in p.triggers),
    *(s for p in PATTERNS for s in p.starts), "AKIA", "ASIA", "ghp_", "github_pat_", "=", ": ", "\"", "'", " ", "\n",
    "@", "://", "Xk29fjQ8zLm3Pq", "7d1c2b9a8f3e4d5c", "Q3EGRT7KZ5XW2MPL", "İ", "ſ", "K", "\ud800", "…", "é",
    "\u00a0", "\u2028", "\x1c", "\t", "_key", "`",
    "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d", "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=40).map("".join))
def test_the_one_pass_trigger_search_finds_what_a_search_per_trigger_finds(text: str):
    """The same secrets, at the same places, whichever engine looks for the triggers: the one-pass
    automaton must never be narrower (a missed trigger would be a missed key) (Unicode that
    lower() changes, lone surrogates, upper-case prefixes included)."""
    found = scan(text)
    saved = secrets._TRIGGER_SET
    secrets._TRIGGER_SET = None
    try:
        assert scan(text) == found
    finally:
        secrets._TRIGGER_SET = saved


@pytest.mark.parametrize("before,after", [("\xe9", "\xfe"), ("\xc3", "\x00"), ("使用", "令牌"), ("密钥", "。")])
def test_a_key_glued_to_a_non_ascii_letter_is_found(before: str, after: str):
    # A binary file that is not UTF-8 is read one character per byte, so a byte over 0x7F next to a
    # key is a Latin-1 letter (é, þ, Ã); in Chinese or Japanese prose a key touches the words around
    # it. Either way the key is delimited (the provider formats' word boundary is ASCII's).
    for secret in (AWS_ID, GHP, GCP, SLACK, ANTHROPIC, STRIPE, OPENAI, JWT):
        text = before + secret + after
        assert [text[m.start:m.end] for m in scan(text)] == [secret]
        if all(ord(c) < 256 for c in text):
            data = b"\x89PNG\r\n\x1a\n" + text.encode("latin-1")
            assert [m.kind for m in secrets.scan_bytes(data)] == [scan(secret)[0].kind]


# ---------------------------------------------------------------- issue 17: forms the scanner missed

GLPAT = "glpat-" + "xK8mQ2vN7pR4tY6wZ9aB"
SLACK_HOOK = "https://hooks.slack.com/services/" + "T04ABCD12/B05EFGH34/" + "q8W2e4R6t8Y0u2I4o6P8a0S2"
XAPP = "xapp-1-" + "A05KLM12345-6234567890123-" + "9f8e7d6c5b4a39281706f5e4d3c2b1a0"
SENDGRID = "SG." + "Zq8W2e4R6t8Y0u2I4o6P8a" + "." + "Kd3Bp6Yh0Cg2Ea8Ru4OiJx8f2Lq9Zr4Vt7Wm1Ks5Nd"
HF = "hf_" + "QzXkWvRtYuPlMnBgFdSaEcVbNhJiKoLpQw"
WHSEC = "whsec_" + "Kd3Bp6Yh0Cg2Ea8Ru4OiJx8f2Lq9Zr4V"
SK_TEST = "sk_" + "test_" + "51Hq7KLzdocJ2isAjIhKtJ0RqW"
RK_LIVE = "rk_" + "live_" + "51Hq7KLzdocJ2isAjIhKtJ0RqW"
TWILIO = "SK" + "0f1e2d3c4b5a69788796a5b4c3d2e1f0"
GOCSPX = "GOCSPX-" + "Kd3Bp6Yh0Cg2Ea8Ru4OiJx8f2Lq9"
AZURE_KEY = "Kd3Bp6Yh0Cg2Ea8Ru4OiJx8f2Lq9Zr4Vt7Wm1Ks5NdQz8W2e4R6t8Y0u2I4o6P8a0S2d4F6g8H0j2K4l6Z8x0C2v4B6n8M0==" [:88]
SAS_SIG = "Kd3Bp6Yh0Cg2Ea8Ru4OiJx8f2Lq9Zr4Vt7Wm1Ks5Nd%3D"
AWS_SESSION = "IQoJb3JpZ2luX2VjEHMaCXVzLWVhc3QtMSJHMEUCIQ" + "Kd3Bp6Yh0Cg2Ea8Ru4OiJx8f2Lq9Zr4Vt7Wm1Ks5Nd"
MISSED = [
    ("gitlab-token", f"GITLAB_TOKEN={GLPAT}", GLPAT),
    ("slack-webhook", f"post to {SLACK_HOOK}", SLACK_HOOK.split("services/")[1]),
    ("slack-token", f"SLACK_APP_TOKEN={XAPP}", XAPP),
    ("sendgrid-api-key", f"key {SENDGRID}", SENDGRID),
    ("huggingface-token", f"HF_TOKEN={HF}", HF),
    ("stripe-secret-key", f"webhook secret {WHSEC}", WHSEC),
    ("stripe-secret-key", f"stripe.api_key = '{SK_TEST}'", SK_TEST),
    ("stripe-secret-key", f"restricted {RK_LIVE}", RK_LIVE),
    ("twilio-key", f"twilio key {TWILIO}", TWILIO),
    ("google-oauth-secret", f'"client_secret": "{GOCSPX}"', GOCSPX),
    ("azure-storage-key", f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={AZURE_KEY};EndpointSuffix=core",
     AZURE_KEY),
    ("azure-sas-signature", f"https://acme.blob.core.windows.net/c/f?sv=2022-11-02&sp=r&sig={SAS_SIG}", SAS_SIG),
    ("aws-secret-access-key", f'{{"Credentials": {{"SecretAccessKey": "{AWS_SECRET}"}}}}', AWS_SECRET),
    ("aws-secret-access-key", f'{{"SessionToken": "{AWS_SESSION}"}}', AWS_SESSION),
    ("password-assignment", "dbPassword: Xk29fjQ8zLm3Pq\n", "Xk29fjQ8zLm3Pq"),
    ("secret-assignment", 'refreshToken = "Qm7vWz92LmR4"', "Qm7vWz92LmR4"),
    ("secret-assignment", "apiSecret: 9f8e7d6c5b4a3928", "9f8e7d6c5b4a3928"),
    ("password-assignment", "password: Xk#9mP!q2z$W", "Xk#9mP!q2z$W"),
    ("bearer-token", "Authorization: Basic ZGVwbG95Olprc3Bxcmx2bXc5Mg==", "ZGVwbG95Olprc3Bxcmx2bXc5Mg=="),
    ("basic-auth-credentials", "curl -u deploy:Zk29xPq81m https://api.acme.io", "Zk29xPq81m"),
    ("url-credentials", "redis://:Zk29xPq81mW@cache.acme.io:6379", "Zk29xPq81mW"),
    ("url-credentials", "postgres://app:Zk29xPq81mW@db:5432/app", "Zk29xPq81mW"),
    ("secret-assignment", 'config: \'{"apiKey": "9f8e7d6c5b4a39281706"}\'', "9f8e7d6c5b4a39281706"),
    ("secret-assignment", 'config: "{\\"apiKey\\": \\"9f8e7d6c5b4a39281706\\"}"', "9f8e7d6c5b4a39281706"),
    ("github-token", f"githubghp_{GHP[4:]}", f"ghp_{GHP[4:]}"),
]


@pytest.mark.parametrize("kind,text,secret", MISSED, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(MISSED)])
def test_forms_the_scanner_missed_are_found(kind, text, secret):
    """Issue 17: provider formats and key=value forms 0.1.0's scanner let through."""
    found = [(m.kind, text[m.start:m.end]) for m in scan(text)]
    assert found == [(kind, secret)], text
    assert secret not in redact(text)[0]


@pytest.mark.parametrize("ends", ["\n", "\r\n", "\r", " "])
def test_a_private_key_on_one_line_or_with_cr_line_ends_is_found(ends):
    body = ends.join(["MIIEowIBAAKCAQEA7v1Qx2Lm9Zr4Vt7Wm1Ks5Nd3Bp6Yh0Cg2Ea8Ru4Oi"] * 3)
    text = "-----BEGIN RSA " + "PRIVATE KEY-----" + ends + body + ends + "-----END RSA " + "PRIVATE KEY-----"
    (m,) = scan(text)
    assert m.kind == "private-key" and "MIIEowIB" not in redact(text)[0]


def test_a_putty_key_is_found():
    text = ("PuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\nPublic-Lines: 1\nAAAAB3NzaC1yc2EAAAADAQABAAABAQ\n"
            "Private-Lines: 2\nAAABAQCx7Vd3Bp6Yh0Cg2Ea8Ru4OiJx8f2Lq9Zr4Vt7Wm1Ks5Nd\nQz8W2e4R6t8Y0u2I4o6P8a0S2d4F6g8H\n"
            "Private-MAC: 8f2Lq9Zr4Vt7Wm1Ks5Nd\n")
    assert [m.kind for m in scan(text)] == ["putty-private-key"]
    assert "AAABAQCx7Vd3" not in redact(text)[0]


@pytest.mark.parametrize("text", [
    "password=hunter2-Secret-Pa55word", "password: changeme", 'api_key = "your_api_key_here"',
    "DB_PASSWORD=admin123", "Authorization: Bearer YOUR_ACCESS_TOKEN", "postgresql://user:password@localhost/db",
    'secret: "correct horse battery staple"', "curl --user=bob:hunter2 https://x", "token: sk-your-key-here-and-more-words",
])
def test_the_publishing_gate_takes_no_stand_in_for_granted(text):
    """Lint may stay quiet on a likely example; the gate (strict) publishes no assigned value."""
    assert scan(text, strict=True), text
    redacted, counts = redact(text, strict=True)
    assert counts and "hunter2" not in redacted and "changeme" not in redacted


@pytest.mark.parametrize("text", [
    "token: ${GITHUB_TOKEN}", "password: <your-password>", "password: '********'", "api_key = $API_KEY",
    'password: ""', "token: {{ secrets.TOKEN }}", "secret: ...", "password = args.password",
    "password = os.environ['DB_PASSWORD']", "token: str", '"password": {"type": "string"}', "api_key=api_key",
    "max_tokens: 1000", "password=[REDACTED:password-assignment]", "Password: the one you chose",
    "bypass: abcdef12345", "PublicKeyToken=b03f5f7f11d50a3a", "redis://:${REDIS_PASSWORD}@cache:6379",
])
def test_the_publishing_gate_leaves_references_and_code(text):
    assert scan(text, strict=True) == [], text


def test_strict_redaction_is_idempotent():
    once = redact("password=hunter2 token: abc123 Authorization: Bearer xyz", strict=True)[0]
    assert redact(once, strict=True) == (once, {})
