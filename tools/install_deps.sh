#!/usr/bin/env bash
# Installs what the project needs from Debian's archive and npm, only when missing.
# Not a build step: it changes the system (apt) and ./node_modules (npm), nothing else.
set -euo pipefail
cd "$(dirname "$0")/.."

# One line per package; the command after it proves the package is there.
APT_PACKAGES=(
  emscripten libeigen3-dev doctest-dev nlohmann-json3-dev
  libglfw3-dev libgl-dev libgles-dev libegl-dev
  fonts-dejavu-core fonts-noto-core fonts-noto-cjk python3-fonttools python3-numpy python3-pil python3-torch
  xvfb xauth chromium imagemagick clang libclang-rt-14-dev cmake g++ ccache
  firefox-esr webkit2gtk-driver
  libxml2-utils
)
# Node.js may come from elsewhere (with its own npm); ask apt only when the commands are missing.
command -v node >/dev/null || APT_PACKAGES+=(nodejs)
command -v npm >/dev/null || APT_PACKAGES+=(npm)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "[deps] installing Debian packages: ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq >&2
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# npm: when any devDependency of package.json is missing from node_modules
npm_missing() {
  node -e 'const d = require("./package.json").devDependencies || {};
    process.exit(Object.keys(d).some((p) => !require("fs").existsSync("node_modules/" + p + "/package.json")) ? 0 : 1)'
}
# --ignore-scripts: h5p-standalone's preinstall demands yarn; no package the project uses needs its scripts.
if [ "${1:-}" = "--npm" ] && npm_missing; then
  echo "[deps] installing npm packages (package-lock.json)" >&2
  npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2 ||
    npm install --ignore-scripts --no-audit --no-fund --loglevel=error >&2
fi
