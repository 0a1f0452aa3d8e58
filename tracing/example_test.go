// SPDX-License-Identifier: Apache-2.0

package tracing_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/tracing"
)

// ExampleSetup configures OpenTelemetry from the environment. With no
// OTEL_EXPORTER_OTLP_ENDPOINT nothing is exported, but spans still reach
// extra processors such as a run-summary recorder.
func ExampleSetup() {
	ctx := context.Background()
	rec := tracetest.NewSpanRecorder()
	p, err := tracing.Setup(ctx,
		tracing.WithServiceName("kretrieve-example"),
		tracing.WithSpanProcessor(rec))
	if err != nil {
		fmt.Println("setup:", err)
		return
	}

	_, span := p.TracerProvider.Tracer("example").Start(ctx, "handle request")
	span.End()

	// Flush and stop on a fresh context, after everything else stopped.
	if err := p.Shutdown(context.WithoutCancel(ctx)); err != nil {
		fmt.Println("shutdown:", err)
	}

	fmt.Println("enabled:", p.Enabled, "exporting:", p.Exporting)
	for _, s := range rec.Ended() {
		svc, _ := s.Resource().Set().Value("service.name")
		fmt.Println(s.Name(), "from", svc.AsString())
	}
	fmt.Printf("stats: %+v\n", p.Stats())
	// Output:
	// enabled: true exporting: false
	// handle request from kretrieve-example
	// stats: {Ended:0 Exported:0 Failed:0 Dropped:0}
}

// ExampleNewLogHandler shows trace_id and span_id added to a record logged
// with a span in its context.
func ExampleNewLogHandler() {
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	log := slog.New(tracing.NewLogHandler(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: noTime})))

	traceID, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	spanID, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: traceID, SpanID: spanID, TraceFlags: trace.FlagsSampled,
	}))

	log.InfoContext(ctx, "record fetched", "topic", "requests")
	log.InfoContext(context.Background(), "no span")
	// Output:
	// {"level":"INFO","msg":"record fetched","topic":"requests","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"00f067aa0ba902b7"}
	// {"level":"INFO","msg":"no span"}
}
