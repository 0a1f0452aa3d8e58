package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/kretrieve/kretrieve/internal/kafkatest"
)

// TestLoadCommand drives worker commands with the load command, closed and
// open loop, and checks the report.
func TestLoadCommand(t *testing.T) {
	b := kafkatest.NewBroker(t, 3)
	env := mapEnv(map[string]string{"KRETRIEVE_BROKERS": b.Addr(), "KRETRIEVE_LOG_LEVEL": "warn", "KRETRIEVE_INDEX": testIndex(t)})
	startCommands(t, env, "retrieval", "enrichment")
	for _, args := range [][]string{
		{"load", "--requests", "200", "--in-flight", "16", "--json"},
		{"load", "--requests", "100", "--rate", "200", "--json"},
	} {
		var stdout, stderr bytes.Buffer
		if err := run(t.Context(), args, env, &stdout, &stderr); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr.String())
		}
		var r loadReport
		if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stdout.String())
		}
		want := int64(200)
		if args[2] == "100" {
			want = 100
		}
		if r.Sent != want || r.Completed != want || r.Failed+r.TimedOut != 0 || r.ThroughputPS <= 0 {
			t.Fatalf("%v: report %+v", args, r)
		}
		if r.EndToEndMS.P50 <= 0 || r.EndToEndMS.P999 < r.EndToEndMS.P50 || len(r.Stages) != 4 || r.Stages["retrieval"].P50 <= 0 {
			t.Fatalf("%v: latencies %+v %+v", args, r.EndToEndMS, r.Stages)
		}
		if r.DroppedSpans != 0 || r.PeakLag < 0 {
			t.Fatalf("%v: dropped %d peak lag %d", args, r.DroppedSpans, r.PeakLag)
		}
	}
}
