#!/usr/bin/env bash
# Installs the system programs `npm run bench` uses when present, from Debian's packages (needs
# root, like .ci/run's install of git):
#   wrk          the HTTP load generator of the pull scenarios (without it: a Node client, said in the notes)
#   etcd-server  etcd, the reference for durable transactions and range reads (without it: no etcd rows)
set -euo pipefail
missing=()
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
if [ ${#missing[@]} -eq 0 ]; then
  echo "wrk and etcd are already installed"
else
  apt-get update -qq && apt-get install -y -qq "${missing[@]}"
fi
wrk --version 2>&1 | head -1 || true
etcd --version 2>&1 | head -1 || true
