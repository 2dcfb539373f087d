#!/usr/bin/env bash
# Installs the system programs the tests use for real (git, nginx, caddy, node, headless chromium,
# sqlite3, localedef) when they are missing. Runs from `nox -s tests` (and so from .ci/run); needs root or passwordless sudo
# for apt-get, otherwise the tests that need a missing program are skipped with a reason.
set -u
need=()
command -v git >/dev/null 2>&1 || need+=(git)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx-light)
command -v caddy >/dev/null 2>&1 || need+=(caddy)
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v sqlite3 >/dev/null 2>&1 || need+=(sqlite3)
# localedef and the de_DE source (a test builds under an ISO-8859-1 locale)
{ command -v localedef >/dev/null 2>&1 && [ -e /usr/share/i18n/locales/de_DE ]; } || need+=(locales)
if [ ${#need[@]} -eq 0 ]; then
  echo "setup_system: git, nginx, caddy, node, chromium, sqlite3 and locales are present"
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
    echo "setup_system: not root; cannot install ${need[*]} (tests needing them will be skipped)"; exit 0; fi
fi
echo "setup_system: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null 2>&1 || true
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1 \
  || echo "setup_system: apt-get install ${need[*]} failed (tests needing them will be skipped)"
exit 0
