// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"fmt"
	"slices"
	"strings"
)

// Environment variables read by this package itself (see the package doc).
const (
	envSDKDisabled      = "OTEL_SDK_DISABLED"
	envEndpoint         = "OTEL_EXPORTER_OTLP_ENDPOINT"
	envTracesEndpoint   = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envMetricsEndpoint  = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
	envLogsEndpoint     = "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"
	envProtocol         = "OTEL_EXPORTER_OTLP_PROTOCOL"
	envTracesProtocol   = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	envMetricsProtocol  = "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"
	envLogsProtocol     = "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL"
	envTracesExporter   = "OTEL_TRACES_EXPORTER"
	envMetricsExporter  = "OTEL_METRICS_EXPORTER"
	envLogsExporter     = "OTEL_LOGS_EXPORTER"
	envTracesSampler    = "OTEL_TRACES_SAMPLER"
	envTracesSamplerArg = "OTEL_TRACES_SAMPLER_ARG"
	envPropagators      = "OTEL_PROPAGATORS"
	envPrometheusHost   = "OTEL_EXPORTER_PROMETHEUS_HOST"
	envPrometheusPort   = "OTEL_EXPORTER_PROMETHEUS_PORT"
)

// OTLP protocols (OTEL_EXPORTER_OTLP_*PROTOCOL values).
const (
	protoGRPC     = "grpc"
	protoProtobuf = "http/protobuf"
	protoJSON     = "http/json"
)

// Exporter kinds (OTEL_*_EXPORTER values besides none).
const (
	exportOTLP       = "otlp"
	exportConsole    = "console"
	exportPrometheus = "prometheus"
)

// parentBasedSampler reports whether OTEL_TRACES_SAMPLER selects a sampler
// that follows the parent's sampled flag: unset (the SDK's default
// parentbased_always_on) or parentbased_*.
func parentBasedSampler(getenv func(string) string) bool {
	v := lookup(getenv, envTracesSampler)
	return v == "" || strings.HasPrefix(v, "parentbased_")
}

// signalEnv names the variables that decide how one signal is exported.
type signalEnv struct {
	name                         string // traces, metrics or logs
	endpoint, protocol, exporter string
	exporters                    []string // supported OTEL_*_EXPORTER values besides none
	protocols                    []string // supported OTEL_EXPORTER_OTLP_*PROTOCOL values
}

var (
	// otlptracehttp encodes http/json, otlpwire http/protobuf.
	tracesEnv = newSignalEnv("traces", []string{exportOTLP, exportConsole}, protoGRPC, protoProtobuf, protoJSON)
	// The Go SDK's OTLP metric and log exporters have no JSON encoding:
	// otlpjson.go's exporters encode http/json.
	metricsEnv = newSignalEnv("metrics", []string{exportOTLP, exportConsole, exportPrometheus}, protoGRPC, protoProtobuf, protoJSON)
	logsEnv    = newSignalEnv("logs", []string{exportOTLP, exportConsole}, protoGRPC, protoProtobuf, protoJSON)
)

// newSignalEnv names the variables of signal ("traces", "metrics" or
// "logs"): OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT and _PROTOCOL and
// OTEL_<SIGNAL>_EXPORTER.
func newSignalEnv(signal string, exporters []string, protocols ...string) signalEnv {
	up := strings.ToUpper(signal)
	return signalEnv{
		name:      signal,
		endpoint:  "OTEL_EXPORTER_OTLP_" + up + "_ENDPOINT",
		protocol:  "OTEL_EXPORTER_OTLP_" + up + "_PROTOCOL",
		exporter:  "OTEL_" + up + "_EXPORTER",
		exporters: exporters,
		protocols: protocols,
	}
}

func lookup(getenv func(string) string, key string) string {
	return strings.TrimSpace(getenv(key))
}

// sdkDisabled reports whether OTEL_SDK_DISABLED is "true", ignoring case.
func sdkDisabled(getenv func(string) string) bool {
	return strings.EqualFold(lookup(getenv, envSDKDisabled), "true")
}

// exportKinds returns how the signal described by s is exported: the
// exporters of its comma-separated OTEL_*_EXPORTER list (exportOTLP,
// exportConsole, exportPrometheus; each once, in the list's order), or nil
// for "none" (which must stand alone) or, when the variable is unset, for
// otlp without an endpoint variable (kretrieve exports nothing unless
// asked; an explicit otlp without one uses the specification's default
// endpoint, see [defaultEndpoints]). It returns an error for exporters or
// protocols this package cannot honour, naming the supported ones.
func exportKinds(getenv func(string) string, s signalEnv) ([]string, error) {
	v := strings.ToLower(lookup(getenv, s.exporter))
	if v == "" {
		if lookup(getenv, envEndpoint) == "" && lookup(getenv, s.endpoint) == "" {
			return nil, nil
		}
		v = exportOTLP
	}
	var kinds []string
	for k := range strings.SplitSeq(v, ",") {
		switch k = strings.TrimSpace(k); {
		case k == "none":
			if v != "none" {
				return nil, fmt.Errorf("%s=%q: none must stand alone", s.exporter, v)
			}
			return nil, nil
		case k == exportOTLP, slices.Contains(s.exporters, k):
			if !slices.Contains(kinds, k) {
				kinds = append(kinds, k)
			}
		default:
			return nil, fmt.Errorf("unsupported %s %q (want %s or none)", s.exporter, k, strings.Join(s.exporters, ", "))
		}
	}
	if slices.Contains(kinds, exportOTLP) {
		if _, name, err := otlpProtocol(getenv, s); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return kinds, nil
}

// otlpProtocol returns the OTLP protocol of s (default http/protobuf) and
// the variable it came from, or an error naming the supported protocols.
func otlpProtocol(getenv func(string) string, s signalEnv) (proto, name string, err error) {
	proto, name = lookup(getenv, s.protocol), s.protocol
	if proto == "" {
		proto, name = lookup(getenv, envProtocol), envProtocol
	}
	if proto == "" {
		return protoProtobuf, name, nil
	}
	if !slices.Contains(s.protocols, proto) {
		return "", name, fmt.Errorf("unsupported protocol %q for %s (want %s)", proto, s.name, strings.Join(s.protocols, ", "))
	}
	return proto, name, nil
}
