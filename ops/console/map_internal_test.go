// SPDX-License-Identifier: Apache-2.0

package console

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/ops/status"
)

// TestMapRendersUnknownAsNull: what the status does not know is null in
// the map, never 0 or -1, and the errors saying why are listed.
func TestMapRendersUnknownAsNull(t *testing.T) {
	st := status.Status{
		Stages: []status.Stage{{Name: "retrieval", DLQTopic: "r.dlq", Error: "r.dlq: offsets not listed", TopReasons: []status.ReasonCount{}}},
		Edges: []status.Edge{
			{Topic: "r", From: "origin", To: "retrieval", Rate: 2,
				Latency: status.Quantiles{P50: status.Of(1.5), P99: status.Of(3.0)},
				Lag:     status.Lag{Records: status.Of[int64](4), Error: "partition 0: no record"}},
			{Topic: "s", From: "retrieval", To: "results"},
		},
		GroupErrors: []status.GroupError{{Group: "g", Error: "group g: GROUP_ID_NOT_FOUND"}},
		Errors:      []string{"lag: boom"},
	}
	b, err := json.Marshal(mapOf(st, errors.New("read kretrieve.pathways: down")))
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{
		`"dead_letters":null`,
		`"msgs_per_sec":2,"edge_p50_ms":1.5,"edge_p99_ms":3,"origin_p50_ms":null,"origin_p99_ms":null,"lag_records":4,"lag_seconds":null`,
		`"msgs_per_sec":0,"edge_p50_ms":null,"edge_p99_ms":null,"origin_p50_ms":null,"origin_p99_ms":null,"lag_records":null,"lag_seconds":null`,
		`"errors":["read kretrieve.pathways: down","lag: boom","lag: group g: GROUP_ID_NOT_FOUND","dead letters: r.dlq: offsets not listed"]`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("map %s\nlacks %s", got, want)
		}
	}
	if strings.Contains(got, "-1") {
		t.Errorf("map %s: -1 for unknown", got)
	}
}
