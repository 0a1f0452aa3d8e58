// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestLagCommandShowsHealth: the fixture's group retrieval has no
// members and committed 2 of 5 on partition 0 (all of partition 1):
// over 3 measurements in --window, partition 0 is STOP, partition 1 OK,
// the group's total STOP; --json has the same status per partition.
func TestLagCommandShowsHealth(t *testing.T) {
	f := newLagFixture(t)
	lagOut := func(args ...string) (string, time.Duration) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		start := time.Now()
		if err := run(t.Context(), append([]string{"lag", "--groups", "retrieval", "--indexes=false", "--window", "300ms"}, args...), mapEnv(f.env), &stdout, &stderr); err != nil {
			t.Fatalf("lag %v: %v\n%s", args, err, stderr.String())
		}
		return stdout.String(), time.Since(start)
	}
	out, took := lagOut()
	t.Logf("took %s:\n%s", took, out)
	if took < 300*time.Millisecond {
		t.Errorf("took %s: the 3 measurements span --window 300ms", took)
	}
	rows := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		fs := strings.Fields(l)
		rows[fs[1]+"/"+fs[2]] = fs
	}
	if h := rows["TOPIC/PARTITION"]; strings.Join(h[7:], " ") != "STATUS VELOCITY(/s) DRAIN(s) HEADROOM(s)" {
		t.Fatalf("header %q", h)
	}
	// Partition 0: lag 3, not draining; no headroom (the test broker keeps
	// records for ever).
	if p0 := rows["retrieval.requests/0"]; strings.Join(p0[7:], " ") != "stop 0.0 - -" {
		t.Errorf("partition 0 %q, want stop, velocity 0, no drain nor headroom", p0)
	}
	if p1 := rows["retrieval.requests/1"]; p1[7] != "ok" {
		t.Errorf("partition 1 %q, want ok", p1)
	}
	if total := rows["(total)/3"]; len(total) < 5 || total[4] != "stop" {
		t.Errorf("total %q, want stop", total)
	}

	out, _ = lagOut("--json")
	status := map[int32]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var line lagLine
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if line.Samples != 3 || line.Velocity == nil || *line.Velocity != 0 || line.DrainSeconds != nil || line.HeadroomSeconds != nil {
			t.Errorf("line %s: want 3 samples, velocity 0, no drain nor headroom", l)
		}
		status[line.Partition] = line.Status
	}
	if status[0] != "stop" || status[1] != "ok" {
		t.Errorf("statuses %v, want stop and ok", status)
	}

	// --window 0: one measurement, the health unknown.
	out, _ = lagOut("--window", "0")
	if !strings.Contains(out, "unknown") || strings.Contains(out, "stop") {
		t.Errorf("--window 0:\n%s", out)
	}
}
