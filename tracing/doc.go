// Package tracing owns kretrieve's OpenTelemetry SDK setup: resource,
// tracer and meter providers, OTLP/HTTP exporters, samplers, propagators,
// dropped-span accounting and the slog handler that stamps log records with
// trace_id and span_id.
//
// [Setup] configures everything from the standard OTEL_* environment
// variables. The SDK and the exporters read most of them themselves and this
// package does not re-implement them:
//
//   - OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES: resource (they win over
//     [WithServiceName]).
//   - OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG: sampler (default
//     parentbased_always_on).
//   - OTEL_BSP_*: batch span processor; OTEL_METRIC_EXPORT_INTERVAL and
//     OTEL_METRIC_EXPORT_TIMEOUT: periodic metric reader.
//   - OTEL_EXPORTER_OTLP_* and OTEL_EXPORTER_OTLP_{TRACES,METRICS}_*:
//     endpoint, headers, timeout, compression, TLS (for the http/protobuf
//     trace exporter this package reads them, see below).
//
// Spans are exported by internal/otlpwire, which encodes the http/protobuf
// request straight from the SDK's spans: otlptracehttp's conversion to protobuf
// structs and reflection-based marshalling cost about 18 µs of CPU per span
// in the relay benchmark. An equivalence test checks that both send the
// same request. With OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL=http/json,
// otlptracehttp is used. Metrics use otlpmetrichttp.
//
// This package itself reads only:
//
//   - OTEL_SDK_DISABLED: "true" (any case) installs no-op providers; the
//     Go SDK does not implement this variable.
//   - OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
//     OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: an exporter is created only when
//     one of them is set (unlike the exporters' own default of
//     localhost:4318), so a run without a collector exports nothing.
//   - OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER: "otlp" (default) or
//     "none"; anything else is an error.
//   - OTEL_EXPORTER_OTLP_PROTOCOL and the per-signal variants: only
//     http/protobuf and http/json are supported (metrics are always sent
//     as protobuf); grpc is an error rather than a silent mismatch.
//   - for the http/protobuf trace exporter, OTEL_EXPORTER_OTLP_* and
//     OTEL_EXPORTER_OTLP_TRACES_* (endpoint, insecure, headers, timeout,
//     compression, certificates), read once as otlptracehttp reads them
//     and handed to otlpwire as a plain configuration; an invalid value is
//     an error rather than ignored.
//
// Spans lost on the way to the collector are counted, see [Providers.Stats].
//
// Messaging metrics aggregated by kafkatrace.Metrics reach the SDK through
// [NewMetricsProducer].
//
// Only tracing and the run-summary recorder may import the OTel SDK; the
// rest of kretrieve uses the OTel API. This package imports no other
// kretrieve package than internal/otlpwire and the API-only kafkatrace
// and pathway (for [MetricsProducer]).
package tracing
