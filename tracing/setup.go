package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
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
	// Propagator is the W3C TraceContext + Baggage propagator, installed
	// even when Enabled is false so context still passes through.
	Propagator propagation.TextMapPropagator
	// Enabled is false when OTEL_SDK_DISABLED=true.
	Enabled bool
	// Exporting is true when spans are exported over OTLP.
	Exporting bool
	// ExportingMetrics is true when metrics are exported over OTLP.
	ExportingMetrics bool
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
	counters *spanCounters
	log      *slog.Logger

	shutdownOnce sync.Once
	shutdownErr  error
}

// Setup builds tracer and meter providers from the standard OTEL_*
// variables (see the package doc), installs them and the W3C
// TraceContext+Baggage propagator as OTel globals, routes SDK errors to the
// logger, and returns the providers. Call [Providers.Shutdown] to flush and
// stop everything. ctx is used only while building the resource and the
// exporters.
func Setup(ctx context.Context, opts ...Option) (*Providers, error) {
	cfg := newConfig(opts)
	log := cfg.logger
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		log.Warn("opentelemetry error", "err", err)
	}))

	prop := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	p := &Providers{Propagator: prop, counters: newSpanCounters(), log: log, ServiceName: cfg.serviceName}
	if v := lookup(cfg.getenv, "OTEL_SERVICE_NAME"); v != "" {
		p.ServiceName = v
	}

	if sdkDisabled(cfg.getenv) {
		p.TracerProvider = tracenoop.NewTracerProvider()
		p.MeterProvider = metricnoop.NewMeterProvider()
		p.install()
		return p, nil
	}
	p.Enabled = true

	exportTraces, err := exportEnabled(cfg.getenv, tracesEnv)
	if err != nil {
		return nil, err
	}
	exportMetrics, err := exportEnabled(cfg.getenv, metricsEnv)
	if err != nil {
		return nil, err
	}
	res, err := newResource(ctx, cfg.serviceName, log)
	if err != nil {
		return nil, err
	}
	if v, ok := res.Set().Value(semconv.ServiceNameKey); ok && v.AsString() != "" {
		p.ServiceName = v.AsString()
	}

	var spanExp sdktrace.SpanExporter
	if exportTraces {
		spanExp, err = newSpanExporter(ctx, cfg)
		if err != nil {
			return nil, err
		}
	}
	var metricExp sdkmetric.Exporter
	if exportMetrics {
		metricExp, err = newMetricExporter(ctx, cfg)
		if err != nil {
			if spanExp != nil {
				err = errors.Join(err, spanExp.Shutdown(ctx))
			}
			return nil, err
		}
	}

	tpOpts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	if spanExp != nil {
		bsp := sdktrace.NewBatchSpanProcessor(countingExporter{SpanExporter: spanExp, c: p.counters}, batchDefaults(cfg.getenv)...)
		tpOpts = append(tpOpts, sdktrace.WithSpanProcessor(countingProcessor{SpanProcessor: bsp, c: p.counters}))
	}
	for _, sp := range cfg.spanProcessors {
		tpOpts = append(tpOpts, sdktrace.WithSpanProcessor(sp))
	}

	mpOpts := []sdkmetric.Option{sdkmetric.WithResource(res)}
	if metricExp != nil {
		var readerOpts []sdkmetric.PeriodicReaderOption
		for _, mp := range cfg.metricProducers {
			readerOpts = append(readerOpts, sdkmetric.WithProducer(mp))
		}
		mpOpts = append(mpOpts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metricExp, readerOpts...)))
	}
	for _, r := range cfg.metricReaders {
		mpOpts = append(mpOpts, sdkmetric.WithReader(r))
	}

	p.tp = sdktrace.NewTracerProvider(tpOpts...)
	p.mp = sdkmetric.NewMeterProvider(mpOpts...)
	p.TracerProvider, p.MeterProvider = p.tp, p.mp
	p.Exporting, p.ExportingMetrics = exportTraces, exportMetrics
	p.ParentBasedSampling = parentBasedSampler(cfg.getenv)

	if err := registerSpanMetrics(p.mp, p.counters); err != nil {
		return nil, errors.Join(err, p.Shutdown(ctx))
	}
	p.install()
	log.Debug("opentelemetry configured",
		"exporting_traces", p.Exporting, "exporting_metrics", p.ExportingMetrics)
	return p, nil
}

func (p *Providers) install() {
	otel.SetTracerProvider(p.TracerProvider)
	otel.SetMeterProvider(p.MeterProvider)
	otel.SetTextMapPropagator(p.Propagator)
}

// newSpanExporter returns the OTLP/HTTP trace exporter: otlpwire, which
// encodes http/protobuf requests without otlptracehttp's per-span garbage
// (see its package doc), or otlptracehttp for http/json.
func newSpanExporter(ctx context.Context, cfg config) (sdktrace.SpanExporter, error) {
	proto := lookup(cfg.getenv, envTracesProtocol)
	if proto == "" {
		proto = lookup(cfg.getenv, envProtocol)
	}
	if proto == "http/json" {
		return newJSONSpanExporter(ctx, cfg)
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

// newJSONSpanExporter returns otlptracehttp sending http/json; it reads its
// other variables from the process environment.
func newJSONSpanExporter(ctx context.Context, cfg config) (sdktrace.SpanExporter, error) {
	opts := []otlptracehttp.Option{otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON)}
	if cfg.exporterTimeout > 0 {
		opts = append(opts, otlptracehttp.WithTimeout(cfg.exporterTimeout))
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

func newMetricExporter(ctx context.Context, cfg config) (sdkmetric.Exporter, error) {
	prefs, err := ReadMetricsPreferences(cfg.getenv)
	if err != nil {
		cfg.logger.WarnContext(ctx, "ignoring metric exporter preference", "err", err)
	}
	opts := []otlpmetrichttp.Option{
		otlpmetrichttp.WithTemporalitySelector(prefs.temporalitySelector()),
		otlpmetrichttp.WithAggregationSelector(prefs.aggregationSelector()),
	}
	if cfg.exporterTimeout > 0 {
		opts = append(opts, otlpmetrichttp.WithTimeout(cfg.exporterTimeout))
	}
	if !cfg.exportRetry {
		opts = append(opts, otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: false}))
	}
	exp, err := otlpmetrichttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("create otlp metric exporter: %w", err)
	}
	return exp, nil
}

// Stats returns the span export counters; see [SpanStats] for when Dropped
// is exact. Safe for concurrent use.
func (p *Providers) Stats() SpanStats { return p.counters.stats() }

// DroppedSpans returns Stats().Dropped.
func (p *Providers) DroppedSpans() int64 { return p.counters.dropped() }

// ForceFlush exports all ended spans and collected metrics now, without
// stopping anything. It is a no-op when Enabled is false.
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
	return errors.Join(errs...)
}

// Shutdown flushes and stops the tracer provider (its span processors,
// including those from [WithSpanProcessor], and the exporter), then the
// meter provider, whose final collection reports the final
// kretrieve.tracing.spans.dropped value; dropped spans are also logged at
// warn level. Failed span exports are not returned as an error (they are
// counted in [Providers.Stats] and logged). Call it once, on a fresh context
// with a timeout, after everything producing spans has stopped. It is
// idempotent: later calls return the first call's result. Errors from both
// providers are joined.
func (p *Providers) Shutdown(ctx context.Context) error {
	p.shutdownOnce.Do(func() {
		if !p.Enabled {
			return
		}
		var errs []error
		// Flush first: shutting a meter provider down cancels a periodic
		// export in flight, and with delta temporality the measurements of
		// that interval would be lost with it. A failing export fails the
		// final one of Shutdown too, which reports it.
		_ = p.mp.ForceFlush(ctx)
		if err := p.tp.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("shut down tracer provider: %w", err))
		}
		p.counters.markShutdown()
		if st := p.counters.stats(); st.Dropped > 0 {
			p.log.WarnContext(ctx, "spans were not exported",
				"dropped", st.Dropped, "failed", st.Failed, "ended", st.Ended, "exported", st.Exported)
		}
		if err := p.mp.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("shut down meter provider: %w", err))
		}
		p.shutdownErr = errors.Join(errs...)
	})
	return p.shutdownErr
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
