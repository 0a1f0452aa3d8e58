// SPDX-License-Identifier: Apache-2.0

package docfeed

import (
	"encoding/json"
	"net/http"
)

// Handler serves a worker's index over HTTP: GET /readyz answers 200 once
// the Follower is ready and 503 with how far behind it is until then; GET
// /v1/index answers its Status as JSON, which `kretrieve documents verify`
// compares with the topic. GET /healthz answers 200 while the process runs.
func Handler(f *Follower) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err := f.Ready(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(err.Error() + "\n"))
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /v1/index", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(f.Status())
	})
	return mux
}
