// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"time"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutlog"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/kretrieve/kretrieve/internal/otlpwire"
)

// exporters are the exporters and metric readers Setup builds: a nil
// span or log exporter, or no readers, for a signal not exported.
type exporters struct {
	span    sdktrace.SpanExporter
	readers []sdkmetric.Reader
	log     sdklog.Exporter
}

// newExporters builds the span exporter, the metric readers (periodic
// over an exporter, and Prometheus's, whose server it starts and records
// in p) and the log exporter of pl; a signal with an exporter list gets a
// fan-out exporter over them (see [fanoutSpans]). If a step fails, what
// the earlier ones built is closed again.
func (p *Providers) newExporters(ctx context.Context, cfg config, pl plan) (exporters, error) {
	var exps exporters
	var closers []func(context.Context) error
	fail := func(err error) (exporters, error) {
		for _, c := range closers {
			err = errors.Join(err, c(ctx))
		}
		return exporters{}, err
	}
	spans, err := newAll(ctx, pl.traces, nil, func(k string) (sdktrace.SpanExporter, error) { return newSpanExporter(ctx, cfg, k) })
	if err != nil {
		return fail(err)
	}
	if len(spans) > 0 {
		exps.span = fanoutSpans(spans)
		if len(spans) == 1 {
			exps.span = spans[0]
		}
		closers = append(closers, exps.span.Shutdown)
	}
	isProm := func(k string) bool { return k == exportPrometheus }
	metrics, err := newAll(ctx, pl.metrics, isProm, func(k string) (sdkmetric.Exporter, error) { return newMetricExporter(ctx, cfg, k) })
	if err != nil {
		return fail(err)
	}
	if len(metrics) > 0 {
		var metricExp sdkmetric.Exporter = fanoutMetrics(metrics)
		if len(metrics) == 1 {
			metricExp = metrics[0]
		}
		readerOpts := []sdkmetric.PeriodicReaderOption{}
		for _, mp := range cfg.metricProducers {
			readerOpts = append(readerOpts, sdkmetric.WithProducer(mp))
		}
		r := sdkmetric.NewPeriodicReader(countingMetricExporter{Exporter: metricExp, c: p.drops, report: p.report}, readerOpts...)
		exps.readers = append(exps.readers, r)
		closers = append(closers, r.Shutdown)
	}
	promAddr := cfg.prometheusListen
	if promAddr == "" && slices.Contains(pl.metrics, exportPrometheus) {
		promAddr = prometheusEnvAddr(cfg.getenv)
	}
	if promAddr != "" {
		r, srv, err := startPrometheus(promAddr, cfg.metricProducers, p.log)
		if err != nil {
			return fail(err)
		}
		p.prom = srv
		exps.readers = append(exps.readers, r)
		closers = append(closers, r.Shutdown, srv.shutdown)
	}
	logs, err := newAll(ctx, pl.logs, nil, func(k string) (sdklog.Exporter, error) { return newLogExporter(ctx, cfg, k) })
	if err != nil {
		return fail(err)
	}
	switch len(logs) {
	case 0:
	case 1:
		exps.log = logs[0]
	default:
		exps.log = fanoutLogs(logs)
	}
	return exps, nil
}

// newSpanExporter returns the trace exporter of kind (exportOTLP or
// exportConsole). OTLP over http/protobuf is otlpwire, which encodes
// requests without otlptracehttp's per-span garbage (see its package doc);
// http/json is otlptracehttp, grpc is contrib's autoexport (otlptracegrpc,
// reading the process environment). console writes JSON to the console
// writer (stderr by default).
func newSpanExporter(ctx context.Context, cfg config, kind string) (sdktrace.SpanExporter, error) {
	if kind == exportConsole {
		return stdouttrace.New(stdouttrace.WithWriter(cfg.console))
	}
	proto, _, err := otlpProtocol(cfg.getenv, tracesEnv)
	if err != nil {
		return nil, err
	}
	switch proto {
	case protoJSON:
		return newJSONSpanExporter(ctx, cfg)
	case protoGRPC:
		var exp sdktrace.SpanExporter
		if u, ok := cfg.defaultEndpoint(tracesEnv); ok {
			exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(u))
		} else {
			exp, err = autoexport.NewSpanExporter(ctx)
		}
		if err != nil {
			return nil, fmt.Errorf("create otlp trace exporter: %w", err)
		}
		return exp, nil
	}
	wcfg, err := otlpEnv{getenv: cfg.getenv, readFile: os.ReadFile}.traceConfig(cfg.exporterTimeout)
	if err != nil {
		return nil, fmt.Errorf("create otlp trace exporter: %w", err)
	}
	if !cfg.exportRetry {
		wcfg.Retry = otlpwire.RetryConfig{Enabled: false}
	}
	exp, err := otlpwire.New(wcfg)
	if err != nil {
		return nil, fmt.Errorf("create otlp trace exporter: %w", err)
	}
	return exp, nil
}

// newJSONSpanExporter returns otlptracehttp sending http/json with the
// client of [exporterHTTPClient]; it reads its other variables from the
// process environment.
func newJSONSpanExporter(ctx context.Context, cfg config) (sdktrace.SpanExporter, error) {
	client, err := exporterHTTPClient(cfg, tracesEnv, cfg.exporterTimeout)
	if err != nil {
		return nil, fmt.Errorf("create otlp trace exporter: %w", err)
	}
	opts := []otlptracehttp.Option{otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON), otlptracehttp.WithHTTPClient(client)}
	if u, ok := cfg.defaultEndpoint(tracesEnv); ok {
		opts = append(opts, otlptracehttp.WithEndpointURL(u))
	}
	if !cfg.exportRetry {
		opts = append(opts, otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("create otlp trace exporter: %w", err)
	}
	return exp, nil
}

// exporterHTTPClient returns the HTTP client of signal s's OTLP/HTTP
// exporter from the SDK (otlptracehttp for http/json, otlpmetrichttp and
// otlploghttp for http/protobuf): [otlpwire.NewHTTPClient], which follows
// no redirect, with the TLS configuration and timeout of s's
// OTEL_EXPORTER_OTLP_* variables read as for otlpwire ([otlpEnv]), since
// an exporter handed a client ignores its own certificate and timeout
// settings. A positive timeout replaces the TIMEOUT variables. An invalid
// variable is an error.
func exporterHTTPClient(cfg config, s signalEnv, timeout time.Duration) (*http.Client, error) {
	wcfg, err := otlpEnv{getenv: cfg.getenv, readFile: os.ReadFile}.signalConfig(s, timeout)
	if err != nil {
		return nil, err
	}
	return otlpwire.NewHTTPClient(wcfg.TLS, wcfg.Timeout), nil
}

// newMetricExporter returns the metric exporter of kind (exportOTLP over
// http/protobuf, grpc or http/json, or exportConsole) with the temporality and
// histogram preferences of the environment. autoexport does not fit here:
// its readers take neither kretrieve's metric producers nor these
// preferences.
func newMetricExporter(ctx context.Context, cfg config, kind string) (sdkmetric.Exporter, error) {
	prefs, err := ReadMetricsPreferences(cfg.getenv)
	if err != nil {
		cfg.logger.WarnContext(ctx, "ignoring metric exporter preference", "err", err)
	}
	if kind == exportConsole {
		return stdoutmetric.New(stdoutmetric.WithWriter(cfg.console),
			stdoutmetric.WithTemporalitySelector(prefs.temporalitySelector()),
			stdoutmetric.WithAggregationSelector(prefs.aggregationSelector()))
	}
	proto, _, err := otlpProtocol(cfg.getenv, metricsEnv)
	if err != nil {
		return nil, err
	}
	var exp sdkmetric.Exporter
	switch proto {
	case protoJSON:
		exp, err = newJSONMetricExporter(cfg.getenv, os.ReadFile, cfg.exporterTimeout, prefs)
	case protoGRPC:
		exp, err = otlpmetricgrpc.New(ctx, metricOptions(cfg, prefs,
			otlpmetricgrpc.WithTemporalitySelector, otlpmetricgrpc.WithAggregationSelector,
			otlpmetricgrpc.WithTimeout, otlpmetricgrpc.WithRetry(otlpmetricgrpc.RetryConfig{}), otlpmetricgrpc.WithEndpointURL)...)
	default:
		var client *http.Client
		if client, err = exporterHTTPClient(cfg, metricsEnv, cfg.exporterTimeout); err == nil {
			exp, err = otlpmetrichttp.New(ctx, append(metricOptions(cfg, prefs,
				otlpmetrichttp.WithTemporalitySelector, otlpmetrichttp.WithAggregationSelector,
				otlpmetrichttp.WithTimeout, otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{}), otlpmetrichttp.WithEndpointURL),
				otlpmetrichttp.WithHTTPClient(client))...)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("create otlp metric exporter: %w", err)
	}
	return exp, nil
}

// metricOptions returns the options of an OTLP metric exporter (HTTP or
// gRPC, whose option types differ) from their constructors: the
// preferences' selectors, cfg's timeout, noRetry unless cfg retries, and
// the default endpoint when the metrics use one.
func metricOptions[O any](cfg config, prefs MetricsPreferences,
	temporality func(sdkmetric.TemporalitySelector) O, aggregation func(sdkmetric.AggregationSelector) O,
	timeout func(time.Duration) O, noRetry O, endpointURL func(string) O,
) []O {
	opts := []O{temporality(prefs.temporalitySelector()), aggregation(prefs.aggregationSelector())}
	if u, ok := cfg.defaultEndpoint(metricsEnv); ok {
		opts = append(opts, endpointURL(u))
	}
	if cfg.exporterTimeout > 0 {
		opts = append(opts, timeout(cfg.exporterTimeout))
	}
	if !cfg.exportRetry {
		opts = append(opts, noRetry)
	}
	return opts
}

// newLogExporter returns the log exporter of kind: otlploghttp with the
// client of [exporterHTTPClient] for OTLP over http/protobuf, contrib's
// autoexport for grpc (both reading the process environment), this
// package's OTLP/JSON exporter for http/json, or JSON on the console
// writer.
func newLogExporter(ctx context.Context, cfg config, kind string) (sdklog.Exporter, error) {
	if kind == exportConsole {
		return stdoutlog.New(stdoutlog.WithWriter(cfg.console))
	}
	proto, _, err := otlpProtocol(cfg.getenv, logsEnv)
	if err != nil {
		return nil, err
	}
	var exp sdklog.Exporter
	switch proto {
	case protoJSON:
		exp, err = newJSONLogExporter(cfg.getenv, os.ReadFile, cfg.exporterTimeout)
	case protoGRPC:
		if u, ok := cfg.defaultEndpoint(logsEnv); ok {
			exp, err = otlploggrpc.New(ctx, otlploggrpc.WithEndpointURL(u))
		} else {
			exp, err = autoexport.NewLogExporter(ctx)
		}
	default:
		// As before, the log exporter reads the timeout variables
		// whatever WithExporterTimeout says.
		var client *http.Client
		if client, err = exporterHTTPClient(cfg, logsEnv, 0); err == nil {
			opts := []otlploghttp.Option{otlploghttp.WithHTTPClient(client)}
			if u, ok := cfg.defaultEndpoint(logsEnv); ok {
				opts = append(opts, otlploghttp.WithEndpointURL(u))
			}
			exp, err = otlploghttp.New(ctx, opts...)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("create otlp log exporter: %w", err)
	}
	return exp, nil
}
