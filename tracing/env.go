package tracing

import (
	"fmt"
	"slices"
	"strings"
)

// Environment variables read by this package itself (see the package doc).
const (
	envSDKDisabled     = "OTEL_SDK_DISABLED"
	envEndpoint        = "OTEL_EXPORTER_OTLP_ENDPOINT"
	envTracesEndpoint  = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envMetricsEndpoint = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
	envProtocol        = "OTEL_EXPORTER_OTLP_PROTOCOL"
	envTracesProtocol  = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	envMetricsProtocol = "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"
	envTracesExporter  = "OTEL_TRACES_EXPORTER"
	envMetricsExporter = "OTEL_METRICS_EXPORTER"
	envTracesSampler   = "OTEL_TRACES_SAMPLER"
)

// parentBasedSampler reports whether OTEL_TRACES_SAMPLER selects a sampler
// that follows the parent's sampled flag: unset (the SDK's default
// parentbased_always_on) or parentbased_*.
func parentBasedSampler(getenv func(string) string) bool {
	v := lookup(getenv, envTracesSampler)
	return v == "" || strings.HasPrefix(v, "parentbased_")
}

// signalEnv names the variables that decide whether one signal is exported.
type signalEnv struct {
	endpoint, protocol, exporter string
	protocols                    []string // supported OTEL_EXPORTER_OTLP_*PROTOCOL values
}

var (
	tracesEnv = signalEnv{
		endpoint:  envTracesEndpoint,
		protocol:  envTracesProtocol,
		exporter:  envTracesExporter,
		protocols: []string{"http/protobuf", "http/json"},
	}
	metricsEnv = signalEnv{
		endpoint: envMetricsEndpoint,
		protocol: envMetricsProtocol,
		exporter: envMetricsExporter,
		// otlpmetrichttp always sends protobuf; http/json is accepted so a
		// shared OTEL_EXPORTER_OTLP_PROTOCOL=http/json does not fail.
		protocols: []string{"http/protobuf", "http/json"},
	}
)

func lookup(getenv func(string) string, key string) string {
	return strings.TrimSpace(getenv(key))
}

// sdkDisabled reports whether OTEL_SDK_DISABLED is "true", ignoring case.
func sdkDisabled(getenv func(string) string) bool {
	return strings.EqualFold(lookup(getenv, envSDKDisabled), "true")
}

// exportEnabled reports whether the signal described by s should get an
// OTLP exporter: an endpoint is set and its exporter is not "none". It
// returns an error for exporters or protocols this package cannot honour.
func exportEnabled(getenv func(string) string, s signalEnv) (bool, error) {
	switch v := strings.ToLower(lookup(getenv, s.exporter)); v {
	case "", "otlp":
	case "none":
		return false, nil
	default:
		return false, fmt.Errorf("unsupported %s %q (want otlp or none)", s.exporter, v)
	}
	if lookup(getenv, envEndpoint) == "" && lookup(getenv, s.endpoint) == "" {
		return false, nil
	}
	proto := lookup(getenv, s.protocol)
	name := s.protocol
	if proto == "" {
		proto, name = lookup(getenv, envProtocol), envProtocol
	}
	if proto != "" && !slices.Contains(s.protocols, proto) {
		return false, fmt.Errorf("unsupported %s %q (want %s)", name, proto, strings.Join(s.protocols, " or "))
	}
	return true, nil
}
