// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"context"
	"log/slog"
	"slices"
	"sync"
)

// The specification's default OTLP endpoints, used when a signal's
// OTEL_*_EXPORTER names otlp and neither OTEL_EXPORTER_OTLP_ENDPOINT nor
// the signal's endpoint variable is set: http/protobuf and http/json post
// to the HTTP one's /v1/<signal>, grpc connects to the gRPC one (plain
// text, as its http scheme says).
const (
	specHTTPEndpoint = "http://localhost:4318"
	specGRPCEndpoint = "http://localhost:4317"
)

// defaultEndpointNotice makes the line saying a default endpoint is used
// appear once per process, however many times Setup runs.
var defaultEndpointNotice = new(sync.Once)

// defaultEndpoints returns, keyed by signal name, the URL each signal of
// pl exported over OTLP without an endpoint variable sends to: cfg's
// defaults (the specification's, see [specHTTPEndpoint]) for its protocol.
func defaultEndpoints(cfg config, pl plan) map[string]string {
	urls := make(map[string]string)
	for _, s := range []struct {
		env   signalEnv
		kinds []string
	}{{tracesEnv, pl.traces}, {metricsEnv, pl.metrics}, {logsEnv, pl.logs}} {
		if !slices.Contains(s.kinds, exportOTLP) || lookup(cfg.getenv, envEndpoint) != "" || lookup(cfg.getenv, s.env.endpoint) != "" {
			continue
		}
		// exportKinds checked the protocol.
		if proto, _, _ := otlpProtocol(cfg.getenv, s.env); proto == protoGRPC {
			urls[s.env.name] = cfg.specGRPCEndpoint
		} else {
			urls[s.env.name] = cfg.specHTTPEndpoint + "/v1/" + s.env.name
		}
	}
	return urls
}

// withEndpoints returns getenv answering each signal's endpoint variable
// (OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT) with its URL in urls, so that the
// exporters reading cfg.getenv send there.
func withEndpoints(getenv func(string) string, urls map[string]string) func(string) string {
	if len(urls) == 0 {
		return getenv
	}
	byVar := make(map[string]string, len(urls))
	for _, s := range []signalEnv{tracesEnv, metricsEnv, logsEnv} {
		if u, ok := urls[s.name]; ok {
			byVar[s.endpoint] = u
		}
	}
	return func(k string) string {
		if u, ok := byVar[k]; ok {
			return u
		}
		return getenv(k)
	}
}

// logDefaultEndpoints says, at info level and once per process, which
// signals use the specification's default endpoint.
func logDefaultEndpoints(ctx context.Context, log *slog.Logger, urls map[string]string) {
	if len(urls) == 0 {
		return
	}
	defaultEndpointNotice.Do(func() {
		var attrs []any
		for _, s := range []string{tracesEnv.name, metricsEnv.name, logsEnv.name} {
			if u, ok := urls[s]; ok {
				attrs = append(attrs, s, u)
			}
		}
		log.InfoContext(ctx, "OTLP endpoint not set; using the specification's default (set OTEL_EXPORTER_OTLP_ENDPOINT to send elsewhere)", attrs...)
	})
}

// defaultEndpoint returns the URL signal s sends to when it uses a default
// endpoint, for the SDK's exporters, which read the process environment
// rather than cfg.getenv and must be given it.
func (c config) defaultEndpoint(s signalEnv) (string, bool) {
	u, ok := c.endpoints[s.name]
	return u, ok
}
