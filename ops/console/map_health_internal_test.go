// SPDX-License-Identifier: Apache-2.0

package console

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/lag"
	"github.com/kretrieve/kretrieve/ops/status"
)

// TestMapRendersLagHealth: an edge's lag health is in the map, its
// unknown numbers null; the results edge, consumed by no group, is
// unknown.
func TestMapRendersLagHealth(t *testing.T) {
	st := status.Status{Edges: []status.Edge{
		{Topic: "r", From: "origin", To: "retrieval", Lag: status.Lag{Records: status.Of[int64](4),
			Health: status.LagHealth{Status: lag.StatusStall, Samples: 5, Velocity: status.Of(0.0), Headroom: status.Of(120.5)}}},
		{Topic: "s", From: "retrieval", To: "results"},
	}}
	b, err := json.Marshal(mapOf(st, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"lag_records":4,"lag_seconds":null,"lag_health":{"status":"stall","samples":5,"velocity":0,"drain_seconds":null,"retention_headroom_seconds":120.5}`,
		`"lag_health":{"status":"unknown","samples":0,"velocity":null,"drain_seconds":null,"retention_headroom_seconds":null}`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("map %s\nlacks %s", b, want)
		}
	}
}
