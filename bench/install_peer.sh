#!/usr/bin/env bash
# The peer language server bench/bench_latency.py runs side by side: yaml-language-server from the
# npm registry, pinned in bench/.peer/package-lock.json, installed into bench/.peer/node_modules.
set -euo pipefail
cd "$(dirname "$0")/.peer"
npm ci --no-audit --no-fund
