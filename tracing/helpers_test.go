// SPDX-License-Identifier: Apache-2.0

package tracing_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/kretrieve/kretrieve/internal/testutil/syncbuf"
	"github.com/kretrieve/kretrieve/tracing"
)

// testLogger returns a logger writing text to the returned buffer.
func testLogger() (*slog.Logger, *syncbuf.Buffer) {
	buf := &syncbuf.Buffer{}
	return slog.New(slog.NewTextHandler(buf, nil)), buf
}

// setupWithLogger starts Setup (with opts) logging through a NewLogger
// text logger at info level into the returned buffer, as the commands
// log, and requires that all three signals are exported.
func setupWithLogger(t *testing.T, opts ...tracing.Option) (*tracing.Providers, *slog.Logger, *syncbuf.Buffer) {
	t.Helper()
	logs := &syncbuf.Buffer{}
	log, err := tracing.NewLogger(logs, "text", "info")
	require.NoError(t, err)
	p, err := tracing.Setup(t.Context(), append([]tracing.Option{tracing.WithLogger(log)}, opts...)...)
	require.NoError(t, err)
	require.True(t, p.Exporting && p.ExportingMetrics && p.ExportingLogs)
	return p, log, logs
}

// emitJob ends a span "job" after adding 3 to the counter "job.items" and
// logging "job done" in its context.
func emitJob(t *testing.T, p *tracing.Providers, log *slog.Logger) {
	t.Helper()
	ctx, span := p.TracerProvider.Tracer("test").Start(t.Context(), "job")
	counter, err := p.MeterProvider.Meter("test").Int64Counter("job.items")
	require.NoError(t, err)
	counter.Add(ctx, 3)
	log.InfoContext(ctx, "job done")
	span.End()
}

// envMap returns a getenv function reading from m.
func envMap(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// sumValue returns the value of the int64 sum named name in rm.
func sumValue(t *testing.T, rm metricdata.ResourceMetrics, name string) (int64, bool) {
	t.Helper()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			sum, ok := m.Data.(metricdata.Sum[int64])
			require.True(t, ok, "%s is %T, want Sum[int64]", name, m.Data)
			require.True(t, sum.IsMonotonic, "%s must be a counter", name)
			require.Len(t, sum.DataPoints, 1)
			return sum.DataPoints[0].Value, true
		}
	}
	return 0, false
}

// lastValueExporter is a metric exporter that keeps the latest value of
// each int64 sum, so a test can read what the final collection at
// shutdown reported.
type lastValueExporter struct {
	mu     sync.Mutex
	values map[string]int64
}

func newLastValueExporter() *lastValueExporter {
	return &lastValueExporter{values: map[string]int64{}}
}

func (e *lastValueExporter) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return sdkmetric.DefaultTemporalitySelector(k)
}

func (e *lastValueExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}

func (e *lastValueExporter) Export(_ context.Context, rm *metricdata.ResourceMetrics) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok && len(sum.DataPoints) == 1 {
				e.values[m.Name] = sum.DataPoints[0].Value
			}
		}
	}
	return nil
}

func (e *lastValueExporter) value(name string) (int64, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	v, ok := e.values[name]
	return v, ok
}

func (*lastValueExporter) ForceFlush(context.Context) error { return nil }
func (*lastValueExporter) Shutdown(context.Context) error   { return nil }
