#!/usr/bin/env bash
# Real skills clients for tests/test_clients_*.py (issue 19), pinned, installed under .clients/:
#   .clients/node22/  Node 22 from the npm registry (skills 1.7 and claude-code need Node >= 22)
#   .clients/skills/  Vercel's skills CLI      .clients/openskills/  openskills
#   .clients/claude/  Claude Code (plugin validate works offline, no login)
# Idempotent; exits 0 when it cannot (the tests then skip with a reason).
set -u
cd "$(dirname "$0")/../.."
ROOT="$PWD/.clients"
NODE22_VERSION=22.23.3
SKILLS_VERSION=1.7.4
OPENSKILLS_VERSION=1.5.0
CLAUDE_VERSION=2.1.332
mkdir -p "$ROOT"
command -v npm >/dev/null || { echo "reach.sh: no npm; client tests will skip"; exit 0; }

install() {  # install PREFIX SPEC MARKER
    local prefix="$ROOT/$1" spec="$2" marker="$ROOT/$1/.installed-${2//\//_}"
    [ -e "$marker" ] && return 0
    mkdir -p "$prefix"
    if npm install --no-audit --no-fund --silent --prefix "$prefix" "$spec"; then
        touch "$marker"
    else
        echo "reach.sh: npm install $spec failed; its tests will skip"
    fi
}

install node22 "node@$NODE22_VERSION"
install skills "skills@$SKILLS_VERSION"
install openskills "openskills@$OPENSKILLS_VERSION"
install claude "@anthropic-ai/claude-code@$CLAUDE_VERSION"
# npm 11 may skip claude-code's postinstall, which links the platform's native binary.
pkg="$ROOT/claude/node_modules/@anthropic-ai/claude-code"
node22="$ROOT/node22/node_modules/node/bin/node"
if [ -f "$pkg/install.cjs" ] && [ -x "$node22" ] && ! "$ROOT/claude/node_modules/.bin/claude" --version >/dev/null 2>&1; then
    (cd "$pkg" && "$node22" install.cjs >/dev/null 2>&1) || echo "reach.sh: claude-code install.cjs failed"
fi
exit 0
