// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"io"
	"log/slog"
	"os"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// DefaultServiceName is the service.name used when neither
// OTEL_SERVICE_NAME nor [WithServiceName] sets one.
const DefaultServiceName = "kretrieve"

type config struct {
	serviceName     string
	spanProcessors  []sdktrace.SpanProcessor
	metricReaders   []sdkmetric.Reader
	metricProducers []sdkmetric.Producer
	getenv          func(string) string
	logger          *slog.Logger
	exporterTimeout time.Duration
	exportRetry     bool
	shutdownTimeout time.Duration
	// prometheusListen is the address of WithPrometheusListen.
	prometheusListen string
	console          io.Writer
	// specHTTPEndpoint and specGRPCEndpoint are the default OTLP
	// endpoints (the specification's; tests point them at a sink).
	specHTTPEndpoint, specGRPCEndpoint string
	// endpoints maps the signals that use a default endpoint to its URL;
	// Setup fills it (see defaultEndpoints).
	endpoints map[string]string
}

func newConfig(opts []Option) config {
	c := config{
		serviceName:     DefaultServiceName,
		getenv:          os.Getenv,
		exportRetry:     true,
		shutdownTimeout: DefaultShutdownTimeout,
		console:         os.Stderr,

		specHTTPEndpoint: specHTTPEndpoint,
		specGRPCEndpoint: specGRPCEndpoint,
	}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	if c.getenv == nil {
		c.getenv = os.Getenv
	}
	return c
}

// Option configures [Setup]. Only this package's With* functions make
// one; a nil Option is ignored.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithServiceName sets the service.name resource attribute used when
// OTEL_SERVICE_NAME (or service.name in OTEL_RESOURCE_ATTRIBUTES) is not set;
// the environment always wins. The default is [DefaultServiceName].
func WithServiceName(name string) Option {
	return optionFunc(func(c *config) {
		if name != "" {
			c.serviceName = name
		}
	})
}

// WithSpanProcessor registers an extra span processor, for example an
// in-memory run-summary recorder. Extra processors are registered whether
// or not an exporter is configured, see every sampled span, and are shut
// down by [Providers.Shutdown]. They are not used when OTEL_SDK_DISABLED is
// true. The option may be repeated; by default there are none.
func WithSpanProcessor(sp sdktrace.SpanProcessor) Option {
	return optionFunc(func(c *config) {
		if sp != nil {
			c.spanProcessors = append(c.spanProcessors, sp)
		}
	})
}

// WithMetricReader registers an extra metric reader (for example an
// [sdkmetric.ManualReader] in tests) next to the OTLP periodic reader. It is
// shut down by [Providers.Shutdown]. The option may be repeated; by default
// there are none.
func WithMetricReader(r sdkmetric.Reader) Option {
	return optionFunc(func(c *config) {
		if r != nil {
			c.metricReaders = append(c.metricReaders, r)
		}
	})
}

// WithMetricProducer registers a metric producer (for example the in-memory
// aggregates of kafkatrace.Metrics) with the OTLP periodic reader, so that
// its metrics are exported with the SDK's own. Readers passed with
// [WithMetricReader] are built by the caller, who registers producers on
// them with sdkmetric.WithProducer. The option may be repeated.
func WithMetricProducer(p sdkmetric.Producer) Option {
	return optionFunc(func(c *config) {
		if p != nil {
			c.metricProducers = append(c.metricProducers, p)
		}
	})
}

// WithGetenv sets the function used to read OTEL_SDK_DISABLED, the
// OTEL_EXPORTER_OTLP_*ENDPOINT and *_PROTOCOL variables,
// OTEL_{TRACES,METRICS,LOGS}_EXPORTER, OTEL_PROPAGATORS,
// OTEL_EXPORTER_PROMETHEUS_HOST and _PORT, the metric preferences, i.e.
// the decisions this package makes itself, and the OTEL_EXPORTER_OTLP_*
// variables of the http/protobuf trace exporter. The SDK and the other
// exporters (autoexport's among them) always read the real process
// environment (sampler, resource, endpoint URL, headers, ...), so getenv
// should agree with it. The default is [os.Getenv].
func WithGetenv(getenv func(string) string) Option {
	return optionFunc(func(c *config) { c.getenv = getenv })
}

// WithLogger sets the logger that receives OpenTelemetry SDK errors (failed
// exports, invalid variables) at warn level; Setup installs it with
// otel.SetErrorHandler. The default is [slog.Default] at the time Setup runs.
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) { c.logger = l })
}

// WithExporterTimeout sets the timeout of each OTLP export, for traces
// over HTTP (all attempts included) and metrics (per request), overriding
// OTEL_EXPORTER_OTLP_TIMEOUT and its per-signal variants; the grpc trace
// exporter and the log exporters (autoexport's) read the variables. By
// default (or with d <= 0) the exporters read those variables, whose
// default is 10s. [Providers.Shutdown] is bounded whatever the timeout.
func WithExporterTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.exporterTimeout = d })
}

// WithExportRetry enables or disables the OTLP exporters' retries of
// throttled or unavailable (429, 502, 503, 504) exports (the HTTP trace
// exporters and the metric exporters; the grpc trace exporter and the log
// exporters keep theirs). The default is
// enabled, with the exporters' own backoff (5s initial, 30s max; the trace
// exporter also retries connection errors and gives up when the export
// timeout would pass, the metric exporter after 1m). Disable it where a
// failed export must fail fast, e.g. tests.
func WithExportRetry(enabled bool) Option {
	return optionFunc(func(c *config) { c.exportRetry = enabled })
}

// DefaultShutdownTimeout is how long [Providers.Shutdown] may take by
// default: telemetry adds at most about this much to a command's exit,
// whatever state the collector is in.
const DefaultShutdownTimeout = time.Second

// WithShutdownTimeout bounds [Providers.Shutdown]: half of d for the spans,
// the rest for metrics and logs. d <= 0 keeps [DefaultShutdownTimeout].
// The context given to Shutdown can only shorten it.
func WithShutdownTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if d > 0 {
			c.shutdownTimeout = d
		}
	})
}

// WithPrometheusListen serves the metrics in the Prometheus text format, or
// OpenMetrics with exemplars when the scraper asks for it, on
// http://addr/metrics (for a --metrics-listen flag), next to any other
// metric exporter; the kretrieve metric producers ([WithMetricProducer])
// are included, their exponential histograms in explicit buckets. ":0" picks a free port, see [Providers.PrometheusAddr]. It
// replaces the server OTEL_METRICS_EXPORTER=prometheus would start on
// OTEL_EXPORTER_PROMETHEUS_HOST:OTEL_EXPORTER_PROMETHEUS_PORT. Setup fails
// when addr cannot be listened on. The default, "", serves nothing.
func WithPrometheusListen(addr string) Option {
	return optionFunc(func(c *config) { c.prometheusListen = addr })
}

// WithConsoleWriter sets where the console exporters
// (OTEL_{TRACES,METRICS,LOGS}_EXPORTER=console) write. The default is
// os.Stderr, not stdout as other SDKs do, because kretrieve's commands
// write their results to stdout.
func WithConsoleWriter(w io.Writer) Option {
	return optionFunc(func(c *config) {
		if w != nil {
			c.console = w
		}
	})
}
