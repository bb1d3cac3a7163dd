#!/usr/bin/env bash
# What the browser specs (spec/browser, issue 23) need from the system: Debian's chromium, driven by the
# pinned playwright-core, and the Liberation fonts. Quick and silent when both are there; otherwise, as
# root, one `apt-get update` (retried once) and `apt-get install -y chromium fonts-liberation`. Not root
# and missing: fails with the command to run.
set -euo pipefail

CHROMIUM=/usr/bin/chromium
missing=()
[ -x "$CHROMIUM" ] || missing+=(chromium)
# fc-list may be absent on a bare machine; the package's files are what the page's monospace font needs.
if ! ls /usr/share/fonts/truetype/liberation*/LiberationMono-Regular.ttf >/dev/null 2>&1; then
  missing+=(fonts-liberation)
fi

if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-test-deps: missing ${missing[*]} (the browser specs need them); run as root:" >&2
  echo "  apt-get update && apt-get install -y chromium fonts-liberation" >&2
  exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-test-deps: missing ${missing[*]} and there is no apt-get: install chromium (at $CHROMIUM) and the Liberation fonts" >&2
  exit 1
fi

echo "install-test-deps: installing chromium fonts-liberation (missing: ${missing[*]})" >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-get update; then
  echo "install-test-deps: apt-get update failed; retrying once in 10 s" >&2
  sleep 10
  apt-get update
fi
apt-get install -y chromium fonts-liberation

if [ ! -x "$CHROMIUM" ]; then
  echo "install-test-deps: apt-get installed chromium but $CHROMIUM is not there" >&2
  exit 1
fi
"$CHROMIUM" --version >&2 || true
