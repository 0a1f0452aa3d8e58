// SPDX-License-Identifier: Apache-2.0

package gateway_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/gateway"
	"github.com/kretrieve/kretrieve/messages"
)

// FuzzSearchRequest sends arbitrary bodies and caller headers through the
// gateway's API handler (publishing to an in-process broker that nothing
// answers): it never panics, answers 5xx only to a valid request (504 for
// want of a worker, 503 when publishing fails), and always answers JSON with
// the security headers.
func FuzzSearchRequest(f *testing.F) {
	f.Add(false, "application/json", `{"query":"gzip","top_k":3}`, "curl/8", "example.com", "")
	f.Add(true, "application/json; charset=utf-8", `{"query":"gzip","request_id":"a\"<b>"}`, "", "", "203.0.113.1")
	f.Add(false, "application/json", `{"query":""}`, "x", "h:1", "1.2.3.4, 5.6.7.8")
	f.Add(false, "text/plain", `{"query":"gzip"}`, "", "", "")
	f.Add(false, "application/json", `{"query":"go","top_k":1000}`, "", "", "")
	f.Add(true, "application/json", "\xff\xfe", "\x00", "::1", "for=x")
	sg := newSecGateway(f, gateway.Config{Timeout: time.Millisecond},
		gateway.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	f.Fuzz(func(t *testing.T, enqueue bool, contentType, body, userAgent, host, forwarded string) {
		path := "/v1/search"
		if enqueue {
			path = "/v1/requests"
		}
		r := httptest.NewRequest(http.MethodPost, "http://gateway"+path, strings.NewReader(body))
		r.Host = host
		r.Header.Set("Content-Type", contentType)
		r.Header.Set("User-Agent", userAgent)
		r.Header.Set("X-Forwarded-For", forwarded)
		w := httptest.NewRecorder()
		sg.g.ServeHTTP(w, r)
		h := w.Result().Header
		if h.Get("Content-Type") != "application/json" || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Cache-Control") != "no-store" {
			t.Fatalf("status %d headers %v", w.Code, h)
		}
		if !json.Valid(w.Body.Bytes()) {
			t.Fatalf("status %d: body is not JSON: %q", w.Code, w.Body)
		}
		if w.Code >= 500 {
			mt, _, err := mime.ParseMediaType(contentType)
			if _, derr := messages.DecodeRequest([]byte(body)); err != nil || mt != "application/json" || derr != nil {
				t.Fatalf("status %d for bad input (content type %q, body %q): %s", w.Code, contentType, body, w.Body)
			}
		}
	})
}
