// SPDX-License-Identifier: Apache-2.0

package consumers

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// TestFetchErrorLogsTopicOnce: a fetch error's line carries the worker's
// topic key once (the worker's logger has it), and names another topic as
// fetch_topic; a poll woken for a rewind logs nothing.
func TestFetchErrorLogsTopicOnce(t *testing.T) {
	var buf bytes.Buffer
	w := &Worker{cfg: Config{Group: "g", Topic: "requests"}}
	w.logger = slog.New(slog.NewTextHandler(&buf, nil)).With("group", "g", "topic", "requests")
	w.logFetchError(t.Context(), "requests", 3, errors.New("boom"))
	w.logFetchError(t.Context(), "", -1, errors.New("dial"))
	w.logFetchError(t.Context(), "requests", 1, context.Canceled)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines:\n%s", len(lines), buf.String())
	}
	for _, l := range lines {
		if strings.Count(l, " topic=") != 1 {
			t.Errorf("topic key not once: %s", l)
		}
	}
	if !strings.Contains(lines[0], "partition=3") || !strings.Contains(lines[1], `fetch_topic="" partition=-1`) {
		t.Errorf("lines:\n%s", buf.String())
	}
}
