// SPDX-License-Identifier: Apache-2.0

package peers

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/DataDog/dd-trace-go/v2/ddtrace/tracer"
)

// PipelineStatsPath is where the tracer sends its Data Streams payloads
// (gzip-compressed MessagePack) on the agent.
const PipelineStatsPath = "/v0.1/pipeline_stats"

// AgentSink is an HTTP server on 127.0.0.1 standing in for the Datadog
// agent: it reads every request body and answers 200 with an empty JSON
// object, counting the requests by path and, when keep is set, keeping the
// bodies sent to PipelineStatsPath.
type AgentSink struct {
	*httptest.Server

	keep     bool
	mu       sync.Mutex
	requests map[string]int
	payloads [][]byte
}

// NewAgentSink starts an AgentSink, closed by tb's cleanup.
func NewAgentSink(tb testing.TB, keep bool) *AgentSink {
	s := &AgentSink{keep: keep, requests: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(s.Close)
	return s
}

func (s *AgentSink) serve(w http.ResponseWriter, r *http.Request) {
	var body []byte
	if s.keep && r.URL.Path == PipelineStatsPath {
		body, _ = io.ReadAll(r.Body)
	} else {
		_, _ = io.Copy(io.Discard, r.Body)
	}
	s.mu.Lock()
	s.requests[r.URL.Path]++
	if body != nil {
		s.payloads = append(s.payloads, body)
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, "{}")
}

// Requests returns how many requests reached path.
func (s *AgentSink) Requests(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[path]
}

// Payloads returns the bodies kept from PipelineStatsPath.
func (s *AgentSink) Payloads() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.payloads...)
}

// dsmIntake is the Data Streams intake queue of StartTracer: large enough
// that no checkpoint is dropped at the relay's saturated rate, as the
// traced variants' span queues are (the default holds 10,000 points).
const dsmIntake = 1 << 20

// StartTracer starts dd-trace-go's global tracer with Data Streams
// Monitoring on, sending to the agent at agentURL, as the service
// "relay", with its instrumentation telemetry, remote configuration,
// AppSec, startup logs and logging off, and stops it at tb's cleanup. No span is
// started by DSM: the tracer runs only its Data Streams processor, which
// aggregates the checkpoints on its own goroutine and sends them every
// 10 s and on tracer.Flush.
func StartTracer(tb testing.TB, agentURL string) {
	tb.Setenv("DD_DATA_STREAMS_ENABLED", "true")
	tb.Setenv("DD_INSTRUMENTATION_TELEMETRY_ENABLED", "false")
	tb.Setenv("DD_REMOTE_CONFIGURATION_ENABLED", "false")
	tb.Setenv("DD_TRACE_STARTUP_LOGS", "false")
	tb.Setenv("DD_APPSEC_ENABLED", "false")
	err := tracer.Start(
		tracer.WithAgentURL(agentURL),
		tracer.WithService("relay"),
		tracer.WithLogStartup(false),
		tracer.WithLogger(discardLogger{}),
		tracer.WithDataStreamsIntakeBufferSize(dsmIntake),
	)
	if err != nil {
		tb.Fatalf("start the Datadog tracer: %v", err)
	}
	tb.Cleanup(tracer.Stop)
}

// discardLogger drops the tracer's log lines (it has no agent to report
// to, and says so).
type discardLogger struct{}

// Log implements tracer.Logger.
func (discardLogger) Log(string) {}
