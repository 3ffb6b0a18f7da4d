#!/usr/bin/env bash
# Installs what the LiteFS replica tests (tests/litefs_*_test.go) need when
# it is missing: fusermount3 (Debian's fuse3 package, through apt-get) and
# litefs v0.5.14 (go install, into $(go env GOPATH)/bin). /dev/fuse itself
# must be provided by the machine. make test-long runs it under CI=true.
set -euo pipefail

LITEFS_VERSION=v0.5.14

if ! command -v fusermount3 >/dev/null 2>&1; then
	SUDO=""
	if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update
	$SUDO apt-get install -y fuse3
fi

gobin="$(go env GOPATH | cut -d: -f1)/bin"
if ! command -v litefs >/dev/null 2>&1 && [ ! -x "$gobin/litefs" ]; then
	go install "github.com/superfly/litefs/cmd/litefs@${LITEFS_VERSION}"
fi

fusermount3 --version
echo "litefs: $(command -v litefs || echo "$gobin/litefs")"
