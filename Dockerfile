# kretrieve image: the static kretrieve binary FROM scratch. One image serves
# every role; the command picks it (broker, retrieval, enrichment, gateway, …).
#
# No base image is pulled: `make image` stages the build context in
# build/image/ (`make image-context`): kretrieve cross-compiled for
# linux/IMAGE_ARCH (default: the host's architecture) with CGO_ENABLED=0, the
# host's CA certificates and the demo corpus, go-stdlib.jsonl, written on the
# build host (corpus/democorpus):
#
#   make image                   # docker build -t kretrieve:local build/image
#   make image IMAGE_ARCH=arm64  # an arm64 image from any host (BuildKit,
#                                # through buildx)
#
# The binary is /usr/local/bin/kretrieve, on PATH, so `kubectl exec … --
# kretrieve lag` works. The image has no Go toolchain: the demo corpus is
# published with `kretrieve ingest --jsonl /usr/share/kretrieve/go-stdlib.jsonl`
# (deploy/k8s/ingest.yaml), and `kretrieve index` inside it needs --jsonl.
FROM scratch
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY go-stdlib.jsonl /usr/share/kretrieve/go-stdlib.jsonl
COPY kretrieve /usr/local/bin/kretrieve
ENV PATH=/usr/local/bin
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/kretrieve"]
