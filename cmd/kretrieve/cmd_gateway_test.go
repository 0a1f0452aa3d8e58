// SPDX-License-Identifier: Apache-2.0

package main

import (
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/tracing"
)

func TestGatewayIsATrustBoundaryByDefault(t *testing.T) {
	noEnv := func(string) string { return "" }
	c, err := loadGatewayConfig(nil, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !c.config().TrustBoundary {
		t.Fatal("the gateway continues callers' traces by default; it must be a trust boundary")
	}
	c, err = loadGatewayConfig([]string{"--trust-boundary=false", "--trusted-baggage", "tenant, region"}, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.config().TrustBoundary {
		t.Fatal("--trust-boundary=false ignored")
	}
	if pc := c.pipelineConfig(&component{telemetry: &tracing.Providers{}}); !slices.Equal(pc.TrustedBaggage, []string{"tenant", "region"}) {
		t.Fatalf("trusted baggage %q", pc.TrustedBaggage)
	}
}

func TestTraceTrustFlagsReachThePipeline(t *testing.T) {
	env := map[string]string{"KRETRIEVE_RETRIEVAL_TRUST_BOUNDARY": "true", "KRETRIEVE_TRUSTED_BAGGAGE": "tenant,,region ", "KRETRIEVE_BAGGAGE_ATTRIBUTES": "tenant"}
	c, err := loadWorkerConfig("retrieval", nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	pc := c.pipelineConfig(&component{telemetry: &tracing.Providers{}})
	if !pc.RetrievalTrustBoundary || !slices.Equal(pc.TrustedBaggage, []string{"tenant", "region"}) || !slices.Equal(pc.BaggageAttributes, []string{"tenant"}) {
		t.Fatalf("pipeline config: trust boundary %v, trusted %q, attributes %q", pc.RetrievalTrustBoundary, pc.TrustedBaggage, pc.BaggageAttributes)
	}
	if _, err := loadWorkerConfig("enrichment", []string{"--retrieval-trust-boundary"}, func(string) string { return "" }, io.Discard); err == nil {
		t.Fatal("enrichment accepted --retrieval-trust-boundary")
	}
}

func TestGatewayLimitFlagsReachTheGateway(t *testing.T) {
	env := map[string]string{"KRETRIEVE_MAX_IN_FLIGHT": "64", "KRETRIEVE_HTTP_READ_TIMEOUT": "3s", "KRETRIEVE_MAX_CONNECTIONS": "128"}
	c, err := loadGatewayConfig([]string{"--http-idle-timeout", "20s", "--http-read-header-timeout", "2s", "--http-max-header-bytes", "8192"},
		func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	got := c.config()
	if got.MaxInFlight != 64 || got.ReadTimeout != 3*time.Second || got.MaxConnections != 128 || got.IdleTimeout != 20*time.Second ||
		got.ReadHeaderTimeout != 2*time.Second || got.MaxHeaderBytes != 8192 {
		t.Fatalf("gateway config %+v", got)
	}
	for _, args := range [][]string{{"--max-in-flight", "0"}, {"--max-connections", "0"}, {"--http-read-timeout", "0s"}, {"--http-max-header-bytes", "10"}} {
		if _, err := loadGatewayConfig(args, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// TestSearchTimeoutFloor: a --search-timeout that a burst of slow queries
// would overrun twice (20 ms, which dead-lettered innocent requests in
// round three's chaos run) is refused with the floor named; the floor
// itself and 0 (no limit) are taken.
func TestSearchTimeoutFloor(t *testing.T) {
	_, err := loadWorkerConfig("retrieval", []string{"--search-timeout", "20ms"}, mapEnv(nil), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "search-timeout: 20ms is below 100ms") {
		t.Errorf("--search-timeout 20ms: %v, want it refused below 100ms", err)
	}
	for _, ok := range []string{"100ms", "0"} {
		if _, err := loadWorkerConfig("retrieval", []string{"--search-timeout", ok}, mapEnv(nil), io.Discard); err != nil {
			t.Errorf("--search-timeout %s: %v", ok, err)
		}
	}
}
