// SPDX-License-Identifier: Apache-2.0

package console_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/ops/console"
)

// Issue 25 #9 (F4): an event stream ends by itself after
// MaxStreamDuration (the browser then polls), and streams beyond MaxStreams
// are refused with their connection closed.
func TestEventStreamsAreBounded(t *testing.T) {
	p := letterEnv(t, 0, 0, 0)
	con, err := console.New(console.Config{Topology: p.Topology(), KafkaOptions: p.ClientOptions(),
		Interval: 50 * time.Millisecond, MaxStreams: 1, MaxStreamDuration: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer con.Close()
	srv := newServer(t, con)
	client := &http.Client{Timeout: 5 * time.Second}
	start := time.Now()
	resp, err := client.Get(srv + "/api/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// A second stream while the first is open.
	second, err := client.Get(srv + "/api/events")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(second.Body)
	second.Body.Close()
	if second.StatusCode != http.StatusServiceUnavailable || !second.Close {
		t.Errorf("second stream: %d (close %v) %.200s; want 503 closing the connection", second.StatusCode, second.Close, body)
	}
	b, err := io.ReadAll(resp.Body)
	took := time.Since(start)
	t.Logf("first stream: %d events, ended after %s (%v)", strings.Count(string(b), "event: map"), took.Round(time.Millisecond), err)
	if err != nil || !strings.Contains(string(b), "event: map") || took > 3*time.Second {
		t.Errorf("stream ended after %s with %v; want it to end by itself after 300 ms", took, err)
	}
}
