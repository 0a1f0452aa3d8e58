// SPDX-License-Identifier: Apache-2.0

// Package tracing owns kretrieve's OpenTelemetry SDK setup for all three
// signals, traces, metrics and logs: the resource, the tracer, meter and
// logger providers, their exporters, the sampler, the propagators,
// dropped-telemetry accounting and the slog handler that stamps log records
// with trace_id and span_id and sends them to OTel. [Setup] installs the
// providers and the propagator as the OTel globals.
//
// [Setup] configures everything from the standard OTEL_* environment
// variables. The SDK and the exporters read most of them themselves and this
// package does not re-implement them:
//
//   - OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES: resource (they win over
//     [WithServiceName] and over the service.version of the build
//     information: the module version, or the VCS revision of a (devel)
//     build).
//   - OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG: sampler (default
//     parentbased_always_on). For always_off, traceidratio,
//     parentbased_always_off and parentbased_traceidratio with a valid
//     argument this package builds the same sampler itself, as a
//     [RootSampler] with the tracer provider's ID generator, so that
//     kafkatrace decides root send spans without starting the unsampled
//     ones ([Providers.RootSampler]).
//   - OTEL_BSP_*: batch span processor; OTEL_BLRP_*: batch log record
//     processor; OTEL_METRIC_EXPORT_INTERVAL and OTEL_METRIC_EXPORT_TIMEOUT:
//     periodic metric reader.
//   - OTEL_EXPORTER_OTLP_* and OTEL_EXPORTER_OTLP_{TRACES,METRICS,LOGS}_*:
//     endpoint, headers, timeout, compression, TLS (for the http/protobuf
//     trace exporter this package reads them, see below).
//
// Spans sent over OTLP http/protobuf (the default) are exported by
// internal/otlpwire, which encodes the request straight from the SDK's
// spans: otlptracehttp's conversion to protobuf structs and
// reflection-based marshalling cost about 18 µs of CPU per span in the
// relay benchmark. An equivalence test checks that both send the same
// request. With the http/json protocol otlptracehttp is used, with grpc
// otlptracegrpc (through contrib's autoexport). Metrics use otlpmetrichttp
// or otlpmetricgrpc, logs otlploghttp or (through autoexport)
// otlploggrpc. The Go SDK has no
// http/json encoding for metrics and logs, so for that protocol this
// package converts them to the OTLP protobuf types and posts them as
// OTLP/JSON itself (lowerCamelCase names, enums as numbers, trace and span
// ids in hex), reading the METRICS_ and LOGS_ variants of the variables the
// http/protobuf trace exporter reads (below), without retries. Go runtime
// metrics (contrib's instrumentation/runtime) are recorded on the meter
// provider.
//
// This package itself reads only:
//
//   - OTEL_SDK_DISABLED: "true" (any case) installs no-op providers; the
//     Go SDK does not implement this variable.
//   - OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_EXPORTER_OTLP_{TRACES,METRICS,
//     LOGS}_ENDPOINT: with OTEL_*_EXPORTER unset, an OTLP exporter is
//     created only when one of them is set, so a run without a collector
//     exports nothing. A signal whose OTEL_*_EXPORTER names otlp without
//     one uses the specification's default endpoint, http://localhost:4318
//     (http://localhost:4317 for grpc), logged once per process at info.
//   - OTEL_TRACES_EXPORTER, OTEL_LOGS_EXPORTER: "otlp" (default), "console"
//     or a comma-separated list of them (each batch goes to every one), or
//     "none" alone; OTEL_METRICS_EXPORTER: the same or "prometheus" (a
//     /metrics endpoint on OTEL_EXPORTER_PROMETHEUS_HOST, default
//     localhost, and OTEL_EXPORTER_PROMETHEUS_PORT, default 9464; see also
//     [WithPrometheusListen]). Anything else is an error. The console
//     exporters write to stderr ([WithConsoleWriter]).
//   - OTEL_CONFIG_FILE: refused (Setup returns an error saying to unset
//     it): declarative configuration is not supported.
//   - OTEL_METRICS_EXEMPLAR_FILTER, for kretrieve's own histograms
//     ([MetricsPreferences]; the SDK reads it for its instruments).
//   - OTEL_EXPORTER_OTLP_PROTOCOL and the per-signal variants: grpc,
//     http/protobuf (default) or http/json; anything else is an error
//     naming the supported protocols.
//   - OTEL_PROPAGATORS: tracecontext, baggage, b3, b3multi, jaeger, xray,
//     ottrace or none, through contrib's autoprop (default tracecontext,
//     baggage); an unknown name is an error.
//   - OTEL_EXPORTER_OTLP_HEADERS and the per-signal variants, and the
//     endpoint variables, checked before any exporter reads them (they
//     hold credentials) whenever a signal is exported over OTLP: a
//     malformed headers entry, or userinfo in an endpoint URL, is an error
//     naming the variable and the entry's position or key, never the
//     secret (the SDK's exporters print such an entry through the OTel
//     logger and go on without it, and drop userinfo silently).
//   - OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT, and OTEL_SPAN_ and
//     OTEL_LOGRECORD_ATTRIBUTE_VALUE_LENGTH_LIMIT, which win over it for
//     spans and log records: string attribute values are cut to that many
//     characters, by default [DefaultAttributeValueLengthLimit] (the SDK
//     has no limit by default), -1 for no limit; a value that is not an
//     integer is an error.
//   - OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE and
//     OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION, see
//     [ReadMetricsPreferences].
//   - for the http/protobuf trace exporter, OTEL_EXPORTER_OTLP_* and
//     OTEL_EXPORTER_OTLP_TRACES_* (endpoint, insecure, headers, timeout,
//     compression, certificates), read once as otlptracehttp reads them
//     and handed to otlpwire as a plain configuration; an invalid value is
//     an error rather than ignored. The http/json metric and log exporters
//     read OTEL_EXPORTER_OTLP_* and the METRICS_ or LOGS_ variants the
//     same way. The SDK's OTLP/HTTP exporters (otlptracehttp,
//     otlpmetrichttp, otlploghttp) get an HTTP client built from the same
//     reading (TLS and timeout), so an invalid variable is an error for
//     them too.
//
// No OTLP/HTTP exporter follows a redirect (otlpwire's client,
// [otlpwire.RefuseRedirect], is handed to the SDK's exporters too): a 3xx
// answer would send the export and its headers, credentials included, to
// another host or over plain HTTP. It is a failed export, reported by the
// one warning below, which names the redirect but never the headers.
//
// Telemetry never fails or stalls the job: [Providers.Shutdown] is bounded
// (1 s by default) and returns no export error; a dead, slow or partial
// collector (Jaeger answers 404 on /v1/metrics) gives one warning per
// process; queues are bounded and what is lost is counted, see
// [Providers.Stats] and [Providers.Dropped].
//
// Messaging metrics aggregated by kafkatrace.Metrics reach the SDK through
// [NewMetricsProducer].
//
// Of kretrieve's data path, only this package imports the OTel SDK (with
// internal/otlpwire, its trace exporter); the rest uses the OTel API. The
// operator's wing imports it too: ops/runsummary's Recorder is a span
// processor and ops/spans keeps the SDK's spans (its Store, the console's).
// So does bench/relay, the benchmarks' harness, which builds the providers
// each variant measures. A test checks all of it. This package imports no other kretrieve package than
// internal/otlpwire, the API-only kafkatrace and pathway (for
// [MetricsProducer]) and otelnames (metric names), which a test checks too.
package tracing
