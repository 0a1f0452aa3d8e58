// SPDX-License-Identifier: Apache-2.0

//go:build integration

package integration

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/kretrieve/kretrieve/corpus"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
)

// Images, overridable: KRETRIEVE_IMAGE (built by `make image`), JAEGER_IMAGE
// (built by `make jaeger-image`, or an upstream jaegertracing/jaeger:2.x),
// KAFKA_IMAGE (unset: the kretrieve image's embedded broker; set, e.g.
// apache/kafka:4.1.0: real Apache Kafka).
func image(env, def string) string {
	if v := os.Getenv(env); v != "" {
		return v
	}
	return def
}

var (
	kretrieveImage = image("KRETRIEVE_IMAGE", "kretrieve:local")
	jaegerImage    = image("JAEGER_IMAGE", "kretrieve/jaeger:local")
	kafkaImage     = os.Getenv("KAFKA_IMAGE")
)

// docsDir holds docs.jsonl, the Go standard library's documentation as
// `kretrieve ingest --jsonl` reads it, written once on the host (the image
// has no Go toolchain) and mounted read-only into the ingest container of
// every stack: the workers take their documents from the documents topic,
// as in production.
var docsDir string

func TestMain(m *testing.M) {
	if err := exec.Command("docker", "info").Run(); err != nil {
		fmt.Fprintln(os.Stderr, "integration: no Docker engine is reachable (docker info failed).\n"+
			"Start one, e.g.: apt-get install -y docker.io && (dockerd --iptables=false >/tmp/dockerd.log 2>&1 &),\n"+
			"wait for /var/run/docker.sock, then run `make integration`.")
		os.Exit(1)
	}
	os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	dir, err := os.MkdirTemp("", "kretrieve-docs-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	docsDir = dir
	if err := writeDocs(filepath.Join(dir, "docs.jsonl")); err != nil {
		fmt.Fprintln(os.Stderr, "integration: documents:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// writeDocs writes the Go standard library's documentation to path, one
// document per line, readable by the containers' unprivileged user.
func writeDocs(path string) error {
	docs, err := corpus.GoStdlib(context.Background(), "")
	if err != nil {
		return err
	}
	var b bytes.Buffer
	for _, d := range docs {
		line, err := corpus.EncodeDocument(d)
		if err != nil {
			return fmt.Errorf("document %s: %w", d.ID, err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return err
	}
	return exec.Command("chmod", "-R", "a+rX", filepath.Dir(path)).Run()
}

// freePort returns a TCP port free on 127.0.0.1 right now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// run starts a container on the host network; cleanup is registered before
// the error is checked, so a half-started container is removed too.
func run(t *testing.T, img string, opts ...testcontainers.ContainerCustomizer) *testcontainers.DockerContainer {
	t.Helper()
	opts = append([]testcontainers.ContainerCustomizer{
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) { hc.NetworkMode = "host" }),
	}, opts...)
	c, err := testcontainers.Run(t.Context(), img, opts...)
	testcontainers.CleanupContainer(t, c)
	if err != nil {
		t.Fatalf("start %s: %v", img, err)
	}
	return c
}

// stack is a running kretrieve deployment.
type stack struct {
	brokers    string
	brokerPort int
	dataDir    string
	jaegerURL  string
	otlp       string
	gatewayURL string
	broker     *testcontainers.DockerContainer
	// ingested says the documents were published (they outlive a broker
	// restart: its data directory is kept).
	ingested bool
	// env is added to (and wins over) every kretrieve container's
	// environment.
	env map[string]string
}

// kretrieveEnv is the environment of every kretrieve container.
func (s *stack) kretrieveEnv(service string) map[string]string {
	env := map[string]string{
		"KRETRIEVE_BROKERS":           s.brokers,
		"KRETRIEVE_LOG_LEVEL":         "info",
		"KRETRIEVE_LAG_INTERVAL":      "0",
		"KRETRIEVE_SESSION_TIMEOUT":   "10s", // a killed worker's partitions move within 10 s
		"OTEL_SERVICE_NAME":           service,
		"OTEL_EXPORTER_OTLP_ENDPOINT": s.otlp,
		"OTEL_METRICS_EXPORTER":       "none",
		"OTEL_BSP_SCHEDULE_DELAY":     "100",
	}
	maps.Copy(env, s.env)
	return env
}

// startBroker starts the embedded broker (or KAFKA_IMAGE) on a free port
// with its data in a host directory that survives the container.
func (s *stack) startBroker(t *testing.T) {
	t.Helper()
	if s.brokerPort == 0 {
		s.brokerPort = freePort(t)
		s.dataDir = t.TempDir()
		if err := os.Chmod(s.dataDir, 0o777); err != nil {
			t.Fatal(err)
		}
		s.brokers = "127.0.0.1:" + strconv.Itoa(s.brokerPort)
	}
	if kafkaImage != "" {
		s.broker = startApacheKafka(t, s.brokerPort, s.dataDir)
	} else {
		s.broker = run(t, kretrieveImage,
			testcontainers.WithCmd("broker", "--listen", s.brokers, "--data-dir", "/data"),
			testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
				hc.NetworkMode = "host"
				hc.Binds = []string{s.dataDir + ":/data"}
			}),
			testcontainers.WithWaitStrategy(wait.ForLog("broker listening").WithStartupTimeout(30*time.Second)),
		)
	}
	if !s.ingested {
		s.ingest(t)
		s.ingested = true
	}
}

// ingest publishes the documents to the documents topic with `kretrieve
// ingest`, as compose's ingest service does, and fails unless it exits 0.
func (s *stack) ingest(t *testing.T) {
	t.Helper()
	c := run(t, kretrieveImage,
		testcontainers.WithCmd("ingest", "--jsonl", "/docs/docs.jsonl"),
		testcontainers.WithEnv(s.kretrieveEnv("kretrieve-ingest")),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.NetworkMode = "host"
			hc.Binds = []string{docsDir + ":/docs:ro"}
		}),
		testcontainers.WithWaitStrategy(wait.ForExit().WithExitTimeout(120*time.Second)),
	)
	st, err := c.State(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if st.ExitCode != 0 {
		logs, _ := c.Logs(t.Context())
		var out []byte
		if logs != nil {
			out, _ = io.ReadAll(logs)
		}
		t.Fatalf("kretrieve ingest exited %d:\n%s", st.ExitCode, out)
	}
}

// startApacheKafka runs real Apache Kafka (KRaft, one node) on port.
func startApacheKafka(t *testing.T, port int, dataDir string) *testcontainers.DockerContainer {
	t.Helper()
	ctrl := freePort(t)
	return run(t, kafkaImage,
		testcontainers.WithEnv(map[string]string{
			"KAFKA_NODE_ID":                                  "1",
			"KAFKA_PROCESS_ROLES":                            "broker,controller",
			"KAFKA_LISTENERS":                                fmt.Sprintf("PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", port, ctrl),
			"KAFKA_ADVERTISED_LISTENERS":                     fmt.Sprintf("PLAINTEXT://127.0.0.1:%d", port),
			"KAFKA_CONTROLLER_LISTENER_NAMES":                "CONTROLLER",
			"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP":           "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
			"KAFKA_CONTROLLER_QUORUM_VOTERS":                 fmt.Sprintf("1@127.0.0.1:%d", ctrl),
			"KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR":         "1",
			"KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
			"KAFKA_TRANSACTION_STATE_LOG_MIN_ISR":            "1",
			"KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS":         "0",
			"KAFKA_LOG_DIRS":                                 "/var/lib/kafka/data",
		}),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.NetworkMode = "host"
			hc.Binds = []string{dataDir + ":/var/lib/kafka/data"}
		}),
		testcontainers.WithWaitStrategy(wait.ForLog("Kafka Server started").WithStartupTimeout(90*time.Second)),
	)
}

// startJaeger starts Jaeger with OTLP/HTTP and its query API.
func (s *stack) startJaeger(t *testing.T) {
	t.Helper()
	j := startJaegerInstance(t)
	s.otlp = "http://127.0.0.1:" + strconv.Itoa(j.otlpHTTP)
	s.jaegerURL = j.queryURL
}

// startWorker starts a retrieval or enrichment container.
func (s *stack) startWorker(t *testing.T, role string) *testcontainers.DockerContainer {
	t.Helper()
	return run(t, kretrieveImage,
		testcontainers.WithCmd(role),
		testcontainers.WithEnv(s.kretrieveEnv("kretrieve-"+role)),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.NetworkMode = "host"
			// The index it builds from the documents topic (the image
			// has no /tmp of its own).
			hc.Tmpfs = map[string]string{"/tmp": "rw,size=512m"}
		}),
		testcontainers.WithWaitStrategy(wait.ForLog("worker started").WithStartupTimeout(90*time.Second)),
	)
}

// startGateway starts the gateway on a free port and waits until it is ready.
func (s *stack) startGateway(t *testing.T) {
	t.Helper()
	port := freePort(t)
	env := s.kretrieveEnv("kretrieve-gateway")
	env["KRETRIEVE_HTTP_LISTEN"] = "127.0.0.1:" + strconv.Itoa(port)
	env["KRETRIEVE_TIMEOUT"] = "60s"
	run(t, kretrieveImage,
		testcontainers.WithCmd("gateway"),
		testcontainers.WithEnv(env),
		testcontainers.WithWaitStrategy(wait.ForLog("gateway listening").WithStartupTimeout(60*time.Second)),
	)
	s.gatewayURL = "http://127.0.0.1:" + strconv.Itoa(port)
	waitHTTP(t, s.gatewayURL+"/readyz", 60*time.Second)
}

// waitHTTP polls url until it answers 200.
func waitHTTP(t *testing.T, url string, timeout time.Duration) {
	t.Helper()
	var err error
	ready := poll.WaitEvery(timeout, 200*time.Millisecond, func() bool {
		var resp *http.Response
		if resp, err = http.Get(url); err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	if !ready {
		t.Fatalf("%s not ready after %v (last error %v)", url, timeout, err)
	}
}
