"""One credential of every form skillc's publishing gate must catch: every provider that
detect-secrets (1.5.0 plugins) and secretlint's recommended preset (13.x rules) document, and the
key=value forms of issue 17.  Values are fake and assembled from pieces, so this file does not look
like a leak to a scanner reading it.

``FORMS``: (name, kind skillc reports, a line holding it, the value that must never be published)."""

from __future__ import annotations

import gzip
import io
import sqlite3
import zipfile
from pathlib import Path

_R = "Kd3Bp6Yh0Cg2Ea8Ru4OiJx8f2Lq9Zr4Vt7Wm1Ks5NdQz8W2e4R6t8Y0u2I4o6P8a0S2"  # random-looking letters and digits
_HEX = "0f1e2d3c4b5a69788796a5b4c3d2e1f09a8b7c6d5e4f30211203f4e5d6c7b8a9"
_B64 = "MIIEowIBAAKCAQEA7v1Qx2Lm9Zr4Vt7Wm1Ks5Nd3Bp6Yh0Cg2Ea8Ru4Oi"
_PEM_BODY = "\n".join([_B64 + "Qz8W2e4R6t8Y0u2I4o6P8a0S"] * 4)


def _f(name: str, kind: str, line: str, value: str) -> tuple[str, str, str, str]:
    return name, kind, line, value


_AWS_ID = "AKIA" + "Q3EGRT7KZ5XW2MPL"
_AWS_SECRET = "Jx8f2Lq9" + "Zr4Vt7Wm1Ks5Nd3Bp6Yh0Cg2Ea8Ru4Oi"
_GHP = "ghp_" + "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
_GH_PAT = "github_pat_" + "11AQ7ZK3Y0" + "mxgJTeKdNnFRIBXuDL7D_xtpYlSXpfKtHF4vUCsMehGAkWvj7FAc9QeWJKY4" + "Ab3dEf9hIj2lMn7pQr1t"
_GLPAT = "glpat-" + "xK8mQ2vN7pR4tY6wZ9aB"
_SLACK = "xoxb-" + "730519284016-4918273650192-" + "KLzdocJ2isAjIhKtJ0RlgLKO"
_XAPP = "xapp-1-" + "A05KLM12345-6234567890123-" + "9f8e7d6c5b4a39281706f5e4d3c2b1a0"
_HOOK = "T04ABCD12/B05EFGH34/" + "q8W2e4R6t8Y0u2I4o6P8a0S2"
_OPENAI = "sk-" + "proj-" + _R[:58] + "T3BlbkFJ" + _R[:58]
_ANTHROPIC = "sk-ant-" + "api03-" + (_R + _R)[:95] + "AA"
_STRIPE = "sk_" + "live_" + "51Hq7KLzdocJ2isAjIhKtJ0RqW"
_SK_TEST = "sk_" + "test_" + "51Hq7KLzdocJ2isAjIhKtJ0RqW"
_RK = "rk_" + "live_" + "51Hq7KLzdocJ2isAjIhKtJ0RqW"
_WHSEC = "whsec_" + "Kd3Bp6Yh0Cg2Ea8Ru4OiJx8f2Lq9Zr4V"
_SENDGRID = "SG." + "Zq8W2e4R6t8Y0u2I4o6P8a" + "." + "Kd3Bp6Yh0Cg2Ea8Ru4OiJx8f2Lq9Zr4Vt7Wm1Ks5Nd"
_HF = "hf_" + "QzXkWvRtYuPlMnBgFdSaEcVbNhJiKoLpQw"
_GOCSPX = "GOCSPX-" + "Kd3Bp6Yh0Cg2Ea8Ru4OiJx8f2Lq9"
_TWILIO = "SK" + _HEX[:32]
_TWILIO_AC = "AC" + _HEX[32:64]
_AZURE = (_R + _R)[:86] + "=="
_SAS = "Kd3Bp6Yh0Cg2Ea8Ru4OiJx8f2Lq9Zr4Vt7Wm1Ks5Nd%3D"
_JWT = "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiJhbGljZSIsInJvbGUiOiJhZG1pbiJ9" + ".k2Vb9Q8m1xZr7TcYp4LsN0fHd3WjE6gA5uIoKq"
_NPM = "npm_" + "Kd3Bp6Yh0Cg2Ea8Ru4OiJx8f2Lq9Zr4Vt7Wm"
_PYPI = "pypi-AgEIcHlwaS5vcmc" + (_R + _R)[:80]
_SHOPIFY = "shpat_" + _HEX[:32]
_LINEAR = "lin_api_" + _R[:40]
_GROQ = "gsk_" + _R[:52]
_NOTION = "ntn_" + "83920174652" + _R[:35]
_DOCKER = "dckr_pat_" + _R[:27]
_FIGMA = "figd_" + _R[:44]
_CLOUDFLARE = "cfut_" + _R[:40] + _HEX[:8]
_TAILSCALE = "tskey-auth-" + "kQz8W2e4R6CNTRL" + "-" + _R[:32]
_VAULT = "hvs." + (_R + _R)[:95]
_VERCEL = "vcp_" + _R[:40]
_DATABRICKS = "dapi" + _HEX[:32]
_GRAFANA = "glsa_" + _R[:32] + "_" + _HEX[:8]
_GRAFANA_CLOUD = "glc_" + (_R + _R)[:60] + "=="
_OP = "ops_" + "eyJzaWduSW5BZGRyZXNzIjoibXkuMXBhc3N3b3JkLmNvbSIsInVzZXJBdXRoIjp7Im1ldGhvZCI6IlNSUGctNDA5NiIsImFsZyI6IlBCRVMyZy1IUzI1NiJ9fQ"
_SQUARE = "sq0csp-" + _R[:43]
_DISCORD = "MTA" + "xNzk4NTY0MjEyMzQ1Njc4OQ" + ".Gh7Kq2" + "." + _R[:38]
_TELEGRAM = "8392017465" + ":AA" + _R[:33]
_MAILCHIMP = _HEX[:32] + "-us12"
_ARTIFACTORY = "AKC" + "p8" + _R[:60]
_IBM_IAM = _R[:44]
_SOFTLAYER = _HEX[:64]
_CLOUDANT = _HEX[:64]
_PEM = "-----BEGIN RSA " + "PRIVATE KEY-----\n" + _PEM_BODY + "\n-----END RSA " + "PRIVATE KEY-----"
_OPENSSH = ("-----BEGIN OPENSSH " + "PRIVATE KEY-----\n" + "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAABlwAAAAdzc2gtcn\n"
            + _PEM_BODY + "\n-----END OPENSSH " + "PRIVATE KEY-----")

FORMS: tuple[tuple[str, str, str, str], ...] = (
    _f("aws access key id", "aws-access-key-id", f"aws_access_key_id = {_AWS_ID}", _AWS_ID),
    _f("aws secret access key", "aws-secret-access-key", f'aws_secret_access_key = "{_AWS_SECRET}"', _AWS_SECRET),
    _f("aws secret in json", "aws-secret-access-key", f'{{"SecretAccessKey": "{_AWS_SECRET}"}}', _AWS_SECRET),
    _f("github classic token", "github-token", f"GITHUB_TOKEN={_GHP}", _GHP),
    _f("github fine-grained token", "github-token", f"token {_GH_PAT}", _GH_PAT),
    _f("gitlab token", "gitlab-token", f"GITLAB_TOKEN={_GLPAT}", _GLPAT),
    _f("slack bot token", "slack-token", f"SLACK_BOT_TOKEN={_SLACK}", _SLACK),
    _f("slack app token", "slack-token", f"SLACK_APP_TOKEN={_XAPP}", _XAPP),
    _f("slack webhook", "slack-webhook", f"https://hooks.slack.com/services/{_HOOK}", _HOOK),
    _f("openai key", "openai-api-key", f"OPENAI_API_KEY={_OPENAI}", _OPENAI),
    _f("anthropic key", "anthropic-api-key", f"ANTHROPIC_API_KEY={_ANTHROPIC}", _ANTHROPIC),
    _f("stripe live key", "stripe-secret-key", f"STRIPE_KEY={_STRIPE}", _STRIPE),
    _f("stripe test key", "stripe-secret-key", f"STRIPE_TEST={_SK_TEST}", _SK_TEST),
    _f("stripe restricted key", "stripe-secret-key", f"STRIPE_RK={_RK}", _RK),
    _f("stripe webhook secret", "stripe-secret-key", f"STRIPE_WEBHOOK={_WHSEC}", _WHSEC),
    _f("sendgrid key", "sendgrid-api-key", f"SENDGRID={_SENDGRID}", _SENDGRID),
    _f("hugging face token", "huggingface-token", f"HF={_HF}", _HF),
    _f("google oauth client secret", "google-oauth-secret", f'"web": {{"client_secret": "{_GOCSPX}"}}', _GOCSPX),
    _f("gcp api key", "gcp-api-key", "GOOGLE_KEY=AIza" + "SyD4k9Lm2Nq8Rt5Vw1Xz7Bc3Fg6Hj0Kp9Qs", "AIza" + "SyD4k9Lm2Nq8Rt5Vw1Xz7Bc3Fg6Hj0Kp9Qs"),
    _f("twilio api key", "twilio-key", f"TWILIO_KEY={_TWILIO}", _TWILIO),
    _f("twilio account sid", "twilio-key", f"TWILIO_SID={_TWILIO_AC}", _TWILIO_AC),
    _f("azure storage key", "azure-storage-key", f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={_AZURE}", _AZURE),
    _f("azure sas signature", "azure-sas-signature", f"https://acme.blob.core.windows.net/c/f?sv=2022-11-02&sig={_SAS}", _SAS),
    _f("jwt", "jwt", f"JWT={_JWT}", _JWT),
    _f("npm token", "npm-token", f"NPM={_NPM}", _NPM),
    _f("npmrc auth token", "npm-auth-token", f"//registry.npmjs.org/:_authToken={_HEX[:36]}", _HEX[:36]),
    _f("pypi token", "pypi-token", f"PYPI={_PYPI}", _PYPI),
    _f("shopify token", "shopify-token", f"SHOPIFY={_SHOPIFY}", _SHOPIFY),
    _f("linear key", "vendor-token", f"LINEAR={_LINEAR}", _LINEAR),
    _f("groq key", "vendor-token", f"GROQ={_GROQ}", _GROQ),
    _f("notion token", "vendor-token", f"NOTION={_NOTION}", _NOTION),
    _f("docker pat", "vendor-token", f"DOCKER={_DOCKER}", _DOCKER),
    _f("figma token", "vendor-token", f"FIGMA={_FIGMA}", _FIGMA),
    _f("cloudflare token", "vendor-token", f"CF={_CLOUDFLARE}", _CLOUDFLARE),
    _f("tailscale key", "vendor-token", f"TS={_TAILSCALE}", _TAILSCALE),
    _f("vault token", "vendor-token", f"VAULT={_VAULT}", _VAULT),
    _f("vercel token", "vendor-token", f"VERCEL={_VERCEL}", _VERCEL),
    _f("databricks token", "vendor-token", f"DATABRICKS={_DATABRICKS}", _DATABRICKS),
    _f("grafana service account", "vendor-token", f"GRAFANA={_GRAFANA}", _GRAFANA),
    _f("grafana cloud token", "vendor-token", f"GRAFANA_CLOUD={_GRAFANA_CLOUD}", _GRAFANA_CLOUD),
    _f("1password service token", "vendor-token", f"OP={_OP}", _OP),
    _f("square oauth secret", "vendor-token", f"SQUARE={_SQUARE}", _SQUARE),
    _f("discord bot token", "discord-bot-token", f"DISCORD={_DISCORD}", _DISCORD),
    _f("telegram bot token", "telegram-bot-token", f"TELEGRAM={_TELEGRAM}", _TELEGRAM),
    _f("mailchimp key", "mailchimp-api-key", f"MAILCHIMP={_MAILCHIMP}", _MAILCHIMP),
    _f("artifactory token", "secret-assignment", f"artifactory_api_token: {_ARTIFACTORY}", _ARTIFACTORY),
    _f("ibm cloud iam key", "secret-assignment", f'ibm_cloud_iam_api_key = "{_IBM_IAM}"', _IBM_IAM),
    _f("softlayer key", "secret-assignment", f'softlayer_api_key = "{_SOFTLAYER}"', _SOFTLAYER),
    _f("cloudant password", "url-credentials", f"https://acme:{_CLOUDANT}@acme.cloudant.com", _CLOUDANT),
    _f("ibm cos hmac secret", "secret-assignment", f'secret_access_key = "{_HEX[:48]}"', _HEX[:48]),
    _f("rsa private key", "private-key", _PEM, _B64),
    _f("openssh private key", "private-key", _OPENSSH, _B64),
    _f("basic auth url", "url-credentials", "https://deploy:Zk29xPq81mW@git.acme.io/repo.git", "Zk29xPq81mW"),
    _f("mongodb connection", "url-credentials", "mongodb+srv://app:Zk29xPq81mW@cluster0.acme.net/db", "Zk29xPq81mW"),
    _f("postgres connection", "url-credentials", "postgres://app:Zk29xPq81mW@db.acme.io:5432/app", "Zk29xPq81mW"),
    _f("mysql connection", "url-credentials", "mysql://app:Zk29xPq81mW@mysql.acme.io/app", "Zk29xPq81mW"),
    _f("redis without a user", "url-credentials", "redis://:Zk29xPq81mW@cache.acme.io:6379", "Zk29xPq81mW"),
    _f("password assignment", "password-assignment", 'DB_PASSWORD="Tq7vWz92Lm"', "Tq7vWz92Lm"),
    _f("camelCase password", "password-assignment", "dbPassword: Xk29fjQ8zLm3Pq", "Xk29fjQ8zLm3Pq"),
    _f("camelCase token", "secret-assignment", 'refreshToken = "Qm7vWz92LmR4"', "Qm7vWz92LmR4"),
    _f("password with symbols", "password-assignment", "password: Xk#9mP!q2z$W", "Xk#9mP!q2z$W"),
    _f("authorization basic", "bearer-token", "Authorization: Basic ZGVwbG95Olprc3Bxcmx2bXc5Mg==", "ZGVwbG95Olprc3Bxcmx2bXc5Mg=="),
    _f("bearer token", "bearer-token", "Authorization: Bearer 4f9a8b7c6d5e4f3a2b1c", "4f9a8b7c6d5e4f3a2b1c"),
    _f("curl -u", "basic-auth-credentials", "curl -u deploy:Zk29xPq81m https://api.acme.io", "Zk29xPq81m"),
)


def readable_bytes(out: Path) -> dict[str, bytes]:
    """Every file of the bundle as a reader gets it: zip members, gunzipped files, SQLite rows."""
    seen: dict[str, bytes] = {}
    for path in sorted(out.rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        rel = path.relative_to(out).as_posix()
        data = path.read_bytes()
        seen[rel] = data
        if data[:4] == b"PK\x03\x04":
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                for info in zf.infolist():
                    seen[f"{rel}!{info.filename}"] = zf.read(info)
        elif data[:2] == b"\x1f\x8b":
            seen[f"{rel}!gunzip"] = gzip.decompress(data)
        elif data[:16] == b"SQLite format 3\0":
            db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
            tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            rows = [repr(row) for t in tables for row in db.execute(f'SELECT * FROM "{t}"')]
            seen[f"{rel}#rows"] = "\n".join(rows).encode("utf-8", "surrogatepass")
            db.close()
    return seen
