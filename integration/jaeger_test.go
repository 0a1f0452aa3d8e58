//go:build integration

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
)

// jaegerConfig is a minimal Jaeger v2 configuration: OTLP/HTTP in, memory
// storage, the query API, every port chosen per run (host networking).
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
processors:
  batch:
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`

var jaegerConfigFile string

// jaegerPorts picks the OTLP/HTTP and query ports and writes the config.
func jaegerPorts(t *testing.T) (otlp, query int) {
	t.Helper()
	otlp, query = freePort(t), freePort(t)
	dir := t.TempDir()
	jaegerConfigFile = filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(jaegerConfigFile, fmt.Appendf(nil, jaegerConfig, query, freePort(t), otlp), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return otlp, query
}

// jaegerArgs runs Jaeger with that config.
func jaegerArgs(_, _ int) []testcontainers.ContainerCustomizer {
	return []testcontainers.ContainerCustomizer{
		testcontainers.WithCmd("--config", "/etc/jaeger/config.yaml"),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.NetworkMode = "host"
			hc.Binds = []string{jaegerConfigFile + ":/etc/jaeger/config.yaml:ro"}
		}),
	}
}
