// SPDX-License-Identifier: Apache-2.0

package gateway

import (
	"net/http"
	"strings"
)

// notRouted answers a request that no route takes, with the API's JSON
// error instead of net/http's plain text: 404 not_found, or 405
// method_not_allowed with the Allow header of the path's routes. h is the
// mux's own answer (http.ServeMux.Handler with an empty pattern): run
// into a capture, it tells which of the two it is, and the Allow list (or
// that it is a redirect to the cleaned path, which is served as it is).
func notRouted(w http.ResponseWriter, r *http.Request, h http.Handler) {
	c := &capture{header: http.Header{}}
	h.ServeHTTP(c, r)
	switch c.status {
	case http.StatusNotFound:
		writeJSON(w, http.StatusNotFound, errorBody{APIError{Code: "not_found", Message: "no such endpoint; see docs/api.md"}})
		return
	case http.StatusMethodNotAllowed:
	default: // a redirect to the cleaned path: the mux's own, with no body to speak of
		h.ServeHTTP(w, r)
		return
	}
	allow := c.header.Get("Allow")
	w.Header().Set("Allow", allow)
	writeJSON(w, http.StatusMethodNotAllowed, errorBody{APIError{Code: "method_not_allowed",
		Message: "method " + strings.ToValidUTF8(r.Method, "") + " is not allowed here; allowed: " + allow}})
}

// capture is a ResponseWriter that keeps the header and status and drops
// the body.
type capture struct {
	header http.Header
	status int
}

func (c *capture) Header() http.Header { return c.header }

func (c *capture) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	return len(b), nil
}

func (c *capture) WriteHeader(status int) {
	if c.status == 0 {
		c.status = status
	}
}
