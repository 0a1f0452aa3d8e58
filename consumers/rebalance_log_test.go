// SPDX-License-Identifier: Apache-2.0

package consumers

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestLostPartitionsLoggedOnlyWhenThereAreSome: franz-go calls
// OnPartitionsLost with no partitions when a session ends; only a real loss
// is a warning, its partitions in order.
func TestLostPartitionsLoggedOnlyWhenThereAreSome(t *testing.T) {
	var buf bytes.Buffer
	w := &Worker{cfg: Config{Group: "g", Topic: "requests"}}
	w.logger = slog.New(slog.NewTextHandler(&buf, nil))
	w.onLost(t.Context(), nil, map[string][]int32{})
	w.onLost(t.Context(), nil, map[string][]int32{"requests": {}})
	w.onLost(t.Context(), nil, map[string][]int32{"requests": {2, 0}})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], `level=WARN msg="partitions lost" partitions="[0 2]"`) {
		t.Errorf("want one warning naming partitions [0 2]; logs:\n%s", buf.String())
	}
}
