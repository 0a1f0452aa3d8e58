// SPDX-License-Identifier: Apache-2.0

package lag

import (
	"context"
	"log/slog"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestLagSecondsBoundedByOwnClock: a process whose clock is 30 s ahead of
// the producers' sees a record produced just now as 30 s old. The record
// was not there at the previous measurement (the group was caught up), so
// it cannot be older than the time since, on this process's clock alone:
// the lag in seconds is bounded by that and the skew flagged (issue 25,
// item 4).
func TestLagSecondsBoundedByOwnClock(t *testing.T) {
	m, err := NewMonitor([]kgo.Opt{kgo.SeedBrokers("127.0.0.1:1")}, MonitorConfig{Groups: []string{"retrieval"}}, WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	lags := []PartitionLag{{Group: "retrieval", Topic: "req", Committed: 10, End: 10}}
	m.measure = func(context.Context) ([]PartitionLag, error) { return lags, nil }
	if _, err := m.Update(t.Context()); err != nil {
		t.Fatal(err)
	}
	// One record of lag, stamped 30 s before this process's clock.
	lags = []PartitionLag{{Group: "retrieval", Topic: "req", Committed: 10, End: 11, Records: 1, Seconds: 30}}
	got, err := m.Update(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Seconds > 5 || got[0].Skew < 25 {
		t.Errorf("lag %+v, want seconds bounded by the time since the caught-up measurement and the skew flagged", got)
	}
	// A lag that was there already at the previous measurement is not
	// bounded by it.
	lags = []PartitionLag{{Group: "retrieval", Topic: "req", Committed: 10, End: 12, Records: 2, Seconds: 30}}
	if got, _ := m.Update(t.Context()); len(got) != 1 || got[0].Seconds != 30 || got[0].Skew != 0 {
		t.Errorf("lag %+v, want 30 s as measured", got)
	}
}
