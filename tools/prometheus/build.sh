#!/usr/bin/env bash
# Build the Prometheus server from its Go module (pinned in ./go.mod) and
# package it into a FROM-scratch image. See README.md next to this script.
#
# Environment:
#   PROMETHEUS_IMAGE_TAG  image tag to build   (default kretrieve/prometheus:local)
#   CA_CERTS              CA bundle for the image (default: the host's)
set -euo pipefail
tool=prometheus
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# Prometheus tags its Go module v0.3XX.Y for release v3.XX.Y.
pinned_module="v0.316.0"
pinned_release="v3.16.0"
image_tag="${PROMETHEUS_IMAGE_TAG:-kretrieve/prometheus:local}"
need_tools
cd "${repo_root}/tools/prometheus"
export GOWORK=off
mod_version="$(go list -m -f '{{.Version}}' github.com/prometheus/prometheus)" ||
  die "cannot resolve github.com/prometheus/prometheus from tools/prometheus/go.mod"
[[ "${mod_version}" == "${pinned_module}" ]] ||
  die "go.mod pins prometheus ${mod_version}, this script ${pinned_module}; update pinned_module/pinned_release"

ctx="$(mktemp -d "${TMPDIR:-/tmp}/prometheus-image.XXXXXX")"
trap 'rm -rf "${ctx}"' EXIT
# The TSDB directory, owned by the image's user (COPY of an empty directory).
mkdir -p "${ctx}/data"

start=${SECONDS}
log "building prometheus ${pinned_release} for linux/${docker_arch} with $(go env GOVERSION)"
# remove_all_sd: no service discovery but static and file targets (the
# compose stack scrapes nothing; kretrieve and the collector push OTLP), which
# leaves out the cloud SDKs. Without the builtinassets tag the web UI is
# not embedded: / answers 404, the HTTP API (what Grafana and the tests use)
# works.
prefix="github.com/prometheus/common/version"
CGO_ENABLED=0 GOOS=linux GOARCH="${docker_arch}" \
  go build -mod=readonly -trimpath -tags remove_all_sd \
  -ldflags "-s -w -X ${prefix}.Version=${pinned_release#v} -X ${prefix}.Branch=module -X ${prefix}.Revision=${pinned_module}" \
  -o "${ctx}/prometheus" github.com/prometheus/prometheus/cmd/prometheus ||
  die "go build failed (the first run downloads Prometheus's modules via GOPROXY=$(go env GOPROXY))"
log "go build took $((SECONDS - start))s"

scratch_image "${image_tag}" "${repo_root}/build/prometheus/Dockerfile" "${ctx}" "${pinned_release#v}" \
  "Prometheus server (HTTP API, no web UI assets), built from source" \
  "https://github.com/prometheus/prometheus"
