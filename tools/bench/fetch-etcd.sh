#!/bin/sh
# Fetches etcd-server from a Debian release other than the host's (trixie by default: etcd
# 3.5.16, the version Kubernetes 1.32 is tested with) and unpacks it under .cache/etcd-<suite>/,
# without installing it: apt reads a package list of its own in a temporary directory. The bench
# and the tests then run it with ETCD_BIN (docs/BENCHMARKS.md, "Which etcd"):
#
#   tools/bench/fetch-etcd.sh [suite]
#   ETCD_BIN=$PWD/.cache/etcd-trixie/usr/bin/etcd npm run bench
set -eu
suite=${1:-trixie}
root=$(cd "$(dirname "$0")/../.." && pwd)
dest="$root/.cache/etcd-$suite"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/archives/partial"
echo "deb http://deb.debian.org/debian $suite main" > "$work/sources.list"
apt_opts="-o Dir::Etc::sourcelist=$work/sources.list -o Dir::Etc::sourceparts=- -o Dir::State::Lists=$work/lists -o Dir::Cache::Archives=$work/archives -o APT::Sandbox::User=root"
# shellcheck disable=SC2086
apt-get $apt_opts -qq update
# shellcheck disable=SC2086
(cd "$work" && apt-get $apt_opts -qq download etcd-server)
rm -rf "$dest"
mkdir -p "$dest"
dpkg-deb -x "$work"/etcd-server_*.deb "$dest"
"$dest/usr/bin/etcd" --version | head -1
echo "ETCD_BIN=$dest/usr/bin/etcd"
