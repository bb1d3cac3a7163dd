#!/usr/bin/env bash
# What the specs need from the system: for the browser specs (spec/browser, issue 23) Debian's chromium,
# driven by the pinned playwright-core, and the Liberation fonts; curl, which a spec runs as it is to show
# it gets the SSE event stream (spec/host/api/binary-stream.int); for the replica specs (spec/cluster,
# issue 33) Debian's redis-server (7.0) and haproxy, which the specs start themselves on free loopback
# ports; python3, the servers the executor runs for the tty and HTTP specs (`python3 -m http.server`, issue
# 42). Quick and silent when all are there; otherwise, as root, one `apt-get update` (retried once) and
# `apt-get install -y chromium fonts-liberation curl redis-server haproxy nginx-light systemd python3`.
# Not root and missing: fails with the command to run.
set -euo pipefail

CHROMIUM=/usr/bin/chromium
missing=()
[ -x "$CHROMIUM" ] || missing+=(chromium)
# fc-list may be absent on a bare machine; the package's files are what the page's monospace font needs.
if ! ls /usr/share/fonts/truetype/liberation*/LiberationMono-Regular.ttf >/dev/null 2>&1; then
  missing+=(fonts-liberation)
fi
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v haproxy >/dev/null 2>&1 || missing+=(haproxy)
# nginx only checks the README's nginx configuration (`nginx -t`, spec/support/nginx-config.spec.ts); never started.
[ -x /usr/sbin/nginx ] || missing+=(nginx-light)
# systemd-analyze only verifies the executor's unit (docs/exec-rx-executor.service, spec/docs/executor-unit.spec.ts); nothing is started.
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)
# python3 runs in the environments of the tty and HTTP specs (a pty helper, http.server targets).
command -v python3 >/dev/null 2>&1 || missing+=(python3)

if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "install-test-deps: missing ${missing[*]} (the browser specs need them); run as root:" >&2
  echo "  apt-get update && apt-get install -y chromium fonts-liberation curl redis-server haproxy nginx-light systemd python3" >&2
  exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-test-deps: missing ${missing[*]} and there is no apt-get: install chromium (at $CHROMIUM), the Liberation fonts, curl, redis-server, haproxy, nginx (nginx-light), systemd (for systemd-analyze) and python3" >&2
  exit 1
fi

echo "install-test-deps: installing chromium fonts-liberation curl redis-server haproxy nginx-light systemd python3 (missing: ${missing[*]})" >&2
export DEBIAN_FRONTEND=noninteractive
if ! apt-get update; then
  echo "install-test-deps: apt-get update failed; retrying once in 10 s" >&2
  sleep 10
  apt-get update
fi
apt-get install -y chromium fonts-liberation curl redis-server haproxy nginx-light systemd python3
# Debian's package starts a redis-server service on 6379 where an init system runs; the specs start their
# own on free ports and never use it.

if [ ! -x "$CHROMIUM" ]; then
  echo "install-test-deps: apt-get installed chromium but $CHROMIUM is not there" >&2
  exit 1
fi
"$CHROMIUM" --version >&2 || true
