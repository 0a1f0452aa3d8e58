// SPDX-License-Identifier: Apache-2.0

package peers

import (
	"context"

	"github.com/DataDog/dd-trace-go/v2/datastreams"
	"github.com/DataDog/dd-trace-go/v2/datastreams/options"
	"github.com/DataDog/dd-trace-go/v2/ddtrace/tracer"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/bench/relay"
)

// PathwayHeader is the record header Data Streams Monitoring carries its
// pathway in (datastreams.InjectToBase64Carrier).
const PathwayHeader = "dd-pathway-ctx-base64"

// DSM is the relay instrumented with Data Streams Monitoring checkpoints
// as dd-trace-go's franz-go contrib (contrib/twmb/franz-go) sets them,
// without its spans: on every record produced (producer to A, worker to
// B), a checkpoint direction:out, topic, type:kafka from the pathway of
// the record's headers, or else of its context, injected back into its
// headers; on every record fetched (worker from A, consumer from B), a
// checkpoint direction:in, topic, type:kafka (and group: for the worker)
// from the pathway of its headers, injected back into them, and for the
// worker the group's commit offset (tracer.TrackKafkaCommitOffset). The
// payload size of each checkpoint is the record's key, value and headers,
// as the contrib counts them.
//
// Where the contrib leaves the consumed pathway in the record's headers
// only, DSM also puts it in the record's context, which the worker
// produces to B with, so the worker's out checkpoint chains to its in
// checkpoint without decoding the header again: what a user of the
// contrib would write by hand costs one decode more per record.
//
// The global tracer must run with Data Streams enabled (StartTracer).
func DSM() relay.Instrumentation {
	return func(role string) relay.Stage {
		h := dsmHooks{}
		if role == relay.RoleWorker {
			h.group = relay.Group
		}
		s := relay.Stage{Process: func(ctx context.Context, r *kgo.Record, _ int64, handle func(context.Context)) {
			if r.Context != nil {
				ctx = r.Context
			}
			handle(ctx)
		}}
		switch role {
		case relay.RoleProducer:
			s.Hooks = []kgo.Hook{dsmProduce{}}
		case relay.RoleWorker:
			s.Hooks = []kgo.Hook{dsmProduce{}, h}
		default:
			s.Hooks = []kgo.Hook{h}
		}
		return s
	}
}

// dsmProduce sets the out checkpoint of each record produced.
type dsmProduce struct{}

// OnProduceRecordBuffered implements kgo.HookProduceRecordBuffered.
func (dsmProduce) OnProduceRecordBuffered(r *kgo.Record) {
	base := r.Context
	if base == nil {
		base = context.Background()
	}
	c := headerCarrier{r}
	ctx, ok := tracer.SetDataStreamsCheckpointWithParams(
		datastreams.ExtractFromBase64Carrier(base, c),
		options.CheckpointParams{PayloadSize: recordSize(r)},
		"direction:out", "topic:"+r.Topic, "type:kafka",
	)
	if !ok {
		return
	}
	datastreams.InjectToBase64Carrier(ctx, c)
}

// dsmHooks sets the in checkpoint of each record fetched.
type dsmHooks struct{ group string }

// OnFetchRecordUnbuffered implements kgo.HookFetchRecordUnbuffered.
func (h dsmHooks) OnFetchRecordUnbuffered(r *kgo.Record, polled bool) {
	if !polled {
		return // discarded before reaching the handler, as the contrib
	}
	edges := []string{"direction:in", "topic:" + r.Topic, "type:kafka"}
	if h.group != "" {
		edges = append(edges, "group:"+h.group)
	}
	c := headerCarrier{r}
	ctx, ok := tracer.SetDataStreamsCheckpointWithParams(
		datastreams.ExtractFromBase64Carrier(context.Background(), c),
		options.CheckpointParams{PayloadSize: recordSize(r)},
		edges...,
	)
	if !ok {
		return
	}
	datastreams.InjectToBase64Carrier(ctx, c)
	r.Context = ctx
	if h.group != "" {
		tracer.TrackKafkaCommitOffset(h.group, r.Topic, r.Partition, r.Offset)
	}
}

// recordSize is the payload size of a checkpoint: key, value and headers.
func recordSize(r *kgo.Record) int64 {
	size := int64(len(r.Key) + len(r.Value))
	for _, h := range r.Headers {
		size += int64(len(h.Key) + len(h.Value))
	}
	return size
}

// headerCarrier reads and writes a record's headers for the datastreams
// propagation, as the contribs' carriers do: Set replaces a header of the
// same key or appends one.
type headerCarrier struct{ r *kgo.Record }

// ForeachKey implements datastreams.TextMapReader.
func (c headerCarrier) ForeachKey(handler func(key, val string) error) error {
	for _, h := range c.r.Headers {
		if err := handler(h.Key, string(h.Value)); err != nil {
			return err
		}
	}
	return nil
}

// Get implements datastreams.TextMapReaderByKey (the extraction's fast
// path, as the confluent-kafka-go contrib's carrier): the last header of
// key.
func (c headerCarrier) Get(key string) (string, bool) {
	for i := len(c.r.Headers) - 1; i >= 0; i-- {
		if c.r.Headers[i].Key == key {
			return string(c.r.Headers[i].Value), true
		}
	}
	return "", false
}

// Set implements datastreams.TextMapWriter.
func (c headerCarrier) Set(key, val string) {
	for i, h := range c.r.Headers {
		if h.Key == key {
			c.r.Headers[i].Value = []byte(val)
			return
		}
	}
	c.r.Headers = append(c.r.Headers, kgo.RecordHeader{Key: key, Value: []byte(val)})
}
