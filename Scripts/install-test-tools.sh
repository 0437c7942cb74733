#!/usr/bin/env bash
# Installs what the AsyncHTTPClient trait's tests need besides Swift: nginx (HTTP/2 over TLS, and the throughput benchmark) and
# openssl (the tests' self-signed certificate). Run by Scripts/integrations.sh before the trait build; installs only in CI
# (CI=true) or when asked (COURIER_INSTALL=1), as root, non-interactively. Elsewhere it says what is missing, and
# the tests that need nginx are skipped.
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"
missing=()
command -v nginx >/dev/null 2>&1 || missing+=(nginx)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "${CI:-}" = "true" ] || [ "${COURIER_INSTALL:-}" = "1" ]; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo -n"
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
else
    echo "install-test-tools.sh: ${missing[*]} missing; the HTTP/2 tests will be skipped (COURIER_INSTALL=1 installs them)" >&2
fi
