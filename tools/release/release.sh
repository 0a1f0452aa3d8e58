#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Build a kretrieve release into DIST (make release; see README.md here).
# Reproducible: the same commit, Go toolchain, VERSION and CA bundle give
# byte-identical files, whatever the machine's clock or the checkout path.
#
# Environment:
#   VERSION            the release version (default: git describe --tags --always --dirty)
#   DIST               the output directory, emptied first (default: dist)
#   SOURCE_DATE_EPOCH  every file's time (default: the commit's time, git log -1 --format=%ct)
#   REVISION           the commit (default: git rev-parse HEAD)
#   GO                 the go command (default: go)
#   CA_BUNDLE          the CA certificates the image carries (make image-context's default)
#   PLATFORMS          the binaries' platforms (default: linux, darwin, windows on amd64, arm64)
#   IMAGE_PLATFORMS    the image's platforms (default: linux/amd64 linux/arm64)
set -euo pipefail

die() { echo "release.sh: error: $*" >&2; exit 1; }
log() { echo "release.sh: $*" >&2; }

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "${repo}"
GO="${GO:-go}"
VERSION="${VERSION:-$(git describe --tags --always --dirty)}"
REVISION="${REVISION:-$(git rev-parse HEAD)}"
SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}"
DIST="${DIST:-dist}"
PLATFORMS="${PLATFORMS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}"
IMAGE_PLATFORMS="${IMAGE_PLATFORMS:-linux/amd64 linux/arm64}"
[[ "${VERSION}" =~ ^[A-Za-z0-9._+-]+$ ]] || die "VERSION ${VERSION@Q}: want letters, digits and ._+- only"
export SOURCE_DATE_EPOCH GOWORK=off

start=${SECONDS}
rm -rf "${DIST}" && mkdir -p "${DIST}"
DIST="$(cd "${DIST}" && pwd)"
stage="$(mktemp -d "${TMPDIR:-/tmp}/kretrieve-release.XXXXXX")"
trap 'rm -rf "${stage}"' EXIT

# The packaging tools, from tools/release's go.mod: release (this
# directory) and the pinned CycloneDX SBOM generator.
"${GO}" build -C tools/release -trimpath -o "${stage}/bin/release" . ||
  die "cannot build tools/release"
"${GO}" build -C tools/release -trimpath -o "${stage}/bin/cyclonedx-gomod" github.com/CycloneDX/cyclonedx-gomod/cmd/cyclonedx-gomod ||
  die "cannot build cyclonedx-gomod (tools/release/go.mod pins it; the module proxy must be reachable once)"

# -trimpath and -buildid= leave no path or build ID that differs between
# machines; -buildvcs=false leaves out the work tree's state, which
# -X main.version and main.revision name instead.
# The demo corpus (the Go standard library's documentation, JSON Lines),
# written once from this Go installation: every archive carries it, so the
# quick start needs no Go toolchain (kretrieve index --jsonl, run --index).
"${GO}" run ./corpus/democorpus -o "${stage}/go-stdlib.jsonl" || die "cannot write the demo corpus"

ldflags="-s -w -buildid= -X main.version=${VERSION} -X main.revision=${REVISION}"
for platform in ${PLATFORMS}; do
  goos="${platform%/*}" goarch="${platform#*/}" ext=""
  [[ "${goos}" == windows ]] && ext=".exe"
  name="kretrieve_${VERSION}_${goos}_${goarch}"
  mkdir -p "${stage}/${name}"
  CGO_ENABLED=0 GOOS="${goos}" GOARCH="${goarch}" GOFLAGS=-mod=readonly \
    "${GO}" build -trimpath -buildvcs=false -ldflags "${ldflags}" -o "${stage}/${name}/kretrieve${ext}" ./cmd/kretrieve ||
    die "go build for ${platform} failed"
  cp LICENSE README.md CHANGELOG.md "${stage}/go-stdlib.jsonl" "${stage}/${name}/"
  # The SBOM of what the binary holds, from the build information Go
  # embeds in it: no timestamp and no random serial, so it is reproducible.
  "${stage}/bin/cyclonedx-gomod" bin -json -std -noserial -notimestamp -version "${VERSION}" \
    -output "${DIST}/${name}.cdx.json" "${stage}/${name}/kretrieve${ext}" 2>"${stage}/sbom.log" ||
    { cat "${stage}/sbom.log" >&2; die "SBOM for ${platform} failed"; }
  archive="${DIST}/${name}.tar.gz"
  [[ "${goos}" == windows ]] && archive="${DIST}/${name}.zip"
  "${stage}/bin/release" archive -epoch "${SOURCE_DATE_EPOCH}" -o "${archive}" "${stage}/${name}"
  log "${platform}: $(basename "${archive}") ($((SECONDS - start))s)"
done

# The image: one build context per platform, staged by make image-context
# from the release binary (the context docker build uses for make image).
contexts=()
for platform in ${IMAGE_PLATFORMS}; do
  arch="${platform#linux/}" bin="${stage}/kretrieve_${VERSION}_linux_${arch}/kretrieve"
  [[ -f "${bin}" ]] || die "image platform ${platform} needs linux/${arch} in PLATFORMS"
  make --no-print-directory -s image-context GO="${GO}" IMAGE_ARCH="${arch}" IMAGE_CONTEXT="${stage}/image-${arch}" IMAGE_BINARY="${bin}" \
    ${CA_BUNDLE:+CA_BUNDLE="${CA_BUNDLE}"} >/dev/null
  contexts+=("${platform}=${stage}/image-${arch}")
done
"${stage}/bin/release" image -epoch "${SOURCE_DATE_EPOCH}" -version "${VERSION}" -revision "${REVISION}" \
  -o "${DIST}/kretrieve_${VERSION}_oci.tar" "${contexts[@]}"

"${stage}/bin/release" sums "${DIST}"
log "${DIST}: $(wc -l <"${DIST}/SHA256SUMS") files in $((SECONDS - start))s"
