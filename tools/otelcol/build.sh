#!/usr/bin/env bash
# Build the compose stack's OpenTelemetry Collector with the OpenTelemetry
# Collector Builder (ocb) from ./manifest.yaml and package it into a
# FROM-scratch image. See README.md next to this script.
#
# Environment:
#   OTELCOL_IMAGE_TAG  image tag to build     (default kretrieve/otelcol:local)
#   CA_CERTS           CA bundle for the image (default: the host's)
#   OTELCOL_BIN_OUT    if set, also copy the built binary to this path
#   OTELCOL_WORK       where ocb generates the sources
#                      (default ~/.cache/kretrieve/otelcol)
set -euo pipefail
tool=otelcol
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
manifest="${repo_root}/tools/otelcol/manifest.yaml"

# The builder's version is the components' (ocb generates code against the
# collector APIs of its own release). Update both, and the manifest, together.
builder_version="v0.161.0"
image_tag="${OTELCOL_IMAGE_TAG:-kretrieve/otelcol:local}"
need_tools
export GOWORK=off

# ocb writes the distribution's sources (main.go, components.go, go.mod,
# go.sum) into the manifest's output_path, relative to the working directory:
# OTELCOL_WORK, outside the repository (generated code is neither committed
# nor linted), kept between builds so that a rebuild only links.
work="${OTELCOL_WORK:-${XDG_CACHE_HOME:-${HOME}/.cache}/kretrieve/otelcol}"
mkdir -p "${work}"
ctx="$(mktemp -d "${TMPDIR:-/tmp}/otelcol-image.XXXXXX")"
trap 'rm -rf "${ctx}"' EXIT

start=${SECONDS}
log "generating the distribution with ocb ${builder_version}"
(cd "${work}" && go run "go.opentelemetry.io/collector/cmd/builder@${builder_version}" \
  --config "${manifest}" --skip-compilation >"${work}/ocb.log" 2>&1) ||
  { tail -20 "${work}/ocb.log" >&2; die "ocb failed (log: ${work}/ocb.log)"; }
log "building for linux/${docker_arch} with $(go env GOVERSION)"
(cd "${work}/otelcol-kretrieve" && CGO_ENABLED=0 GOOS=linux GOARCH="${docker_arch}" \
  go build -mod=readonly -trimpath -ldflags "-s -w" -o "${ctx}/otelcol" .) ||
  die "go build failed (the first run downloads the collector's modules via GOPROXY=$(go env GOPROXY))"
log "ocb and go build took $((SECONDS - start))s"
if [[ -n "${OTELCOL_BIN_OUT:-}" ]]; then
  cp "${ctx}/otelcol" "${OTELCOL_BIN_OUT}"
fi

scratch_image "${image_tag}" "${repo_root}/build/otelcol/Dockerfile" "${ctx}" "${builder_version#v}" \
  "OpenTelemetry Collector with the components of kretrieve's compose stack" \
  "https://github.com/open-telemetry/opentelemetry-collector"
