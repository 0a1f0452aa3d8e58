// SPDX-License-Identifier: Apache-2.0

package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/metric/noop"

	"github.com/kretrieve/kretrieve/gateway"
)

// Issue 27: a path no route takes, and a method a route does not take,
// are answered in the API's JSON error shape (not net/http's plain text),
// 405 with the path's Allow header; a path to clean is still redirected.
func TestUnroutedRequestsGetJSONErrors(t *testing.T) {
	g, err := gateway.New(gateway.Config{}, nil, func(context.Context) error { return nil }, gateway.WithMeterProvider(noop.NewMeterProvider()))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	defer srv.Close()
	id := strings.Repeat("0", 32)
	tests := []struct {
		method, path string
		status       int
		code, allow  string
	}{
		{http.MethodGet, "/nope", http.StatusNotFound, "not_found", ""},
		{http.MethodPost, "/v1/nope", http.StatusNotFound, "not_found", ""},
		{http.MethodGet, "/v1/search", http.StatusMethodNotAllowed, "method_not_allowed", "POST"},
		{http.MethodDelete, "/v1/requests", http.StatusMethodNotAllowed, "method_not_allowed", "POST"},
		{http.MethodPost, "/v1/requests/" + id, http.StatusMethodNotAllowed, "method_not_allowed", "GET, HEAD"},
		{http.MethodPost, "/healthz", http.StatusMethodNotAllowed, "method_not_allowed", "GET, HEAD"},
	}
	for _, tt := range tests {
		req, err := http.NewRequestWithContext(t.Context(), tt.method, srv.URL+tt.path, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var body struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		if err := json.Unmarshal(raw, &body); err != nil || resp.StatusCode != tt.status || body.Error.Code != tt.code || body.Error.Message == "" ||
			resp.Header.Get("Content-Type") != "application/json" || resp.Header.Get("X-Content-Type-Options") != "nosniff" ||
			resp.Header.Get("Allow") != tt.allow {
			t.Errorf("%s %s: status %d Allow %q Content-Type %q body %s", tt.method, tt.path, resp.StatusCode,
				resp.Header.Get("Allow"), resp.Header.Get("Content-Type"), raw)
		}
	}
	// The mux's redirect of an unclean path is kept (net/http chooses its
	// status).
	noRedirect := *srv.Client()
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := noRedirect.Get(srv.URL + "/v1//requests/" + id)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 3 || resp.Header.Get("Location") != "/v1/requests/"+id {
		t.Errorf("unclean path: status %d Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}
