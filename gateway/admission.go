// SPDX-License-Identifier: Apache-2.0

package gateway

import (
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/producer"
)

// RetryAfter is the Retry-After (seconds) of a refused request.
const RetryAfter = "1"

// admission bounds the API requests in flight with a non-blocking
// semaphore: a request beyond the bound is answered at once with 503 and
// Retry-After, in the gateway's error shape. Nothing queues: a queue would
// add its wait to the latency of every admitted request, and callers told
// to come back in a second do better than callers that time out in line.
// It runs outside otelhttp and before the body is read, so a refusal
// allocates no body, starts no span (a refusal storm is not a storm of
// server-error spans) and is counted in otelnames.MetricGatewayRefused instead.
type admission struct {
	max      int64
	inFlight atomic.Int64
	refused  metric.Int64Counter
	// queueWait and budget: a budgeted route is refused while queueWait
	// reports a wait beyond budget (see WithQueueWait).
	queueWait func() (time.Duration, bool)
	budget    time.Duration
}

func newAdmission(max int, mp metric.MeterProvider) (*admission, error) {
	// The meter keeps the scope it had when the gateway lived in producer,
	// so the metric's identity is unchanged.
	refused, err := mp.Meter(producer.ScopeName).Int64Counter(otelnames.MetricGatewayRefused,
		metric.WithUnit(otelnames.MetricGatewayRefusedUnit),
		metric.WithDescription("API requests answered 503 because the gateway had its maximum of requests in flight."))
	if err != nil {
		return nil, fmt.Errorf("gateway: %s: %w", otelnames.MetricGatewayRefused, err)
	}
	return &admission{max: int64(max), refused: refused}, nil
}

// wrap admits requests to h, the handler of route, by the in-flight
// limit alone.
func (a *admission) wrap(route string, h http.Handler) http.Handler {
	return a.wrapRoute(route, h, false)
}

// wrapRoute admits requests to h, the handler of route. A budgeted route (one
// whose callers wait for the result, within the gateway's Timeout) is
// also refused while the first edge's queue wait exceeds that budget: the
// request would expire before the first stage took it.
func (a *admission) wrapRoute(route string, h http.Handler, budgeted bool) http.Handler {
	attrs := metric.WithAttributeSet(attribute.NewSet(attribute.String("http.route", route)))
	waitAttrs := metric.WithAttributeSet(attribute.NewSet(attribute.String("http.route", route), otelnames.RefusedReason.String("queue_wait")))
	body := errorBody{APIError{Code: "overloaded",
		Message: fmt.Sprintf("the gateway is handling its maximum of %d requests; retry after %s s", a.max, RetryAfter)}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if budgeted && a.queueWait != nil {
			if wait, ok := a.queueWait(); ok && wait > a.budget {
				a.refused.Add(r.Context(), 1, waitAttrs)
				w.Header().Set("Retry-After", retryAfter(wait-a.budget))
				writeJSON(w, http.StatusServiceUnavailable, errorBody{APIError{Code: "overloaded",
					Message: fmt.Sprintf("requests wait %s before the first stage takes them, beyond this request's %s; retry later",
						wait.Round(time.Millisecond), a.budget)}})
				return
			}
		}
		if a.inFlight.Add(1) > a.max {
			a.inFlight.Add(-1)
			a.refused.Add(r.Context(), 1, attrs)
			w.Header().Set("Retry-After", RetryAfter)
			writeJSON(w, http.StatusServiceUnavailable, body)
			return
		}
		defer a.inFlight.Add(-1)
		h.ServeHTTP(w, r)
	})
}

// maxRetryAfter bounds the Retry-After of a refusal by queue wait.
const maxRetryAfter = 60 * time.Second

// retryAfter is the Retry-After (whole seconds, at least 1, at most
// maxRetryAfter) of a refusal by queue wait: over is how much the queue
// wait exceeds the budget, the least the queue must drain.
func retryAfter(over time.Duration) string {
	s := int64(min(max(over, time.Second), maxRetryAfter)+time.Second-1) / int64(time.Second)
	return strconv.FormatInt(s, 10)
}
