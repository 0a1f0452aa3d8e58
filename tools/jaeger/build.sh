#!/usr/bin/env bash
# Build the Jaeger v2 all-in-one binary from Go source (pinned in ./go.mod) and
# package it into a FROM-scratch image. See README.md next to this script.
#
# Environment:
#   JAEGER_IMAGE_TAG  image tag to build        (default kretrieve/jaeger:local)
#   CA_CERTS          CA bundle to put in image (default: first of the usual
#                     host paths, e.g. /etc/ssl/certs/ca-certificates.crt)
#   JAEGER_BIN_OUT    if set, also copy the built binary to this path
#
# Idempotent: the Go build/module caches make rebuilds link-only, the binary is
# reproducible (-trimpath, no timestamps), so an unchanged binary hits the
# Docker layer cache and yields the same image ID.
set -euo pipefail

die() { echo "jaeger/build.sh: error: $*" >&2; exit 1; }
log() { echo "jaeger/build.sh: $*" >&2; }

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(cd "${script_dir}/../.." && pwd)"
dockerfile="${repo_root}/build/jaeger/Dockerfile"
image_tag="${JAEGER_IMAGE_TAG:-kretrieve/jaeger:local}"
jaeger_pkg="github.com/jaegertracing/jaeger/cmd/jaeger"

# Jaeger tags its Go module v1.x; the same commit is released as v2.y.
# v1.76.0 == v2.13.0 (see Jaeger CHANGELOG.md). Update both when bumping.
pinned_v1="v1.76.0"
pinned_v2="v2.13.0"

command -v go >/dev/null 2>&1 || die "'go' not found in PATH; install Go >= 1.25 (https://go.dev/dl/)"
command -v docker >/dev/null 2>&1 || die "'docker' not found in PATH; install Docker (e.g. apt-get install docker.io)"
[[ -f "${dockerfile}" ]] || die "missing ${dockerfile}"
[[ -f "${script_dir}/go.mod" && -f "${script_dir}/go.sum" ]] || die "missing ${script_dir}/go.mod or go.sum"

if ! docker_arch="$(docker version --format '{{.Server.Arch}}' 2>/dev/null)" || [[ -z "${docker_arch}" ]]; then
  die "cannot talk to the Docker daemon (is dockerd running and is ${DOCKER_HOST:-/var/run/docker.sock} accessible to $(id -un)?)"
fi

ca_certs="${CA_CERTS:-}"
if [[ -z "${ca_certs}" ]]; then
  for c in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt /etc/ssl/cert.pem; do
    if [[ -s "${c}" ]]; then ca_certs="${c}"; break; fi
  done
fi
[[ -n "${ca_certs}" ]] ||
  die "no CA bundle found (install ca-certificates, or set CA_CERTS=/path/to/bundle.pem)"
[[ -s "${ca_certs}" ]] || die "CA bundle ${ca_certs} does not exist or is empty"

cd "${script_dir}"
# Build only against this module's go.mod/go.sum, never a go.work elsewhere.
export GOWORK=off

mod_version="$(go list -m -f '{{.Version}}' github.com/jaegertracing/jaeger)" ||
  die "cannot resolve github.com/jaegertracing/jaeger from ${script_dir}/go.mod"
if [[ "${mod_version}" == "${pinned_v1}" ]]; then
  version="${pinned_v2}"
else
  log "warning: go.mod pins jaeger ${mod_version}, expected ${pinned_v1}; update pinned_v1/pinned_v2"
  version="${mod_version}"
fi

ctx="$(mktemp -d "${TMPDIR:-/tmp}/jaeger-image.XXXXXX")"
trap 'rm -rf "${ctx}"' EXIT

log "building ${jaeger_pkg}@${mod_version} (${version}) for linux/${docker_arch} with $(go env GOVERSION)"
start=${SECONDS}
# -mod=readonly: fail instead of silently editing go.mod/go.sum.
# -s -w: drop the symbol table and DWARF (halves the image).
CGO_ENABLED=0 GOOS=linux GOARCH="${docker_arch}" \
  go build -mod=readonly -trimpath \
  -ldflags "-s -w -X github.com/jaegertracing/jaeger/internal/version.latestVersion=${version}" \
  -o "${ctx}/jaeger" "${jaeger_pkg}" ||
  die "go build failed (first run downloads ~300 modules via GOPROXY=$(go env GOPROXY))"
log "go build took $((SECONDS - start))s"

cp "${dockerfile}" "${ctx}/Dockerfile"
cp -L "${ca_certs}" "${ctx}/ca-certificates.crt"
if [[ -n "${JAEGER_BIN_OUT:-}" ]]; then
  cp "${ctx}/jaeger" "${JAEGER_BIN_OUT}"
  log "binary copied to ${JAEGER_BIN_OUT}"
fi

start=${SECONDS}
docker build --build-arg "JAEGER_VERSION=${version}" -t "${image_tag}" "${ctx}" ||
  die "docker build failed"
log "docker build took $((SECONDS - start))s"

docker image inspect --format '{{.Id}} {{.Size}}' "${image_tag}" | {
  read -r id size
  log "built ${image_tag} (${id}, $((size / 1000000)) MB)"
}
