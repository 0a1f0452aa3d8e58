// SPDX-License-Identifier: Apache-2.0

package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// events streams the map as Server-Sent Events: an "event: map" at once,
// then every Interval, until the browser goes away, the console closes or
// MaxStreamDuration passes. The stream keeps the console started. Beyond
// MaxStreams streams it answers 503 and closes the connection.
func (c *Console) events(w http.ResponseWriter, r *http.Request, l *live) {
	select {
	case c.streamSlots <- struct{}{}:
		defer func() { <-c.streamSlots }()
	default:
		w.Header().Set("Connection", "close")
		w.Header().Set("Retry-After", "10")
		writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("%d event streams are open, the most at once: poll GET api/map instead", c.cfg.MaxStreams))
		return
	}
	end := time.NewTimer(c.cfg.MaxStreamDuration)
	defer end.Stop()
	rc := http.NewResponseController(w)
	// A stream outlives a server's write timeout (the gateway's).
	_ = rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	t := time.NewTicker(c.cfg.Interval)
	defer t.Stop()
	for {
		b, err := json.Marshal(l.pipelineMap(r.Context()))
		if err != nil {
			return
		}
		if _, err := fmt.Fprintf(w, "event: map\ndata: %s\n\n", b); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-c.closed:
			return
		case <-end.C:
			return
		case <-t.C:
		}
	}
}
