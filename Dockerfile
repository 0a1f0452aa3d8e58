# kretrieve image: the static kretrieve binary FROM scratch. One image serves
# every role; the command picks it (broker, retrieval, enrichment, gateway, …).
#
# No base image is pulled: `make image` cross-compiles kretrieve for
# linux/IMAGE_ARCH (default: the host's architecture) with CGO_ENABLED=0
# and stages it with the host's CA certificates in build/image/, the build
# context:
#
#   make image                   # docker build -t kretrieve:local build/image
#   make image IMAGE_ARCH=arm64  # an arm64 image from any host (BuildKit,
#                                # through buildx)
#
# The image has no Go toolchain, so `kretrieve index` inside it needs --jsonl;
# build the Go standard library index on a machine with Go and mount it
# (KRETRIEVE_INDEX).
FROM scratch
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY kretrieve /kretrieve
USER 65532:65532
ENTRYPOINT ["/kretrieve"]
