// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/runtime"
	"go.opentelemetry.io/contrib/propagators/autoprop"
	"go.opentelemetry.io/otel"
	otellog "go.opentelemetry.io/otel/log"

	lognoop "go.opentelemetry.io/otel/log/noop"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/kretrieve/kretrieve/kafkatrace"
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
	// RootSampler takes root sampling decisions without starting spans
	// (kafkatrace.WithRootSampler) when OTEL_TRACES_SAMPLER is one of the
	// samplers a [RootSampler] holds, with a valid argument; nil
	// otherwise (and when Enabled is false).
	RootSampler kafkatrace.RootSampler
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

	if err := refuseConfigFile(cfg.getenv); err != nil {
		return nil, err
	}
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

	plan, err := readPlan(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	if v, ok := plan.res.Set().Value(semconv.ServiceNameKey); ok && v.AsString() != "" {
		p.ServiceName = v.AsString()
	}
	cfg.endpoints = defaultEndpoints(cfg, plan)
	cfg.getenv = withEndpoints(cfg.getenv, cfg.endpoints)
	logDefaultEndpoints(ctx, log, cfg.endpoints)
	exps, err := p.newExporters(ctx, cfg, plan)
	if err != nil {
		return nil, err
	}
	p.newProviders(cfg, plan, exps)

	if err := registerSpanMetrics(p.mp, p.counters, p.drops); err != nil {
		return nil, errors.Join(err, p.Shutdown(ctx))
	}
	if err := runtime.Start(runtime.WithMeterProvider(p.mp)); err != nil {
		return nil, errors.Join(fmt.Errorf("start go runtime metrics: %w", err), p.Shutdown(ctx))
	}
	p.install()
	log.Debug("opentelemetry configured", "traces", plan.traces, "metrics", plan.metrics, "logs", plan.logs,
		"prometheus", p.PrometheusAddr())
	return p, nil
}

// plan is what Setup reads before it builds anything: each signal's
// exporters (exportOTLP, exportConsole, exportPrometheus; none when not
// exported), the attribute value length limits and the resource.
type plan struct {
	traces, metrics, logs         []string
	spanValueLimit, logValueLimit int
	res                           *resource.Resource
}

// readPlan reads the attribute limits and the export kinds from the
// environment, checks the credential variables when a signal is exported
// over OTLP, and builds the resource.
func readPlan(ctx context.Context, cfg config, log *slog.Logger) (plan, error) {
	var pl plan
	var err error
	if pl.spanValueLimit, pl.logValueLimit, err = attributeLimits(cfg.getenv); err != nil {
		return plan{}, err
	}
	var kinds [3][]string
	for i, s := range []signalEnv{tracesEnv, metricsEnv, logsEnv} {
		if kinds[i], err = exportKinds(cfg.getenv, s); err != nil {
			return plan{}, err
		}
	}
	pl.traces, pl.metrics, pl.logs = kinds[0], kinds[1], kinds[2]
	if slices.Contains(slices.Concat(kinds[:]...), exportOTLP) {
		if err := checkCredentialVariables(cfg.getenv); err != nil {
			return plan{}, err
		}
	}
	if pl.res, err = newResource(ctx, cfg.serviceName, log); err != nil {
		return plan{}, err
	}
	return pl, nil
}

// newProviders builds the tracer, meter and logger providers over exps
// and fills p's provider fields and its Exporting flags.
func (p *Providers) newProviders(cfg config, pl plan, exps exporters) {
	// The SDK's limits from the environment, with the attribute value
	// length of attributeLimits (a safe default where the SDK has none).
	spanLimits := sdktrace.NewSpanLimits()
	spanLimits.AttributeValueLengthLimit = pl.spanValueLimit
	tpOpts := []sdktrace.TracerProviderOption{sdktrace.WithResource(pl.res), sdktrace.WithRawSpanLimits(spanLimits)}
	if rs := rootSamplerFromEnv(cfg.getenv); rs != nil {
		// The same sampler the SDK would build from the variables, and
		// the ID generator that lets kafkatrace decide roots with it.
		tpOpts = append(tpOpts, rs.TracerProviderOptions()...)
		p.RootSampler = rs
	}
	if exps.span != nil {
		exp := countingExporter{SpanExporter: exps.span, c: p.counters, report: p.report}
		bsp := sdktrace.NewBatchSpanProcessor(exp, batchDefaults(cfg.getenv)...)
		tpOpts = append(tpOpts, sdktrace.WithSpanProcessor(countingProcessor{SpanProcessor: bsp, c: p.counters}))
	}
	for _, sp := range cfg.spanProcessors {
		tpOpts = append(tpOpts, sdktrace.WithSpanProcessor(sp))
	}

	mpOpts := []sdkmetric.Option{sdkmetric.WithResource(pl.res)}
	for _, r := range append(exps.readers, cfg.metricReaders...) {
		mpOpts = append(mpOpts, sdkmetric.WithReader(r))
	}

	p.tp = sdktrace.NewTracerProvider(tpOpts...)
	p.mp = sdkmetric.NewMeterProvider(mpOpts...)
	p.TracerProvider, p.MeterProvider = p.tp, p.mp
	p.LoggerProvider = lognoop.NewLoggerProvider()
	if exps.log != nil {
		exp := countingLogExporter{Exporter: exps.log, c: p.drops, report: p.report}
		p.lp = sdklog.NewLoggerProvider(sdklog.WithResource(pl.res), sdklog.WithProcessor(sdklog.NewBatchProcessor(exp)),
			sdklog.WithAttributeValueLengthLimit(pl.logValueLimit))
		p.LoggerProvider = p.lp
	}
	p.Exporting = len(pl.traces) > 0
	p.ExportingMetrics = len(exps.readers) > 0
	p.ExportingLogs = exps.log != nil
	p.ParentBasedSampling = parentBasedSampler(cfg.getenv)
}

func (p *Providers) install() {
	otel.SetTracerProvider(p.TracerProvider)
	otel.SetMeterProvider(p.MeterProvider)
	otel.SetTextMapPropagator(p.Propagator)
	otel.SetLoggerProvider(p.LoggerProvider)
	installLogs(p.LoggerProvider)
}

// envConfigFile is the specification's variable naming a declarative
// configuration file.
const envConfigFile = "OTEL_CONFIG_FILE"

// refuseConfigFile returns an error when OTEL_CONFIG_FILE is set: kretrieve
// does not read declarative configuration files (docs/telemetry.md says
// why), and ignoring one would leave the process configured otherwise
// than its operator wrote.
func refuseConfigFile(getenv func(string) string) error {
	if v := lookup(getenv, envConfigFile); v != "" {
		return fmt.Errorf("%s=%q: kretrieve does not read OpenTelemetry declarative configuration files; "+
			"unset %s and configure telemetry with the OTEL_* environment variables instead (see docs/telemetry.md)", envConfigFile, v, envConfigFile)
	}
	return nil
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
