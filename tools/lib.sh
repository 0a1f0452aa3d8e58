# Shared by the image build scripts in tools/*/build.sh (sourced, not run):
# logging, the Docker engine's architecture, the host CA bundle, and the
# FROM-scratch image build from a staged context.
#
# The sourcing script sets `tool` (its name in messages) first, and enables
# `set -euo pipefail`. repo_root is the repository's root.

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

die() { echo "${tool}/build.sh: error: $*" >&2; exit 1; }
log() { echo "${tool}/build.sh: $*" >&2; }

# need_tools checks for go and docker and sets docker_arch (the engine's).
need_tools() {
  command -v go >/dev/null 2>&1 || die "'go' not found in PATH; install Go (https://go.dev/dl/)"
  command -v docker >/dev/null 2>&1 || die "'docker' not found in PATH; install Docker (e.g. apt-get install docker.io)"
  if ! docker_arch="$(docker version --format '{{.Server.Arch}}' 2>/dev/null)" || [[ -z "${docker_arch}" ]]; then
    die "cannot talk to the Docker daemon (is dockerd running and is ${DOCKER_HOST:-/var/run/docker.sock} accessible to $(id -un)?)"
  fi
}

# ca_bundle prints CA_CERTS or the first CA bundle found on the host.
ca_bundle() {
  local c="${CA_CERTS:-}"
  if [[ -z "${c}" ]]; then
    for f in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt /etc/ssl/cert.pem; do
      if [[ -s "${f}" ]]; then c="${f}"; break; fi
    done
  fi
  [[ -n "${c}" && -s "${c}" ]] || die "no CA bundle found (install ca-certificates, or set CA_CERTS=/path/to/bundle.pem)"
  echo "${c}"
}

# scratch_image TAG DOCKERFILE CTX VERSION DESCRIPTION SOURCE copies
# DOCKERFILE and the CA bundle into the staged context CTX (which holds the
# binary) and builds TAG from it, with the OCI labels (title: TAG's
# repository). The binaries are reproducible (-trimpath, no timestamps), so
# an unchanged binary hits the layer cache: same image ID.
scratch_image() {
  local tag="$1" dockerfile="$2" ctx="$3" version="$4" description="$5" source="$6" start=${SECONDS}
  [[ -f "${dockerfile}" ]] || die "missing ${dockerfile}"
  cp "${dockerfile}" "${ctx}/Dockerfile"
  cp -L "$(ca_bundle)" "${ctx}/ca-certificates.crt"
  docker build -q \
    --label "org.opencontainers.image.title=${tag%:*}" \
    --label "org.opencontainers.image.version=${version}" \
    --label "org.opencontainers.image.description=${description}" \
    --label "org.opencontainers.image.source=${source}" \
    -t "${tag}" "${ctx}" >/dev/null || die "docker build failed"
  log "docker build took $((SECONDS - start))s"
  docker image inspect --format '{{.Id}} {{.Size}}' "${tag}" | {
    read -r id size
    log "built ${tag} (${id}, $((size / 1000000)) MB)"
  }
}
