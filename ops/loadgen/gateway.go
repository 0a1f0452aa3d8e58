// SPDX-License-Identifier: Apache-2.0

package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/gateway"
	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/redact"
	"github.com/kretrieve/kretrieve/tracing"
)

// scopeName is the instrumentation scope of the load's root spans in
// gateway mode: the command's, unchanged since the engine moved here from
// cmd/kretrieve.
const scopeName = "github.com/kretrieve/kretrieve/cmd/kretrieve"

// GatewayConfig configures a gateway target.
type GatewayConfig struct {
	// URL is the gateway's base URL, e.g. http://127.0.0.1:8080.
	URL string
	// InFlight is the most requests in flight at once: the idle
	// connections kept.
	InFlight int
	// Timeout bounds each HTTP exchange.
	Timeout time.Duration
	// Telemetry traces the requests and measures the HTTP client.
	Telemetry *tracing.Providers
}

// gatewayTarget drives the HTTP gateway: POST /v1/search per request, each
// under a root "request" span. A gateway at its default trust boundary
// starts its own trace linked to it; with --trust-boundary=false it
// continues this one.
type gatewayTarget struct {
	base   string
	url    string
	client *http.Client
	tracer trace.Tracer
}

// NewGatewayTarget returns a target posting each request to the gateway's
// /v1/search under a root "request" span.
func NewGatewayTarget(c GatewayConfig) Target {
	p := c.Telemetry
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// Keep a connection per request in flight: the default of 2 idle
	// connections per host would open and close connections under load.
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = c.InFlight, c.InFlight
	return &gatewayTarget{
		base: c.URL,
		url:  strings.TrimRight(c.URL, "/") + "/v1/search",
		client: &http.Client{Timeout: c.Timeout, Transport: otelhttp.NewTransport(tr,
			otelhttp.WithTracerProvider(p.TracerProvider),
			otelhttp.WithMeterProvider(p.MeterProvider),
			otelhttp.WithPropagators(p.Propagator))},
		tracer: p.TracerProvider.Tracer(scopeName),
	}
}

func (g *gatewayTarget) name() string { return "gateway " + g.base }

func (g *gatewayTarget) start(context.Context) {}

func (g *gatewayTarget) do(ctx context.Context, query string) result {
	// The root span and the reported latency share one clock reading at
	// each end, so the slowest request's trace lasts exactly its latency.
	start := time.Now()
	ctx, span := g.tracer.Start(ctx, otelnames.SpanRequest, trace.WithTimestamp(start), trace.WithAttributes(redact.Query(query)...))
	res, requestID, err := g.post(ctx, query, start)
	if requestID != "" {
		span.SetAttributes(otelnames.RequestID.String(requestID))
	}
	span.SetAttributes(otelnames.RequestOutcome.String(res.outcome))
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End(trace.WithTimestamp(start.Add(res.latency)))
	return res
}

// post sends one search and reads its answer; err describes a failure.
// Its latency runs from start until the answer has been read.
func (g *gatewayTarget) post(ctx context.Context, query string, start time.Time) (res result, requestID string, err error) {
	body, err := json.Marshal(struct {
		Query string `json:"query"`
	}{query})
	if err != nil {
		return result{outcome: outcomeFailed, latency: time.Since(start)}, "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.url, bytes.NewReader(body))
	if err != nil {
		return result{outcome: outcomeFailed, latency: time.Since(start)}, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := g.client.Do(req)
	if err != nil {
		res = result{outcome: outcomeFailed, latency: time.Since(start), transport: ctx.Err() == nil}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			res.outcome = outcomeTimeout
		}
		return res, "", err
	}
	defer resp.Body.Close()
	res.status = resp.StatusCode
	var answer gateway.SearchResponse // also the ids of 504 and 502 answers
	derr := json.NewDecoder(resp.Body).Decode(&answer)
	_, _ = io.Copy(io.Discard, resp.Body) // reuse the connection
	res.latency = time.Since(start)
	switch {
	case resp.StatusCode/100 == 2 && derr == nil:
		res.outcome, res.timings = outcomeCompleted, &answer.Timings
		return res, answer.RequestID, nil
	case resp.StatusCode/100 == 2:
		res.outcome = outcomeFailed
		return res, "", fmt.Errorf("read answer: %w", derr)
	case resp.StatusCode == http.StatusGatewayTimeout:
		res.outcome = outcomeTimeout
	default:
		res.outcome = outcomeFailed
	}
	return res, answer.RequestID, fmt.Errorf("gateway answered %s", resp.Status)
}

func (g *gatewayTarget) finish(context.Context, *Report) error {
	g.client.CloseIdleConnections()
	return nil
}
