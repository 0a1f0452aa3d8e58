// SPDX-License-Identifier: Apache-2.0

//go:build chaos

package chaos_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/ops/status"
	"github.com/kretrieve/kretrieve/pathwaytopic"
)

// pathwaysInterval is how often the chaos processes and the load publish
// their pathway windows; unfinishedAfter is when `kretrieve pathways`
// judges a cohort (3 intervals, the documented minimum).
const (
	pathwaysInterval = time.Second
	unfinishedAfter  = 3 * pathwaysInterval
)

// loadProducer returns the load's client: it measures the pathways of
// what it sends, as kretrieve's request client does, and publishes them,
// so that completeness counts each request from its send (a record without
// a pathway header starts its pathway at the worker that reads it, and a
// worker SIGKILLed before it committed reads it again).
func loadProducer(t testing.TB, ctx context.Context, addr string) *kgo.Client {
	t.Helper()
	m := kafkatrace.NewMetrics()
	cl := kafkaClient(t, addr, kgo.WithHooks(kafkatrace.New(kafkatrace.WithPathways("chaos-load"), kafkatrace.WithMetrics(m))))
	if err := pathwaytopic.EnsureTopic(ctx, cl, -1, pathwaytopic.DefaultTopic); err != nil {
		t.Fatal(err)
	}
	pub, err := pathwaytopic.NewPublisher(cl, m, pathwaytopic.WithService("chaos-load"), pathwaytopic.WithInterval(pathwaysInterval))
	if err != nil {
		t.Fatal(err)
	}
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = pub.Run(pctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return cl
}

// completeness runs `kretrieve pathways --once --json` until it judges the
// cohorts up to until, and returns what it says.
func completeness(t testing.TB, env []string, until time.Time) status.Completeness {
	t.Helper()
	var c status.Completeness
	poll.Until(t, time.Minute, func() bool {
		cmd := exec.Command(bin, "pathways", "--once", "--json", "--groups", "", "--unfinished-after", unfinishedAfter.String())
		cmd.Env = append(append(os.Environ(), quietTelemetry...), env...)
		out, err := cmd.Output()
		var rep struct {
			Completeness status.Completeness `json:"completeness"`
		}
		if err != nil || json.Unmarshal(out, &rep) != nil {
			return false
		}
		c = rep.Completeness
		return !c.Until.Before(until)
	}, "kretrieve pathways to judge the cohorts up to %s", until.Format(time.TimeOnly))
	return c
}
