// SPDX-License-Identifier: Apache-2.0

//go:build chaos

package chaos_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The refused-writes phase (issue 25): the broker refuses every record the
// retrieval workers produce (their output topic's max.message.bytes set
// below any candidates record, as a broker whose disk is full refuses
// them) while requests keep coming; then it takes them again.
const (
	refusedFor     = 8 * time.Second
	refusedPrefix  = "refused-"
	refusedLoad    = 200  // requests published during the refusal
	maxLogRate     = 10.0 // log lines (warn and error) a second, per worker
	maxRewindRate  = 10.0 // rewinds a second, per worker
	rewindLogLine  = "rewinding partition"
	refusedMaxSize = "64" // bytes: below any candidates record
)

// refusedWritesPhase refuses the retrieval workers' output for refusedFor
// under load and returns each worker's warn-and-error log lines and
// rewinds per second during it.
func refusedWritesPhase(t testing.TB, ctx context.Context, adm *kadm.Client, led *ledger, producer *kgo.Client,
	requests, output string, workers []*proc, mark func(string, ...any)) (logRate, rewindRate map[string]float64) {
	t.Helper()
	setConfig := func(op kadm.IncrementalOp, value *string) {
		t.Helper()
		resp, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: op, Name: "max.message.bytes", Value: value}}, output)
		for _, r := range resp {
			err = errors.Join(err, r.Err)
		}
		if err != nil {
			t.Fatalf("max.message.bytes of %s: %v", output, err)
		}
	}
	logsBefore, rewindsBefore := countLogs(workers)
	size := refusedMaxSize
	setConfig(kadm.SetConfig, &size)
	mark("broker: refusing every record of %s (max.message.bytes %s) for %v", output, refusedMaxSize, refusedFor)
	began := time.Now()
	for i := range refusedLoad {
		id := fmt.Sprintf("%s%04d", refusedPrefix, i)
		led.publish(ctx, producer, requests, id, requestValue(id, probeQuery))
		pause(ctx, refusedFor/refusedLoad)
	}
	took := time.Since(began).Seconds()
	logsAfter, rewindsAfter := countLogs(workers)
	setConfig(kadm.DeleteConfig, nil)
	mark("broker: taking records of %s again", output)
	logRate, rewindRate = map[string]float64{}, map[string]float64{}
	for _, w := range workers {
		logRate[w.name] = float64(logsAfter[w.name]-logsBefore[w.name]) / took
		rewindRate[w.name] = float64(rewindsAfter[w.name]-rewindsBefore[w.name]) / took
	}
	return logRate, rewindRate
}

// countLogs counts, in each worker's current log, its warn and error lines
// and its rewinds.
func countLogs(workers []*proc) (logs, rewinds map[string]int) {
	logs, rewinds = map[string]int{}, map[string]int{}
	for _, w := range workers {
		w.mu.Lock()
		path := w.logs[len(w.logs)-1]
		w.mu.Unlock()
		b, _ := os.ReadFile(path)
		for line := range strings.SplitSeq(string(b), "\n") {
			if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
				logs[w.name]++
			}
			if strings.Contains(line, rewindLogLine) {
				rewinds[w.name]++
			}
		}
	}
	return logs, rewinds
}

// checkRefused asserts the refusal was waited out, not hammered: each
// worker's log and rewind rates stay under their bounds.
func checkRefused(t testing.TB, logRate, rewindRate map[string]float64) {
	t.Helper()
	t.Logf("refused-writes phase: warn and error lines a second %v, rewinds a second %v", rounded(logRate), rounded(rewindRate))
	for w, r := range logRate {
		if r > maxLogRate {
			t.Errorf("%s logged %.0f warn and error lines a second while the broker refused its output (bound %.0f)", w, r, maxLogRate)
		}
	}
	for w, r := range rewindRate {
		if r > maxRewindRate {
			t.Errorf("%s rewound %.0f times a second while the broker refused its output (bound %.0f)", w, r, maxRewindRate)
		}
	}
}

// rounded formats rates to one decimal.
func rounded(m map[string]float64) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = fmt.Sprintf("%.1f", v)
	}
	return out
}
