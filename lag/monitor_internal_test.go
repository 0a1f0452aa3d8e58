// SPDX-License-Identifier: Apache-2.0

package lag

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestOlderMeasurementDoesNotReplaceANewerOne: a measurement that started
// first and ends last (Run's first one, slow, against the Update a
// follower makes once caught up) is returned to its caller but leaves the
// newer one in place: the lag reported is the newer, not the older.
func TestOlderMeasurementDoesNotReplaceANewerOne(t *testing.T) {
	m, err := NewReaderMonitor([]kgo.Opt{kgo.SeedBrokers("127.0.0.1:1")},
		Reader{Name: "retrieval", Topic: "docs", Offsets: func() map[int32]int64 { return nil }}, MonitorConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	release, entered := make(chan struct{}), make(chan struct{})
	calls := 0
	m.measure = func(context.Context) ([]PartitionLag, error) {
		calls++
		if calls == 1 {
			close(entered)
			<-release // the old, slow measurement: 70 records behind
			return []PartitionLag{{Group: "retrieval", Topic: "docs", Records: 70, Seconds: 3}}, nil
		}
		return []PartitionLag{{Group: "retrieval", Topic: "docs", Records: 0, Seconds: 0}}, nil
	}
	old := make(chan []PartitionLag)
	go func() {
		lags, _ := m.Update(t.Context())
		old <- lags
	}()
	<-entered
	if _, err := m.Update(t.Context()); err != nil {
		t.Fatal(err)
	}
	close(release)
	if got := <-old; len(got) != 1 || got[0].Records != 70 {
		t.Errorf("the older Update returned %+v, want its own measurement", got)
	}
	if last, at := m.LastAt(); len(last) != 1 || last[0].Records != 0 || at.IsZero() {
		t.Errorf("Last() = %+v at %v, want the newer measurement (0 records)", last, at)
	}
}
