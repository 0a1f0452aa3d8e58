// SPDX-License-Identifier: Apache-2.0

package gateway

import (
	"net/http"
)

// Starting returns the handler a gateway process serves before its Gateway
// exists, while it waits for Kafka: GET /healthz answers 200, so that an
// orchestrator does not restart a process for waiting; GET /readyz and
// every other request answer 503 with why (and Retry-After: 1 on the API),
// so that no traffic is routed to it yet.
func Starting(why string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "error": why})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusServiceUnavailable, errorBody{APIError{Code: "starting", Message: why}})
	})
	return mux
}
