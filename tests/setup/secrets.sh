#!/usr/bin/env bash
# The two well-kept secret scanners the scanner is measured against (tests/test_secrets_reference.py,
# benchmarks/bench_secrets.py): detect-secrets (PyPI) in its own venv and secretlint with its
# recommended preset (npm), pinned, under .clients/.  Idempotent; exits 0 when it cannot (the tests
# then skip with a reason).
set -u
root="$(cd "$(dirname "$0")/../.." && pwd)"
clients="$root/.clients"
mkdir -p "$clients" || exit 0

ds="$clients/detect-secrets"
if [ ! -x "$ds/bin/detect-secrets" ]; then
    python3 -m venv "$ds" && "$ds/bin/pip" install -q "detect-secrets==1.5.0" \
        || echo "secrets.sh: detect-secrets not installed (tests that need it skip)"
fi

sl="$clients/secretlint"
if [ ! -x "$sl/node_modules/.bin/secretlint" ]; then
    mkdir -p "$sl" && npm install --silent --no-audit --no-fund --prefix "$sl" \
        "secretlint@13.0.6" "@secretlint/secretlint-rule-preset-recommend@13.1.0" \
        || echo "secrets.sh: secretlint not installed (tests that need it skip)"
fi
exit 0
