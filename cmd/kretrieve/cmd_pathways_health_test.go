// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/broker/brokertest"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/internal/testutil/syncbuf"
	"github.com/kretrieve/kretrieve/lag"
	"github.com/kretrieve/kretrieve/ops/status"
	"github.com/kretrieve/kretrieve/ops/status/statustest"
)

// TestPathwaysCommandShowsLagHealth: on the seeded pipeline, whose
// retrieval group is LagRecords behind with no members and no commits,
// `pathways --json --watch` reports the requests stage's lag health as
// stop once three reads are in its window; once, it is unknown after one
// read, and the table shows it.
func TestPathwaysCommandShowsLagHealth(t *testing.T) {
	b := brokertest.NewBroker(t, 1)
	statustest.Seed(t, b.Addr())
	env := mapEnv(map[string]string{"KRETRIEVE_BROKERS": b.Addr(), "KRETRIEVE_LOG_LEVEL": "error", "KRETRIEVE_GROUPS": statustest.Group})
	requests := statustest.Topology().Stages[0].Input

	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"pathways", "--once"}, env, &stdout, &stderr); err != nil {
		t.Fatalf("pathways --once: %v\n%s", err, stderr.String())
	}
	want := []string{requests, statustest.Group, "unknown", "1", "-", "-", "-"}
	if !hasRow(stdout.String(), want) || !strings.Contains(stdout.String(), "LAG HEALTH") {
		t.Fatalf("once: no row %q:\n%s", want, stdout.String())
	}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out syncbuf.Buffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"pathways", "--json", "--watch", "50ms"}, env, &out, &stderr) }()
	var got *status.LagHealth
	poll.Until(t, 30*time.Second, func() bool {
		sc := bufio.NewScanner(strings.NewReader(out.String()))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var rep pathwaysReport
			if json.Unmarshal(sc.Bytes(), &rep) != nil {
				continue
			}
			for _, s := range rep.Stages {
				if s.Topic == requests && s.Group == statustest.Group && s.LagHealth != nil && s.LagHealth.Status == lag.StatusStop {
					got = s.LagHealth
				}
			}
		}
		return got != nil
	}, "the requests stage's lag health to go stop:\n%s", &out)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("pathways --watch: %v", err)
	}
	if got.Samples < lag.MinSamples || got.Velocity != status.Of(0.0) || got.Drain.Known || got.Headroom.Known {
		t.Fatalf("lag health %+v: want ≥ %d samples, velocity 0, no drain, no headroom (infinite retention)", got, lag.MinSamples)
	}
}
