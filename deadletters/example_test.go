// SPDX-License-Identifier: Apache-2.0

package deadletters_test

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/deadletters"
)

// A dead letter as the workers write it parses into a Letter; the garbled
// attempts header is left at zero.
func ExampleFromRecord() {
	rec := &kgo.Record{
		Topic: "retrieval.requests.dlq", Partition: 0, Offset: 12,
		Key: []byte("01JDQ3Z7W8X2K4M6N8P0R2T4V6"),
		Headers: []kgo.RecordHeader{
			{Key: "traceparent", Value: []byte("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")},
			{Key: "kretrieve.dlq.reason", Value: []byte("invalid request: query: required")},
			{Key: "kretrieve.dlq.error_type", Value: []byte("permanent")},
			{Key: "kretrieve.dlq.original_topic", Value: []byte("retrieval.requests")},
			{Key: "kretrieve.dlq.original_partition", Value: []byte("3")},
			{Key: "kretrieve.dlq.original_offset", Value: []byte("1041")},
			{Key: "kretrieve.dlq.attempts", Value: []byte("one")},
		},
	}
	l := deadletters.FromRecord(rec)
	target, _ := l.Target()
	fmt.Printf("%s/%d@%d -> %s\n", l.OriginalTopic, l.OriginalPartition, l.OriginalOffset, target)
	fmt.Println(l.ErrorType, l.Attempts, l.Reason)
	fmt.Println(l.TraceID)
	// Output:
	// retrieval.requests/3@1041 -> retrieval.requests
	// permanent 0 invalid request: query: required
	// 4bf92f3577b34da6a3ce929d0e0e4736
}
