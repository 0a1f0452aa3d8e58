package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/contrib/instrumentation/runtime"
	"go.opentelemetry.io/contrib/propagators/autoprop"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutlog"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	otellog "go.opentelemetry.io/otel/log"

	lognoop "go.opentelemetry.io/otel/log/noop"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/kretrieve/kretrieve/internal/otlpwire"
)

// Providers holds what [Setup] installed. Its fields are OTel API types so
// that callers need not import the SDK.
type Providers struct {
	// TracerProvider is the installed tracer provider (a no-op one when
	// Enabled is false).
	TracerProvider trace.TracerProvider
	// MeterProvider is the installed meter provider (a no-op one when
	// Enabled is false).
	MeterProvider metric.MeterProvider
	// LoggerProvider is the installed OTel logger provider that loggers
	// from [NewLogger] send their records to (a no-op one when logs are
	// not exported).
	LoggerProvider otellog.LoggerProvider
	// Propagator is the propagator of OTEL_PROPAGATORS (default W3C
	// TraceContext + Baggage), installed even when Enabled is false so
	// context still passes through.
	Propagator propagation.TextMapPropagator
	// Enabled is false when OTEL_SDK_DISABLED=true.
	Enabled bool
	// Exporting is true when spans are exported (OTLP or console).
	Exporting bool
	// ExportingMetrics is true when metrics are exported (OTLP, console or
	// Prometheus).
	ExportingMetrics bool
	// ExportingLogs is true when log records are exported (OTLP or
	// console).
	ExportingLogs bool
	// ParentBasedSampling is true when the sampler follows the parent's
	// sampled flag: OTEL_TRACES_SAMPLER is unset (the default
	// parentbased_always_on) or one of the parentbased_* samplers.
	ParentBasedSampling bool
	// ServiceName is the effective service.name: OTEL_SERVICE_NAME, else
	// the one given with WithServiceName. Pathway checkpoints are
	// identified by it.
	ServiceName string

	tp       *sdktrace.TracerProvider // nil when disabled
	mp       *sdkmetric.MeterProvider // nil when disabled
	lp       *sdklog.LoggerProvider   // nil when logs are not exported
	prom     *promServer              // nil without a Prometheus endpoint
	counters *spanCounters
	drops    *dropCounters
	report   *exportReporter
	log      *slog.Logger
	budget   time.Duration

	shutdownOnce sync.Once
}

// Setup builds tracer, meter and logger providers from the standard OTEL_*
// variables (see the package doc), installs them and the propagator of
// OTEL_PROPAGATORS as OTel globals, routes SDK errors to the logger (the
// first at warn level, later ones at debug level), and returns the
// providers. Call [Providers.Shutdown] to flush and stop everything. ctx is
// used only while building the resource and the exporters.
func Setup(ctx context.Context, opts ...Option) (*Providers, error) {
	cfg := newConfig(opts)
	log := localLogger(cfg.logger)
	report := newExportReporter(log)
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		report.report(context.Background(), "", err)
	}))

	prop, err := newPropagator(cfg.getenv)
	if err != nil {
		return nil, err
	}
	p := &Providers{
		Propagator: prop, counters: newSpanCounters(), drops: &dropCounters{}, report: report,
		log: log, ServiceName: cfg.serviceName, budget: cfg.shutdownTimeout,
	}
	if v := lookup(cfg.getenv, "OTEL_SERVICE_NAME"); v != "" {
		p.ServiceName = v
	}

	if sdkDisabled(cfg.getenv) {
		p.TracerProvider = tracenoop.NewTracerProvider()
		p.MeterProvider = metricnoop.NewMeterProvider()
		p.LoggerProvider = lognoop.NewLoggerProvider()
		p.install()
		return p, nil
	}
	p.Enabled = true

	spanValueLimit, logValueLimit, err := attributeLimits(cfg.getenv)
	if err != nil {
		return nil, err
	}
	var kinds [3]string
	for i, s := range []signalEnv{tracesEnv, metricsEnv, logsEnv} {
		if kinds[i], err = exportKind(cfg.getenv, s); err != nil {
			return nil, err
		}
	}
	tracesKind, metricsKind, logsKind := kinds[0], kinds[1], kinds[2]
	if slices.Contains(kinds[:], exportOTLP) {
		if err := checkCredentialVariables(cfg.getenv); err != nil {
			return nil, err
		}
	}
	res, err := newResource(ctx, cfg.serviceName, log)
	if err != nil {
		return nil, err
	}
	if v, ok := res.Set().Value(semconv.ServiceNameKey); ok && v.AsString() != "" {
		p.ServiceName = v.AsString()
	}

	// Everything built so far is closed again if a later step fails.
	var closers []func(context.Context) error
	fail := func(err error) (*Providers, error) {
		for _, c := range closers {
			err = errors.Join(err, c(ctx))
		}
		return nil, err
	}

	var spanExp sdktrace.SpanExporter
	if tracesKind != exportOff {
		if spanExp, err = newSpanExporter(ctx, cfg, tracesKind); err != nil {
			return fail(err)
		}
		closers = append(closers, spanExp.Shutdown)
	}
	var readers []sdkmetric.Reader
	switch metricsKind {
	case exportOTLP, exportConsole:
		metricExp, err := newMetricExporter(ctx, cfg, metricsKind)
		if err != nil {
			return fail(err)
		}
		readerOpts := []sdkmetric.PeriodicReaderOption{}
		for _, mp := range cfg.metricProducers {
			readerOpts = append(readerOpts, sdkmetric.WithProducer(mp))
		}
		r := sdkmetric.NewPeriodicReader(countingMetricExporter{Exporter: metricExp, c: p.drops, report: report}, readerOpts...)
		readers = append(readers, r)
		closers = append(closers, r.Shutdown)
	}
	promAddr := cfg.prometheusListen
	if promAddr == "" && metricsKind == exportPrometheus {
		promAddr = prometheusEnvAddr(cfg.getenv)
	}
	if promAddr != "" {
		r, srv, err := startPrometheus(promAddr, cfg.metricProducers, log)
		if err != nil {
			return fail(err)
		}
		p.prom = srv
		readers = append(readers, r)
		closers = append(closers, r.Shutdown, srv.shutdown)
	}
	var logExp sdklog.Exporter
	if logsKind != exportOff {
		if logExp, err = newLogExporter(ctx, cfg, logsKind); err != nil {
			return fail(err)
		}
	}

	// The SDK's limits from the environment, with the attribute value
	// length of attributeLimits (a safe default where the SDK has none).
	spanLimits := sdktrace.NewSpanLimits()
	spanLimits.AttributeValueLengthLimit = spanValueLimit
	tpOpts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res), sdktrace.WithRawSpanLimits(spanLimits)}
	if spanExp != nil {
		exp := countingExporter{SpanExporter: spanExp, c: p.counters, report: report}
		bsp := sdktrace.NewBatchSpanProcessor(exp, batchDefaults(cfg.getenv)...)
		tpOpts = append(tpOpts, sdktrace.WithSpanProcessor(countingProcessor{SpanProcessor: bsp, c: p.counters}))
	}
	for _, sp := range cfg.spanProcessors {
		tpOpts = append(tpOpts, sdktrace.WithSpanProcessor(sp))
	}

	mpOpts := []sdkmetric.Option{sdkmetric.WithResource(res)}
	for _, r := range append(readers, cfg.metricReaders...) {
		mpOpts = append(mpOpts, sdkmetric.WithReader(r))
	}

	p.tp = sdktrace.NewTracerProvider(tpOpts...)
	p.mp = sdkmetric.NewMeterProvider(mpOpts...)
	p.TracerProvider, p.MeterProvider = p.tp, p.mp
	p.LoggerProvider = lognoop.NewLoggerProvider()
	if logExp != nil {
		exp := countingLogExporter{Exporter: logExp, c: p.drops, report: report}
		p.lp = sdklog.NewLoggerProvider(sdklog.WithResource(res), sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)),
			sdklog.WithAttributeValueLengthLimit(logValueLimit))
		p.LoggerProvider = p.lp
	}
	p.Exporting = tracesKind != exportOff
	p.ExportingMetrics = len(readers) > 0
	p.ExportingLogs = logExp != nil
	p.ParentBasedSampling = parentBasedSampler(cfg.getenv)

	if err := registerSpanMetrics(p.mp, p.counters, p.drops); err != nil {
		return nil, errors.Join(err, p.Shutdown(ctx))
	}
	if err := runtime.Start(runtime.WithMeterProvider(p.mp)); err != nil {
		return nil, errors.Join(fmt.Errorf("start go runtime metrics: %w", err), p.Shutdown(ctx))
	}
	p.install()
	log.Debug("opentelemetry configured", "traces", tracesKind, "metrics", metricsKind, "logs", logsKind,
		"prometheus", p.PrometheusAddr())
	return p, nil
}

func (p *Providers) install() {
	otel.SetTracerProvider(p.TracerProvider)
	otel.SetMeterProvider(p.MeterProvider)
	otel.SetTextMapPropagator(p.Propagator)
	otel.SetLoggerProvider(p.LoggerProvider)
	installLogs(p.LoggerProvider)
}

// newPropagator returns the propagators named in OTEL_PROPAGATORS
// (comma-separated; tracecontext, baggage, b3, b3multi, jaeger, xray,
// ottrace or none, through contrib's autoprop), or W3C TraceContext +
// Baggage when it is unset. An unknown name is an error.
func newPropagator(getenv func(string) string) (propagation.TextMapPropagator, error) {
	v := lookup(getenv, envPropagators)
	if v == "" {
		return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}), nil
	}
	var names []string
	for n := range strings.SplitSeq(v, ",") {
		if n = strings.ToLower(strings.TrimSpace(n)); n != "" {
			names = append(names, n)
		}
	}
	prop, err := autoprop.TextMapPropagator(names...)
	if err != nil {
		return nil, fmt.Errorf("%s=%q: %w (want a comma-separated list of tracecontext, baggage, b3, b3multi, jaeger, xray, ottrace or none)", envPropagators, v, err)
	}
	return prop, nil
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
		exp, err := autoexport.NewSpanExporter(ctx)
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
			otlpmetricgrpc.WithTimeout, otlpmetricgrpc.WithRetry(otlpmetricgrpc.RetryConfig{}))...)
	default:
		var client *http.Client
		if client, err = exporterHTTPClient(cfg, metricsEnv, cfg.exporterTimeout); err == nil {
			exp, err = otlpmetrichttp.New(ctx, append(metricOptions(cfg, prefs,
				otlpmetrichttp.WithTemporalitySelector, otlpmetrichttp.WithAggregationSelector,
				otlpmetrichttp.WithTimeout, otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{})),
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
// preferences' selectors, cfg's timeout, and noRetry unless cfg retries.
func metricOptions[O any](cfg config, prefs MetricsPreferences,
	temporality func(sdkmetric.TemporalitySelector) O, aggregation func(sdkmetric.AggregationSelector) O,
	timeout func(time.Duration) O, noRetry O,
) []O {
	opts := []O{temporality(prefs.temporalitySelector()), aggregation(prefs.aggregationSelector())}
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
		exp, err = autoexport.NewLogExporter(ctx)
	default:
		// As before, the log exporter reads the timeout variables
		// whatever WithExporterTimeout says.
		var client *http.Client
		if client, err = exporterHTTPClient(cfg, logsEnv, 0); err == nil {
			exp, err = otlploghttp.New(ctx, otlploghttp.WithHTTPClient(client))
		}
	}
	if err != nil {
		return nil, fmt.Errorf("create otlp log exporter: %w", err)
	}
	return exp, nil
}

// Stats returns the span export counters; see [SpanStats] for when Dropped
// is exact. Safe for concurrent use.
func (p *Providers) Stats() SpanStats { return p.counters.stats() }

// DroppedSpans returns Stats().Dropped.
func (p *Providers) DroppedSpans() int64 { return p.counters.dropped() }

// Dropped returns what telemetry was lost so far, all signals; see
// [DroppedTelemetry]. Safe for concurrent use.
func (p *Providers) Dropped() DroppedTelemetry {
	return DroppedTelemetry{
		Spans:         p.counters.dropped(),
		MetricExports: p.drops.metricExports.Load(),
		LogRecords:    p.drops.logRecords.Load(),
	}
}

// PrometheusAddr returns the address the Prometheus /metrics endpoint
// listens on ([WithPrometheusListen] or OTEL_METRICS_EXPORTER=prometheus),
// or "" when there is none.
func (p *Providers) PrometheusAddr() string {
	if p.prom == nil {
		return ""
	}
	return p.prom.addr
}

// ForceFlush exports all ended spans, collected metrics and log records
// now, without stopping anything. It is a no-op when Enabled is false.
func (p *Providers) ForceFlush(ctx context.Context) error {
	if !p.Enabled {
		return nil
	}
	var errs []error
	if err := p.tp.ForceFlush(ctx); err != nil {
		errs = append(errs, fmt.Errorf("flush spans: %w", err))
	}
	if err := p.mp.ForceFlush(ctx); err != nil {
		errs = append(errs, fmt.Errorf("flush metrics: %w", err))
	}
	if p.lp != nil {
		if err := p.lp.ForceFlush(ctx); err != nil {
			errs = append(errs, fmt.Errorf("flush logs: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Shutdown flushes and stops the tracer provider (its span processors,
// including those from [WithSpanProcessor], and the exporter), then the
// meter provider, whose final collection reports the final
// kretrieve.tracing.spans.dropped value, and the logger provider. Dropped
// spans are logged.
//
// Telemetry never fails or stalls the job: Shutdown takes at most the
// shutdown timeout ([WithShutdownTimeout], default 1 s; ctx's deadline if
// sooner), half of it for spans and the rest for metrics and logs, whatever
// the exporters' own timeouts and retries, and export failures and
// timeouts are not returned: they are reported by the one warning of the
// process (see [Setup]) and counted ([Providers.Dropped]). It returns nil.
// It is idempotent.
func (p *Providers) Shutdown(ctx context.Context) error {
	p.shutdownOnce.Do(func() {
		if !p.Enabled {
			return
		}
		ctx, cancel := context.WithTimeout(ctx, p.budget)
		defer cancel()
		spansCtx, cancelSpans := context.WithTimeout(ctx, p.budget/2)
		defer cancelSpans()

		// Flush metrics while spans drain: shutting a meter provider down
		// cancels a periodic export in flight, and with delta temporality
		// the measurements of that interval would be lost with it.
		var wg sync.WaitGroup
		wg.Go(func() { p.report.report(spansCtx, "metrics", p.mp.ForceFlush(spansCtx)) })
		p.report.report(spansCtx, "traces", p.tp.Shutdown(spansCtx))
		wg.Wait()
		p.counters.markShutdown()
		if st := p.counters.stats(); st.Dropped > 0 {
			level := slog.LevelWarn
			if p.report.warned.Load() {
				level = slog.LevelInfo // the failure was the warning
			}
			p.log.Log(ctx, level, "spans were not exported",
				"dropped", st.Dropped, "failed", st.Failed, "ended", st.Ended, "exported", st.Exported)
		}

		if p.lp != nil {
			wg.Go(func() { p.report.report(ctx, "logs", p.lp.Shutdown(ctx)) })
		}
		p.report.report(ctx, "metrics", p.mp.Shutdown(ctx))
		wg.Wait()
		if p.prom != nil {
			p.report.report(ctx, "metrics", p.prom.shutdown(ctx))
		}
		p.report.abort() // exports still in flight are lost (and counted)
	})
	return nil
}

// Batch span processor defaults where OTEL_BSP_* leaves them unset. The SDK's
// (a 2048-span queue, 512-span batches every 5 s) drop spans at a few
// thousand records per second — measured: 674 of 4747 spans of a worker
// relaying at full speed. kretrieve emits about 12 spans per request, so the
// queue holds 64k spans (~5 s at 1000 req/s) and batches are larger and
// more frequent. Anything still dropped is counted (Stats, the
// kretrieve.tracing.spans.dropped metric).
const (
	defaultBSPQueueSize = 65536
	defaultBSPBatchSize = 2048
	defaultBSPDelay     = time.Second
)

// BatchSpanProcessorDefaults returns the batch span processor settings
// Setup uses where OTEL_BSP_* is unset, for callers that build their own
// processor (the benchmarks compare them with the SDK's).
func BatchSpanProcessorDefaults() []sdktrace.BatchSpanProcessorOption {
	return batchDefaults(func(string) string { return "" })
}

func batchDefaults(getenv func(string) string) []sdktrace.BatchSpanProcessorOption {
	var opts []sdktrace.BatchSpanProcessorOption
	if getenv("OTEL_BSP_MAX_QUEUE_SIZE") == "" {
		opts = append(opts, sdktrace.WithMaxQueueSize(defaultBSPQueueSize))
	}
	if getenv("OTEL_BSP_MAX_EXPORT_BATCH_SIZE") == "" {
		opts = append(opts, sdktrace.WithMaxExportBatchSize(defaultBSPBatchSize))
	}
	if getenv("OTEL_BSP_SCHEDULE_DELAY") == "" {
		opts = append(opts, sdktrace.WithBatchTimeout(defaultBSPDelay))
	}
	return opts
}
