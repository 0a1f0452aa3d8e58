// SPDX-License-Identifier: Apache-2.0

package runsummary

// Defaults of the Recorder's trace keeping.
const (
	// DefaultKeepSlowest is how many of the slowest requests' spans a
	// Recorder keeps: the slowest, shown in Summary.Slowest.
	DefaultKeepSlowest = 1
	// DefaultMaxInFlightTraces caps the requests whose spans are collected
	// at once.
	DefaultMaxInFlightTraces = 4096
	// DefaultMaxSpansPerTrace caps the spans kept per request.
	DefaultMaxSpansPerTrace = 256
)

type config struct {
	keep        int
	maxInFlight int
	maxSpans    int
}

// Option configures a Recorder. Only this package's With* functions make
// one; a nil Option is ignored.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithKeepSlowest keeps the spans of the n slowest completed requests, for
// Recorder.Traces (the slowest also goes to Summary.Slowest). 0 keeps no
// spans at all, only the histograms. Default: DefaultKeepSlowest (1).
func WithKeepSlowest(n int) Option {
	return optionFunc(func(c *config) { c.keep = max(n, 0) })
}

// WithMaxInFlightTraces caps how many requests' spans are collected at
// once, from the start of their root span to its end. A request starting
// while the cap is reached is not collected (counted in
// Summary.UntrackedTraces). Default: DefaultMaxInFlightTraces (4096).
func WithMaxInFlightTraces(n int) Option {
	return optionFunc(func(c *config) { c.maxInFlight = max(n, 1) })
}

// WithMaxSpansPerTrace caps the spans kept per request; further spans are
// counted in Summary.TruncatedSpans. Default: DefaultMaxSpansPerTrace (256).
func WithMaxSpansPerTrace(n int) Option {
	return optionFunc(func(c *config) { c.maxSpans = max(n, 1) })
}
