// SPDX-License-Identifier: Apache-2.0

package otlptest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// NewDiscardSink starts an OTLP/HTTP endpoint on 127.0.0.1 that reads every
// request body, throws it away and answers 200 with an empty body (an
// empty export response: an empty protobuf message is zero bytes), for
// benchmarks that measure the cost of exporting, not of collecting. It is
// closed by tb's cleanup.
func NewDiscardSink(tb testing.TB) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	tb.Cleanup(srv.Close)
	return srv
}
