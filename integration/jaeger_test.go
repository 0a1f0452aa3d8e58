// SPDX-License-Identifier: Apache-2.0

//go:build integration

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
)

// jaegerConfig is a minimal Jaeger v2 configuration: OTLP/HTTP and gRPC in,
// memory storage, the query API, every port chosen per run (host
// networking).
const jaegerConfig = `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: info
extensions:
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:%d
    grpc:
      endpoint: 127.0.0.1:%d
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 100000
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
      grpc:
        endpoint: 127.0.0.1:%d
processors:
  batch:
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`

// jaegerInstance is a running Jaeger container.
type jaegerInstance struct {
	otlpHTTP int    // OTLP/HTTP receiver port
	otlpGRPC int    // OTLP/gRPC receiver port
	queryURL string // query API base URL
}

// startJaegerInstance starts Jaeger with the configuration above on free
// ports and waits for its query API.
func startJaegerInstance(t *testing.T) jaegerInstance {
	t.Helper()
	j := jaegerInstance{otlpHTTP: freePort(t), otlpGRPC: freePort(t)}
	query := freePort(t)
	j.queryURL = "http://127.0.0.1:" + strconv.Itoa(query)
	dir := t.TempDir()
	file := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(file, fmt.Appendf(nil, jaegerConfig, query, freePort(t), j.otlpHTTP, j.otlpGRPC), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, jaegerImage,
		testcontainers.WithCmd("--config", "/etc/jaeger/config.yaml"),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.NetworkMode = "host"
			hc.Binds = []string{file + ":/etc/jaeger/config.yaml:ro"}
		}),
	)
	waitHTTP(t, j.queryURL+"/api/services", 60*time.Second)
	return j
}
