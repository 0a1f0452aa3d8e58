// SPDX-License-Identifier: Apache-2.0

package otlptest

import (
	"encoding/hex"
	"strings"
	"time"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
)

// ExponentialHistogramPoint is one data point of an exponential histogram
// metric as it was exported, flattened out of its resource, scope and
// metric. Each export request contributes its own points: with cumulative
// temporality the newest point of a series holds the totals, with delta
// temporality the points of a series add up to them.
type ExponentialHistogramPoint struct {
	// Metric is the metric name; Unit its unit.
	Metric, Unit string
	// Temporality is "CUMULATIVE" or "DELTA".
	Temporality string
	// ServiceName is the service.name attribute of the point's resource.
	ServiceName string
	// ScopeName is the instrumentation scope (meter) name.
	ScopeName string
	// Attributes holds the point's attributes, typed as in
	// [Span.Attributes].
	Attributes map[string]any
	// Start and Time bound the point's aggregation interval.
	Start, Time time.Time
	// Count is the number of measurements, ZeroCount included.
	Count uint64
	// Sum is their total; HasSum is false when the exporter left it out.
	Sum    float64
	HasSum bool
	// Scale is the exponential scale: bucket i of Positive holds values in
	// (2^((Offset+i)/2^Scale), 2^((Offset+i+1)/2^Scale)].
	Scale int32
	// ZeroCount counts measurements of 0.
	ZeroCount uint64
	// Positive and Negative are the bucket counts of positive and
	// negative values.
	Positive, Negative Buckets
	// Exemplars are the point's exemplars, in order.
	Exemplars []Exemplar
}

// Buckets are consecutive exponential histogram buckets.
type Buckets struct {
	// Offset is the index of Counts[0].
	Offset int32
	// Counts are the buckets' counts.
	Counts []uint64
}

// Exemplar is an exported exemplar.
type Exemplar struct {
	// Value is the measurement (a double, or an integer converted).
	Value float64
	// Time is when it was recorded.
	Time time.Time
	// TraceID and SpanID are in lowercase hex, "" when not set.
	TraceID, SpanID string
}

// ExponentialHistogramPoints returns every data point of the exponential
// histogram metric called name received so far, in arrival order (and in
// each request's order).
func (s *Server) ExponentialHistogramPoints(name string) []ExponentialHistogramPoint {
	s.mu.Lock()
	reqs := s.metricReqs
	s.mu.Unlock()
	var out []ExponentialHistogramPoint
	for _, req := range reqs {
		for _, rm := range req.GetResourceMetrics() {
			resAttrs := attrMap(rm.GetResource().GetAttributes())
			service, _ := resAttrs["service.name"].(string)
			for _, sm := range rm.GetScopeMetrics() {
				for _, m := range sm.GetMetrics() {
					eh := m.GetExponentialHistogram()
					if m.GetName() != name || eh == nil {
						continue
					}
					for _, dp := range eh.GetDataPoints() {
						out = append(out, convertExpoPoint(m, eh, dp, service, sm.GetScope().GetName()))
					}
				}
			}
		}
	}
	return out
}

func convertExpoPoint(m *metricpb.Metric, eh *metricpb.ExponentialHistogram, dp *metricpb.ExponentialHistogramDataPoint, service, scope string) ExponentialHistogramPoint {
	p := ExponentialHistogramPoint{
		Metric:      m.GetName(),
		Unit:        m.GetUnit(),
		Temporality: strings.TrimPrefix(eh.GetAggregationTemporality().String(), "AGGREGATION_TEMPORALITY_"),
		ServiceName: service,
		ScopeName:   scope,
		Attributes:  attrMap(dp.GetAttributes()),
		Start:       time.Unix(0, int64(dp.GetStartTimeUnixNano())), //nolint:gosec // OTLP nanos fit in int64 until 2262.
		Time:        time.Unix(0, int64(dp.GetTimeUnixNano())),      //nolint:gosec // as above.
		Count:       dp.GetCount(),
		Sum:         dp.GetSum(),
		HasSum:      dp.Sum != nil,
		Scale:       dp.GetScale(),
		ZeroCount:   dp.GetZeroCount(),
		Positive:    Buckets{Offset: dp.GetPositive().GetOffset(), Counts: dp.GetPositive().GetBucketCounts()},
		Negative:    Buckets{Offset: dp.GetNegative().GetOffset(), Counts: dp.GetNegative().GetBucketCounts()},
	}
	for _, e := range dp.GetExemplars() {
		ex := Exemplar{Time: time.Unix(0, int64(e.GetTimeUnixNano()))} //nolint:gosec // as above.
		switch v := e.GetValue().(type) {
		case *metricpb.Exemplar_AsDouble:
			ex.Value = v.AsDouble
		case *metricpb.Exemplar_AsInt:
			ex.Value = float64(v.AsInt)
		}
		if len(e.GetTraceId()) > 0 {
			ex.TraceID = hex.EncodeToString(e.GetTraceId())
		}
		if len(e.GetSpanId()) > 0 {
			ex.SpanID = hex.EncodeToString(e.GetSpanId())
		}
		p.Exemplars = append(p.Exemplars, ex)
	}
	return p
}

// keepMetrics records a decoded metrics export request. Called with s.mu
// held.
func (s *Server) keepMetrics(req *colmetricpb.ExportMetricsServiceRequest) {
	s.metricReqs = append(s.metricReqs, req)
}
