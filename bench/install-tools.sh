#!/usr/bin/env bash
# Installs the system tools `npm run bench` uses when present: wrk, the HTTP load generator of the
# pull throughput scenario. Without it the bench falls back to a Node client (and says so in its
# notes). Debian's package; needs root, like .ci/run's install of git.
set -euo pipefail
if command -v wrk >/dev/null 2>&1; then
  echo "wrk is already installed"
  exit 0
fi
apt-get update -qq && apt-get install -y -qq wrk
wrk --version 2>&1 | head -1 || true
