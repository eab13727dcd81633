#!/usr/bin/env bash
# Fetches Dear ImGui's sources from Debian's source package into .cache/imgui (ignored by git)
# and prints the directory. Not a system change: apt runs with a private sources and lists dir.
# IMGUI_DIR=/path/to/imgui in the environment skips the download (any checkout with backends/).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${IMGUI_DIR:-}" ]; then echo "$IMGUI_DIR"; exit 0; fi
cache="$PWD/.cache/imgui-src"
found=$(ls -d "$cache"/imgui-*/ 2>/dev/null | head -n 1 || true)
if [ -n "$found" ] && [ -f "$found/imgui.cpp" ]; then echo "${found%/}"; exit 0; fi

echo "[imgui] fetching Dear ImGui from Debian's source package" >&2
mkdir -p "$cache/srcparts" "$cache/lists/partial" "$cache/cache/archives/partial"
sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources > "$cache/srcparts/src.sources"
# The private SourceParts dir exists (made above): apt must never fall back to the system lists.
opts=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$cache/srcparts"
      -o "Dir::State::Lists=$cache/lists" -o "Dir::Cache=$cache/cache")
apt-get "${opts[@]}" update -qq >&2
(cd "$cache" && apt-get "${opts[@]}" source --download-only imgui >&2)
(cd "$cache" && tar xf imgui_*.orig.tar.*)
found=$(ls -d "$cache"/imgui-*/ | head -n 1)
[ -f "$found/imgui.cpp" ] || { echo "[imgui] no imgui.cpp in $found" >&2; exit 1; }
echo "${found%/}"
