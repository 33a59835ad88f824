#!/usr/bin/env bash
# What the tests need that npm cannot install: Debian's chromium (browser
# tests), tmux (terminal UI tests), qemu-user and the arm64 C library (the
# arm64 release binary is run under emulation), PostgreSQL 15 (npm test's second
# run of the suite, on a throwaway cluster). Installs the missing ones
# when it may (root, with apt-get); otherwise stops at once with one line
# saying the exact command. `npm test` and .ci/run go through here.
set -euo pipefail

missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
command -v qemu-aarch64 >/dev/null 2>&1 || missing+=(qemu-user)
[ -e /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 ] || missing+=(libc6-arm64-cross)
[ -x /usr/lib/postgresql/15/bin/initdb ] || missing+=(postgresql)
[ ${#missing[@]} -eq 0 ] && exit 0

packages="${missing[*]}"
if ! command -v apt-get >/dev/null 2>&1; then
  echo "error: the tests need ${packages} (Debian package names) and this machine has no apt-get: install them with its package manager, then run npm test again" >&2
  exit 1
fi
if [ "$(id -u)" != "0" ]; then
  echo "error: the tests need Debian packages npm cannot install; run: sudo apt-get update && sudo apt-get install -y --no-install-recommends ${packages}" >&2
  exit 1
fi
echo "installing what the tests need: ${packages}" >&2
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }; then
  echo "error: installing ${packages} failed; run: apt-get update && apt-get install -y --no-install-recommends ${packages}" >&2
  exit 1
fi
