#!/usr/bin/env bash
# agnix, the lint peer the cross-check test (tests/test_lint_agnix.py) and the lint benchmark run
# beside skillc: pinned, in its own venv under .clients/agnix, idempotent. Exits 0 when it cannot
# (no network to PyPI): the tests that need it then skip with a reason.
set -u
here="$(cd "$(dirname "$0")/../.." && pwd)"
venv="$here/.clients/agnix"
version="0.59.3"
if [ -x "$venv/bin/agnix" ] && "$venv/bin/agnix" --version 2>/dev/null | grep -q "$version"; then
    exit 0
fi
python3 -m venv "$venv" >/dev/null 2>&1 || { echo "lint.sh: cannot create $venv; agnix tests will skip"; exit 0; }
"$venv/bin/pip" install --quiet --disable-pip-version-check "agnix==$version" \
    || { echo "lint.sh: cannot install agnix==$version; agnix tests will skip"; exit 0; }
exit 0
