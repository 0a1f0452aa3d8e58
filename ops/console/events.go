package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// events streams the map as Server-Sent Events: an "event: map" at once,
// then every Interval, until the browser goes away or the console closes.
// The stream keeps the console started.
func (c *Console) events(w http.ResponseWriter, r *http.Request, l *live) {
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
		case <-t.C:
		}
	}
}
