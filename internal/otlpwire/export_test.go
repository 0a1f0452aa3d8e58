// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"context"
	"net"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

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

// OnDialError makes e call f with every error of its transport's dials,
// so that a test can wait for a failed connection attempt instead of
// sleeping. Call it before the first export.
func OnDialError(e *Exporter, f func(error)) {
	dial := e.transport.DialContext
	e.transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			f(err)
		}
		return conn, err
	}
}
