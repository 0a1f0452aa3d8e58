// SPDX-License-Identifier: Apache-2.0

package dlq

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/deadletters"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/otelnames"
)

// ScopeName is the instrumentation scope of the replay spans.
const ScopeName = "github.com/kretrieve/kretrieve/ops/dlq"

// DefaultReplayGroup is the consumer group that records replay progress,
// declared with kretrieve's other Kafka names in package messages.
const DefaultReplayGroup = messages.DefaultReplayGroup

// commitTimeout bounds each commit; commits run even after ctx is done, so
// that what was republished is not republished again.
const commitTimeout = 10 * time.Second

// maxReasonAttrBytes caps the reason on a span, as the dead-letter writer
// caps the header: a hand-written header may be longer.
const maxReasonAttrBytes = 1024

// capBytes cuts s to at most n bytes without splitting a UTF-8 sequence.
func capBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// ReplayConfig configures Replay.
type ReplayConfig struct {
	// Topics are the dead-letter topics to replay. Required.
	Topics []string
	// Targets are the topics letters may be replayed to, as the pipeline's
	// topology knows them: the letters of X.dlq are replayed to X, which
	// must be one of them, whatever the letters' headers say. Default:
	// DefaultReplayTargets.
	Targets []string
	// Group is the consumer group whose committed offsets record which dead
	// letters were dealt with. It is never joined: offsets are committed
	// as an admin would, so two replays with the same group must not run
	// at once. Default: DefaultReplayGroup.
	Group string
	// Reason, when set, replays only letters whose reason contains it
	// (case-sensitive). Default: any reason.
	Reason string
	// ErrorType, when set, replays only letters with exactly this error
	// type (deadletters.ErrorTypePermanent or deadletters.ErrorTypeTransient).
	// Default: any.
	ErrorType string
	// DryRun reports what would be replayed, starting from the group's
	// committed offsets, but publishes and commits nothing. Default: false.
	DryRun bool
	// Limit is the most letters to replay; 0 means no limit. Default: 0.
	Limit int
	// CommitEvery is the most dead letters read between two commits of the
	// group's offsets: a replay killed mid-way republishes at most this
	// many letters again. Default: DefaultReplayCommitEvery.
	CommitEvery int
}

// DefaultReplayCommitEvery is ReplayConfig.CommitEvery's default.
const DefaultReplayCommitEvery = 500

// DefaultReplayTargets returns ReplayConfig.Targets' default: the default
// pipeline topics and documents topic (messages.DefaultTopics).
func DefaultReplayTargets() []string {
	t := messages.DefaultTopics()
	return []string{t.Requests, t.Candidates, t.Results, t.Documents}
}

// targets maps each of c.Topics to the topic its letters are replayed to:
// X.dlq to X, one of c.Targets (DefaultReplayTargets when empty).
func (c ReplayConfig) targets() (map[string]string, error) {
	allowed := c.Targets
	if len(allowed) == 0 {
		allowed = DefaultReplayTargets()
	}
	out := make(map[string]string, len(c.Topics))
	var errs []error
	for _, dlqTopic := range c.Topics {
		target := strings.TrimSuffix(dlqTopic, messages.DLQSuffix)
		if target == dlqTopic || !slices.Contains(allowed, target) {
			errs = append(errs, fmt.Errorf("%s is not the dead-letter topic of a pipeline topic (%s): its letters have nowhere to go back to",
				dlqTopic, strings.Join(allowed, ", ")))
			continue
		}
		out[dlqTopic] = target
	}
	return out, errors.Join(errs...)
}

// checkTarget returns the topic letter l of a dead-letter topic is
// replayed to: target, that topic's source. A letter whose original-topic
// header names another topic is refused: the header is the letter's, and
// anyone who can write to the dead-letter topic writes it.
func checkTarget(l deadletters.Letter, target string) (string, error) {
	if l.OriginalTopic != "" && l.OriginalTopic != target {
		return "", fmt.Errorf("refused: the letter's original-topic header names %+q, but %s is the dead-letter topic of %s",
			capBytes(l.OriginalTopic, messages.MaxTopicLen), l.Topic, target)
	}
	return target, nil
}

// Validate reports configuration errors.
func (c ReplayConfig) Validate() error {
	var errs []error
	if len(c.Topics) == 0 {
		errs = append(errs, errors.New("topics: at least one is required"))
	}
	for _, t := range c.Topics {
		if strings.TrimSpace(t) == "" {
			errs = append(errs, errors.New("topics: empty name"))
		}
	}
	for _, t := range c.Targets {
		if strings.TrimSpace(t) == "" {
			errs = append(errs, errors.New("targets: empty name"))
		}
	}
	if c.Limit < 0 {
		errs = append(errs, errors.New("limit: must not be negative"))
	}
	if c.CommitEvery < 0 {
		errs = append(errs, errors.New("commit every: must not be negative"))
	}
	return errors.Join(errs...)
}

func (c ReplayConfig) matches(l deadletters.Letter) bool {
	return strings.Contains(l.Reason, c.Reason) && (c.ErrorType == "" || l.ErrorType == c.ErrorType)
}

// ReplayResult is what a Replay did.
type ReplayResult struct {
	// Replayed counts the letters republished and acknowledged (with
	// DryRun: the letters that would be republished).
	Replayed int
	// Skipped counts the letters the Reason and ErrorType filters passed
	// over. They are committed like replayed ones: the group will not offer
	// them again (list them, or replay them with another group).
	Skipped int
	// Failed counts the letters that could not be republished: see the
	// error Replay returns.
	Failed int
	// Letters are the replayed letters (with DryRun: those that would be),
	// in the order they were read: by partition, in offset order.
	Letters []ReplayedLetter
}

// ReplayedLetter is a dead letter and where it was republished.
type ReplayedLetter struct {
	deadletters.Letter
	// Target is the topic the letter was (or would be) republished to.
	Target string
	// TargetPartition and TargetOffset locate the republished record; -1
	// in a dry run.
	TargetPartition int32
	TargetOffset    int64
	// ReplayTraceID is the hex id of the new trace the replay started ("" in
	// a dry run or when tracing is off). Letter.TraceID is the old one.
	ReplayTraceID string
}

// Replay republishes the dead letters of cfg.Topics to the topic each
// dead-letter topic belongs to (X.dlq to X, one of cfg.Targets; a topic of
// cfg.Topics that is not X.dlq of a target is an error before anything is
// replayed), from the group's committed offsets (or
// the start of each partition) up to the end offsets as of the call: it
// does not wait for letters written after it started.
//
// The republished record keeps key, value and the original headers except
// the kretrieve.dlq.* ones and the old traceparent and tracestate; baggage is
// kept. Each replay is a root span "replay <dlq topic>" (INTERNAL) with a link
// to the trace context found in the dead letter's headers, and the record is
// produced in it, so its "send <topic>" span is the replay span's child.
//
// Offsets are committed to the group every CommitEvery letters, each
// partition up to the last letter whose republished record the broker
// acknowledged (or that was skipped): a replay killed mid-way republishes
// at most CommitEvery letters again. A record that is not acknowledged stops
// its partition there: the next Replay starts with it again, so letters of
// that partition republished after it since the last commit may be
// republished twice (at-least-once). A letter whose original-topic header
// names another topic than X (a letter anyone who can write to the
// dead-letter topic may have written, aiming at a topic they cannot write
// to) is refused, as is a truncated letter: counted as failed and committed
// past, so it never blocks its partition; it stays in the dead-letter topic.
//
// Committed offsets of a group that has no members expire after the broker's
// offsets.retention.minutes (7 days by default): a later Replay with that
// group then starts again from the start of each partition.
//
// clientOpts are the connection options (see kafkaclient.Options); tracer
// creates the send spans and injects trace context, and Replay installs it
// on its client with kgo.WithHooks, so clientOpts must not hold it already.
// A nil tracer is kafkatrace.New() (the OpenTelemetry globals). Replay
// returns what it did so far together with any error, and the context's
// error when ctx is done before the end offsets are reached.
func Replay(ctx context.Context, clientOpts []kgo.Opt, tracer *kafkatrace.Tracer, cfg ReplayConfig, opts ...Option) (ReplayResult, error) {
	var res ReplayResult
	if err := cfg.Validate(); err != nil {
		return res, fmt.Errorf("replay config: %w", err)
	}
	if cfg.Group == "" {
		cfg.Group = DefaultReplayGroup
	}
	o := newOptions(opts)
	if tracer == nil {
		tracer = kafkatrace.New()
	}

	admin, err := kgo.NewClient(clientOpts...)
	if err != nil {
		return res, fmt.Errorf("replay: %w", err)
	}
	defer admin.Close()
	adm := kadm.NewClient(admin)
	extents, err := listExtents(ctx, adm, cfg.Topics)
	if err != nil {
		return res, fmt.Errorf("replay: %w", err)
	}
	targets, err := cfg.targets()
	if err != nil {
		return res, fmt.Errorf("replay: %w", err)
	}
	committed, err := adm.FetchOffsetsForTopics(ctx, cfg.Group, cfg.Topics...)
	if errors.Is(err, kerr.GroupIDNotFound) {
		// Some brokers answer so for a group that never committed.
		committed, err = nil, nil
	}
	if err != nil {
		return res, fmt.Errorf("replay: committed offsets of group %s: %w", cfg.Group, err)
	}
	for i, x := range extents {
		if c, ok := committed.Lookup(x.topic, x.partition); ok && c.Err == nil && c.At > x.from {
			extents[i].from = c.At
		}
	}
	rd, err := newReader(clientOpts, extents, kgo.WithHooks(tracer))
	if err != nil {
		return res, fmt.Errorf("replay: %w", err)
	}
	defer rd.close()

	rp := &replayer{
		cfg:     cfg,
		tracer:  tracer,
		spans:   o.tracerProvider.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL)),
		logger:  o.logger.With("group", cfg.Group),
		rd:      rd,
		adm:     adm,
		targets: targets,
		stopped: make(map[topicPartition]bool),
	}
	var errs []error
	for !rd.done() && !rp.limitReached() {
		batch, err := rd.poll(ctx)
		if err != nil {
			errs = append(errs, err)
			break
		}
		var commitErr *commitError
		for chunk := range rp.chunks(batch) {
			if err := rp.replayBatch(ctx, chunk, &res); err != nil {
				errs = append(errs, err)
				if errors.As(err, &commitErr) {
					break
				}
			}
		}
		if commitErr != nil {
			break
		}
	}
	rp.logger.InfoContext(ctx, "replay finished", "replayed", res.Replayed, "skipped", res.Skipped, "failed", res.Failed, "dry_run", cfg.DryRun)
	return res, errors.Join(errs...)
}

// replayer holds one Replay's state.
type replayer struct {
	cfg      ReplayConfig
	tracer   *kafkatrace.Tracer
	spans    trace.Tracer
	logger   *slog.Logger
	rd       *reader
	adm      *kadm.Client
	selected int // letters chosen for replay so far, for the limit
	// targets maps each dead-letter topic to the topic its letters go to.
	targets map[string]string
	// stopped are the partitions whose reading ended at a letter that was
	// not acknowledged: the rest of their poll must not be replayed.
	stopped map[topicPartition]bool
}

// chunks splits a poll into pieces of at most CommitEvery records, each
// replayed and committed before the next, leaving out the partitions
// stopped meanwhile. A poll may hold thousands of letters; committing once
// per poll let a killed replay republish all of them again.
func (rp *replayer) chunks(batch []partitionRecords) iter.Seq[[]partitionRecords] {
	n := rp.cfg.CommitEvery
	if n == 0 {
		n = DefaultReplayCommitEvery
	}
	return func(yield func([]partitionRecords) bool) {
		var chunk []partitionRecords
		size := 0
		for _, p := range batch {
			for recs := p.records; len(recs) > 0; {
				take := min(len(recs), n-size)
				if !rp.stopped[topicPartition{p.topic, p.partition}] {
					chunk = append(chunk, partitionRecords{p.topic, p.partition, recs[:take]})
					size += take
				}
				recs = recs[take:]
				if size == n {
					if !yield(chunk) {
						return
					}
					chunk, size = nil, 0
					// Partitions stopped by that chunk drop out of
					// the pieces still to come.
				}
			}
		}
		if len(chunk) > 0 {
			yield(chunk)
		}
	}
}

func (rp *replayer) limitReached() bool {
	return rp.cfg.Limit > 0 && rp.selected >= rp.cfg.Limit
}

// commitError is a failed commit: it ends the replay, since what follows
// could not be committed either.
type commitError struct{ err error }

func (e *commitError) Error() string { return e.err.Error() }
func (e *commitError) Unwrap() error { return e.err }

// item is one record of a poll and what became of it.
type item struct {
	rec       *kgo.Record
	replay    bool // matched the filters
	permanent bool // err is a bad target: commit past it
	out       ReplayedLetter
	err       error // set before acks are awaited, or by the produce callback
}

// replayBatch replays one poll's records, waits for every acknowledgement and
// commits each partition up to its first unacknowledged record.
func (rp *replayer) replayBatch(ctx context.Context, batch []partitionRecords, res *ReplayResult) error {
	parts := make([][]*item, len(batch))
	var acks sync.WaitGroup
outer:
	for i, p := range batch {
		for _, rec := range p.records {
			if rp.limitReached() {
				break outer
			}
			it := &item{rec: rec}
			parts[i] = append(parts[i], it)
			if rec.Attrs.IsControl() {
				continue
			}
			l := deadletters.FromRecord(rec)
			if !rp.cfg.matches(l) {
				continue
			}
			it.replay = true
			rp.selected++
			if l.Truncated != "" {
				// Republishing part of a record would hand the workers
				// something nobody sent.
				it.err, it.permanent = fmt.Errorf("truncated dead letter (%s kept of the original): not replayable, inspect it with kretrieve dlq list", l.Truncated), true
				continue
			}
			target, err := checkTarget(l, rp.targets[p.topic])
			if err != nil {
				it.err, it.permanent = err, true
				continue
			}
			it.out = ReplayedLetter{Letter: l, Target: target, TargetPartition: -1, TargetOffset: -1}
			if !rp.cfg.DryRun {
				rp.publish(ctx, it, &acks)
			}
		}
	}
	acks.Wait()

	var errs []error
	offsets := make(kadm.Offsets)
	for i, items := range parts {
		p := batch[i]
		stopped := false
		for _, it := range items {
			if it.err != nil {
				res.Failed++
				errs = append(errs, fmt.Errorf("%s partition %d offset %d: %w", p.topic, p.partition, it.rec.Offset, it.err))
				rp.logger.WarnContext(ctx, "dead letter not replayed", "topic", p.topic, "partition", p.partition, "offset", it.rec.Offset, "err", it.err)
				if !it.permanent && !stopped {
					// Not acknowledged: the next replay starts here.
					stopped = true
					rp.rd.stop(p.topic, p.partition)
					rp.stopped[topicPartition{p.topic, p.partition}] = true
				}
			} else if it.replay {
				res.Replayed++
				res.Letters = append(res.Letters, it.out)
			} else if !it.rec.Attrs.IsControl() {
				res.Skipped++
			}
			if !stopped {
				offsets.Add(kadm.Offset{Topic: p.topic, Partition: p.partition, At: it.rec.Offset + 1, LeaderEpoch: it.rec.LeaderEpoch})
			}
		}
	}
	if !rp.cfg.DryRun && len(offsets) > 0 {
		if err := rp.commit(ctx, offsets); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// publish starts the replay span of it and produces its record in it; the
// callback ends the span and records the outcome.
func (rp *replayer) publish(ctx context.Context, it *item, acks *sync.WaitGroup) {
	l := it.out.Letter
	// The old context becomes a link, never the parent; the baggage
	// travels on with the record.
	old := rp.tracer.Extract(context.Background(), it.rec)
	parent := baggage.ContextWithBaggage(ctx, baggage.FromContext(old))
	startOpts := []trace.SpanStartOption{
		trace.WithNewRoot(),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			semconv.MessagingSystemKafka,
			semconv.MessagingDestinationName(it.out.Target),
			otelnames.DLQTopic.String(l.Topic),
			otelnames.DLQPartition.Int(int(l.Partition)),
			otelnames.DLQOffset.Int64(l.Offset),
			otelnames.DLQReason.String(capBytes(l.Reason, maxReasonAttrBytes)),
			otelnames.DLQErrorType.String(l.ErrorType),
			otelnames.DLQAttempts.Int(l.Attempts),
		),
	}
	if remote := trace.SpanContextFromContext(old); remote.IsValid() {
		startOpts = append(startOpts, trace.WithLinks(trace.Link{SpanContext: remote}))
	}
	sctx, span := rp.spans.Start(parent, otelnames.ReplaySpan(l.Topic), startOpts...)
	// With pathways, the replay is a checkpoint of its own: the dead
	// letter's pathway continues through it on a pathway apart from the
	// original one.
	sctx = rp.tracer.CheckpointIn(sctx, it.rec, span.SpanContext())
	if sc := span.SpanContext(); sc.IsValid() {
		it.out.ReplayTraceID = sc.TraceID().String()
	}
	rec := &kgo.Record{
		Topic:   it.out.Target,
		Key:     l.Key,
		Value:   l.Value,
		Headers: replayHeaders(l.Headers),
		Context: sctx,
	}
	acks.Add(1)
	// Once produced, a record must be acknowledged (or fail) before its
	// offset can be committed, even if ctx is done meanwhile.
	rp.rd.client.Produce(context.WithoutCancel(ctx), rec, func(r *kgo.Record, err error) {
		defer acks.Done()
		if err != nil {
			// The send span records the produce error itself.
			it.err = fmt.Errorf("republish to %s: %w", it.out.Target, err)
			span.SetStatus(codes.Error, it.err.Error())
		} else {
			it.out.TargetPartition, it.out.TargetOffset = r.Partition, r.Offset
			rp.logger.DebugContext(sctx, "dead letter replayed", "topic", l.Topic, "partition", l.Partition, "offset", l.Offset,
				"target", r.Topic, "target_partition", r.Partition, "target_offset", r.Offset)
		}
		span.End()
	})
}

// commit commits offsets to the group, bounded by commitTimeout even when
// ctx is done.
func (rp *replayer) commit(ctx context.Context, offsets kadm.Offsets) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
	defer cancel()
	resps, err := rp.adm.CommitOffsets(cctx, rp.cfg.Group, offsets)
	if err == nil {
		err = resps.Error()
	}
	if err != nil {
		rp.logger.ErrorContext(ctx, "commit failed; replayed letters may be replayed again", "err", err)
		return &commitError{fmt.Errorf("commit to group %s: %w", rp.cfg.Group, err)}
	}
	return nil
}

// replayHeaders returns the headers of the republished record: the dead
// letter's headers without the kretrieve.dlq.* ones and without the old
// traceparent and tracestate (the send hook injects the replay's context)
// and without the caller's deadline (messages.HeaderDeadline: that caller
// is long gone, and the replay would only expire). Baggage and
// application headers are kept, in order.
func replayHeaders(hs []kgo.RecordHeader) []kgo.RecordHeader {
	out := make([]kgo.RecordHeader, 0, len(hs))
	for _, h := range hs {
		if strings.HasPrefix(h.Key, deadletters.HeaderPrefix) || h.Key == "traceparent" || h.Key == "tracestate" || h.Key == messages.HeaderDeadline {
			continue
		}
		out = append(out, h)
	}
	return out
}
