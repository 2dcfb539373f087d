#!/usr/bin/env bash
# axe-core for tests/test_site_browser.py (issue 21): the accessibility checker run inside the pages
# of the built site, pinned, installed under .clients/site/.  Idempotent; exits 0 when it cannot (the
# accessibility test then skips with a reason).
set -u
cd "$(dirname "$0")/../.."
ROOT="$PWD/.clients"
AXE_VERSION=4.11.0
prefix="$ROOT/site"
marker="$prefix/.installed-axe-core@$AXE_VERSION"
command -v npm >/dev/null || { echo "site.sh: no npm; the accessibility test will skip"; exit 0; }
[ -e "$marker" ] && exit 0
mkdir -p "$prefix"
if npm install --no-audit --no-fund --silent --prefix "$prefix" "axe-core@$AXE_VERSION"; then
    touch "$marker"
else
    echo "site.sh: npm install axe-core@$AXE_VERSION failed; the accessibility test will skip"
fi
exit 0
