#!/usr/bin/env bash
# Installs what `make demo` and `make test` need and a fresh Debian machine with the Swift
# toolchain lacks: the C libraries (nghttp2, OpenSSL, zlib, libcurl for URLSession), protoc,
# Python's venv, h2load, tinyproxy (the HTTP CONNECT proxy the proxy tests start) and iproute2
# (ip netns, for the Happy Eyeballs test).
# `--bench` adds what only `make bench` needs: gRPC C++ (library, headers, protoc plugin) and g++
# for the C++ bench server and C-core client, valgrind for `bench.py --callgrind`.
# Uses apt-get when run as root; otherwise says what to install.
set -euo pipefail

packages=(libnghttp2-dev libssl-dev zlib1g-dev pkg-config protobuf-compiler python3-venv nghttp2-client libcurl4 tinyproxy iproute2)
if [ "${1:-}" = "--bench" ]; then
    packages+=(g++ libgrpc++-dev libprotobuf-dev protobuf-compiler-grpc valgrind)
fi
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "missing packages: ${missing[*]}" >&2
    echo "install them with: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
