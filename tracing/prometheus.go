// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	promexporter "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/kretrieve/kretrieve/kafkatrace"
)

// prometheusEnvAddr is the address of OTEL_METRICS_EXPORTER=prometheus:
// OTEL_EXPORTER_PROMETHEUS_HOST (default localhost) and
// OTEL_EXPORTER_PROMETHEUS_PORT (default 9464), as the specification says.
func prometheusEnvAddr(getenv func(string) string) string {
	host, port := lookup(getenv, envPrometheusHost), lookup(getenv, envPrometheusPort)
	if host == "" {
		host = "localhost"
	}
	if port == "" {
		port = "9464"
	}
	return net.JoinHostPort(host, port)
}

// promServer is the HTTP server of the Prometheus /metrics endpoint.
type promServer struct {
	addr string
	srv  *http.Server
	done chan struct{}
}

// startPrometheus listens on addr and serves the metrics of the returned
// reader, with producers', on /metrics, from a registry of its own (not
// the prometheus client's global one). A scraper that asks for OpenMetrics
// (Accept: application/openmetrics-text) gets it, with the exemplars
// (trace_id, span_id) of histogram buckets and counters; the others get
// the classic text format. The producers' base-2 exponential histograms
// (the pathway latency) are served as explicit-bucket ones with the
// queue-wait boundaries, see [explicitProducer].
func startPrometheus(addr string, producers []sdkmetric.Producer, log *slog.Logger) (sdkmetric.Reader, *promServer, error) {
	reg := prometheus.NewRegistry()
	opts := []promexporter.Option{promexporter.WithRegisterer(reg)}
	bounds := kafkatrace.QueueWaitBounds()
	for _, p := range producers {
		opts = append(opts, promexporter.WithProducer(explicitProducer{Producer: p, bounds: bounds}))
	}
	reader, err := promexporter.New(opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("create prometheus exporter: %w", err)
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("listen for prometheus /metrics on %s: %w", addr, err),
			reader.Shutdown(context.Background()))
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true}))
	s := &promServer{
		addr: lis.Addr().String(),
		srv:  &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second},
		done: make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("prometheus /metrics server stopped", "addr", s.addr, "err", err)
		}
	}()
	return reader, s, nil
}

// shutdown stops the server: gracefully until ctx ends, then by closing
// the connections left.
func (s *promServer) shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = s.srv.Close()
	}
	<-s.done
	return err
}
