package otlpwire

import sdktrace "go.opentelemetry.io/otel/sdk/trace"

// NewEncodeFunc exposes the encoder to the external tests and benchmarks:
// the returned function encodes a batch and returns the request body,
// valid until its next call.
func NewEncodeFunc() func([]sdktrace.ReadOnlySpan) []byte {
	var e encoder
	return func(spans []sdktrace.ReadOnlySpan) []byte {
		e.encode(spans)
		return e.buf.bytes()
	}
}
