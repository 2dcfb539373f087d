#!/usr/bin/env bash
# The real MCP clients the `skillc mcp` tests drive (tests/test_mcp_inspector.py): the MCP
# Inspector's CLI (npm @modelcontextprotocol/inspector, which wants Node >= 22) and Node 22 itself
# from the npm registry (the machine's node is 20). Pinned, installed under .clients/ (git-ignored),
# idempotent; exits 0 when it cannot, and the tests then skip with a reason.
set -u
INSPECTOR_VERSION=2.12.0
NODE_VERSION=22.23.3
root="$(cd "$(dirname "$0")/../.." && pwd)"
clients="$root/.clients"
node22="$clients/node22/node_modules/node/bin/node"
inspector="$clients/mcp-inspector/node_modules/@modelcontextprotocol/inspector"

if ! command -v npm >/dev/null 2>&1; then
  echo "setup mcp: no npm; the MCP Inspector tests will be skipped"; exit 0
fi
installed() {  # $1: package folder, $2: wanted version
  [ -f "$1/package.json" ] && grep -q "\"version\": \"$2\"" "$1/package.json"
}
if installed "$clients/node22/node_modules/node" "$NODE_VERSION" && [ -x "$node22" ]; then
  echo "setup mcp: node $NODE_VERSION present"
else
  echo "setup mcp: installing node@$NODE_VERSION into .clients/node22"
  npm install --prefix "$clients/node22" --no-audit --no-fund --loglevel=error "node@$NODE_VERSION" >/dev/null 2>&1 \
    || { echo "setup mcp: npm install node@$NODE_VERSION failed; the MCP Inspector tests will be skipped"; exit 0; }
fi
if installed "$inspector" "$INSPECTOR_VERSION"; then
  echo "setup mcp: @modelcontextprotocol/inspector $INSPECTOR_VERSION present"
else
  echo "setup mcp: installing @modelcontextprotocol/inspector@$INSPECTOR_VERSION into .clients/mcp-inspector"
  # (Node 22 first on PATH, so npm resolves the engines the inspector asks for)
  PATH="$(dirname "$node22"):$PATH" npm install --prefix "$clients/mcp-inspector" --no-audit --no-fund \
    --loglevel=error "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" >/dev/null 2>&1 \
    || { echo "setup mcp: npm install of the inspector failed; the MCP Inspector tests will be skipped"; exit 0; }
fi
exit 0
