// SPDX-License-Identifier: Apache-2.0

package gateway_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/gateway"
)

func TestStartingIsAliveButNotReady(t *testing.T) {
	h := gateway.Starting("waiting for kafka at 127.0.0.1:9092")
	for _, c := range []struct {
		method, path string
		status       int
		want         string
	}{
		{"GET", "/healthz", http.StatusOK, `"ok"`},
		{"GET", "/readyz", http.StatusServiceUnavailable, "waiting for kafka"},
		{"POST", "/v1/search", http.StatusServiceUnavailable, `"code":"starting"`},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, strings.NewReader(`{"query":"q"}`)))
		if rec.Code != c.status || !strings.Contains(rec.Body.String(), c.want) || !json.Valid(rec.Body.Bytes()) {
			t.Errorf("%s %s: %d %s, want %d with %s", c.method, c.path, rec.Code, rec.Body, c.status, c.want)
		}
		if c.path == "/v1/search" && rec.Header().Get("Retry-After") != "1" {
			t.Errorf("%s: no Retry-After", c.path)
		}
	}
}
