// SPDX-License-Identifier: Apache-2.0

package consumers

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/messages"
)

// BenchmarkDeadlineCheck is what the runtime adds per record to honour
// deadlines (issue 26): reading the deadline header among a gateway
// request's headers (traceparent, the pathway, the correlation value and
// the deadline) and comparing it with now. "none" is a record without one.
func BenchmarkDeadlineCheck(b *testing.B) {
	now := time.Now()
	headers := []kgo.RecordHeader{
		{Key: "traceparent", Value: []byte("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")},
		{Key: "kretrieve-pathway", Value: make([]byte, 25)},
		{Key: messages.HeaderCorrelation, Value: []byte("3f9c2a7b1d4e")},
	}
	for _, c := range []struct {
		name string
		r    *kgo.Record
	}{
		{"none", &kgo.Record{Headers: headers}},
		{"with", &kgo.Record{Headers: append(headers[:3:3], kgo.RecordHeader{Key: messages.HeaderDeadline, Value: []byte(messages.FormatDeadline(now.Add(time.Second)))})}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			expired := 0
			for b.Loop() {
				if d := readDeadline(c.r, now); !d.IsZero() && now.After(d) {
					expired++
				}
			}
			if expired != 0 {
				b.Fatal("expired")
			}
		})
	}
}
