// SPDX-License-Identifier: Apache-2.0

package consumers

import (
	"errors"
	"fmt"
	"time"
)

// Config configures a Worker. A zero field takes its default, given in
// its comment and exported as a Default* constant (DefaultConfig returns
// them all).
type Config struct {
	// Group is the consumer group. Required.
	Group string
	// Topic is the input topic. Required.
	Topic string
	// Concurrency is how many records (each of a different partition) are
	// processed at once; records of one partition are always processed in
	// order, one at a time, and partitions take turns. Default: 6
	// (DefaultConcurrency).
	Concurrency int
	// MaxPollRecords caps the records taken from one poll and the records
	// queued for one partition: a partition whose queue is full is not
	// fetched until half of it is processed. Offsets are committed every
	// 100 ms, or as soon as half of MaxPollRecords records were
	// acknowledged. Default: 500 (DefaultMaxPollRecords).
	MaxPollRecords int
	// Attempts is how many times a transient handler error is tried in all
	// before the record is dead-lettered (RetryConfig.Attempts of the
	// default chain). Default: 3 (DefaultAttempts).
	Attempts int
	// RetryBackoff is the first retry's delay (RetryConfig.MinBackoff of
	// the default chain); it doubles up to DefaultMaxRetryBackoff (2 s).
	// Default: 100 ms (DefaultRetryBackoff).
	RetryBackoff time.Duration
	// CommitTimeout bounds each of the two steps of a stop: finishing
	// the batch (the records polled, in flight and queued, and their
	// outputs' acknowledgements), then committing and leaving the group.
	// It also bounds every periodic commit. Default: 10 s
	// (DefaultCommitTimeout).
	CommitTimeout time.Duration
	// SessionTimeout is how long the group waits for a member that stopped
	// heart-beating (a crashed worker) before giving its partitions to
	// others. It must lie within the broker's group.min.session.timeout.ms
	// and group.max.session.timeout.ms (Kafka: 6 s to 30 min). Default:
	// DefaultSessionTimeout.
	SessionTimeout time.Duration
	// RebalanceTimeout is how long a rebalance waits for every member to
	// rejoin and sync; a member that does not (one killed mid-rebalance)
	// is removed only then, so it bounds the stall that crashes during a
	// rebalance add. A member must finish its revoked partitions (their
	// records in flight, outputs and commit) within it, or it is dropped
	// and its partitions are redelivered: so a revoke waits for its
	// outputs for RebalanceTimeout less HeartbeatInterval at most, and
	// leaves the records whose outputs are still unacknowledged to the
	// next owner. The group uses its members' largest value. Default:
	// DefaultRebalanceTimeout.
	RebalanceTimeout time.Duration
	// HeartbeatInterval is how often the member heart-beats, which is also
	// how soon it learns that a rebalance began. It must be less than
	// SessionTimeout, and at most a third of it is advised (two lost
	// heartbeats are then not a lost session). Default:
	// DefaultHeartbeatInterval.
	HeartbeatInterval time.Duration
	// InstanceID, when set, makes the worker a static member (KIP-345)
	// under this id, which must be unique in the group and stable across
	// restarts (a pod's name): a worker restarted with it takes over its
	// predecessor's place and partitions at once, without waiting for the
	// dead member's session or a rebalance of the others. A static member
	// does not leave the group when it stops: its partitions wait for its
	// restart or SessionTimeout. Default: "" (a dynamic member).
	InstanceID string
	// FetchMaxBytes caps one fetch response. franz-go buffers at most one
	// fetch per broker until it is polled, so the records held by a worker
	// are bounded by brokers × FetchMaxBytes plus, per partition, its
	// queue (MaxPollRecords, and one more poll's worth before fetching it
	// pauses). Default: 16 MiB (DefaultFetchMaxBytes).
	FetchMaxBytes int32
	// MaxRecordBytes caps a consumed record's key plus value. A larger
	// record is dead-lettered without being decoded. Default: 1 MiB
	// (DefaultMaxRecordBytes).
	MaxRecordBytes int
	// MaxHeaders caps a consumed record's header count. A record with more
	// is dead-lettered without being decoded. Default: 64
	// (DefaultMaxHeaders).
	MaxHeaders int
	// MaxHeaderBytes caps the size of a consumed record's header keys and
	// values together. A record with more is dead-lettered without being
	// decoded. Default: 64 KiB (DefaultMaxHeaderBytes).
	MaxHeaderBytes int
	// MaxDeadLetterBytes caps a dead letter's estimated size. A dead
	// letter that would be larger (the original record plus the reason
	// headers) keeps what fits of the original and gets a
	// kretrieve.dlq.truncated header; one that the broker still refuses as
	// too large is sent again with only its dead-letter headers and key. It
	// must stay below the producer's batch limit (franz-go's
	// ProducerBatchMaxBytes, 1,000,012 by default) and the dead-letter
	// topics' max.message.bytes (Kafka's default 1,048,588), and be at
	// least 4096. Default: 1,000,000 (DefaultMaxDeadLetterBytes).
	MaxDeadLetterBytes int
}

// The processing defaults (see Config).
const (
	DefaultConcurrency    = 6
	DefaultMaxPollRecords = 500
	DefaultCommitTimeout  = 10 * time.Second
	DefaultFetchMaxBytes  = 16 << 20
)

// The group defaults (see Config), for a latency-sensitive pipeline: a
// crashed worker that is restarted at once stalls its partitions for
// about DefaultRebalanceTimeout, and crashes spread over T at most T +
// rebalance + session timeout + heartbeat interval (measured on the
// development broker: docs/operations.md). The rebalance timeout is above
// the slowest record a revoke waits for (three 1 s searches and their
// backoff, 3.3 s) plus one heartbeat, and below the session timeout: a
// rebalance that outlasts a member's session drops that member too on the
// development broker. The session timeout is Kafka's former default and
// above the 6 s minimum brokers allow by default.
const (
	DefaultSessionTimeout    = 10 * time.Second
	DefaultRebalanceTimeout  = 5 * time.Second
	DefaultHeartbeatInterval = time.Second
)

// minDeadLetterBytes is the smallest MaxDeadLetterBytes accepted.
const minDeadLetterBytes = 4096

// DefaultConfig returns a Config holding every default (Group and Topic,
// which have none, are empty).
func DefaultConfig() Config {
	return Config{
		Concurrency:        DefaultConcurrency,
		MaxPollRecords:     DefaultMaxPollRecords,
		Attempts:           DefaultAttempts,
		RetryBackoff:       DefaultRetryBackoff,
		CommitTimeout:      DefaultCommitTimeout,
		SessionTimeout:     DefaultSessionTimeout,
		RebalanceTimeout:   DefaultRebalanceTimeout,
		HeartbeatInterval:  DefaultHeartbeatInterval,
		FetchMaxBytes:      DefaultFetchMaxBytes,
		MaxRecordBytes:     DefaultMaxRecordBytes,
		MaxHeaders:         DefaultMaxHeaders,
		MaxHeaderBytes:     DefaultMaxHeaderBytes,
		MaxDeadLetterBytes: DefaultMaxDeadLetterBytes,
	}
}

// withDefaults returns c with its zero fields set from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	orDefault(&c.Concurrency, d.Concurrency)
	orDefault(&c.MaxPollRecords, d.MaxPollRecords)
	orDefault(&c.Attempts, d.Attempts)
	orDefault(&c.RetryBackoff, d.RetryBackoff)
	orDefault(&c.CommitTimeout, d.CommitTimeout)
	orDefault(&c.FetchMaxBytes, d.FetchMaxBytes)
	orDefault(&c.SessionTimeout, d.SessionTimeout)
	orDefault(&c.RebalanceTimeout, d.RebalanceTimeout)
	orDefault(&c.HeartbeatInterval, d.HeartbeatInterval)
	orDefault(&c.MaxRecordBytes, d.MaxRecordBytes)
	orDefault(&c.MaxHeaders, d.MaxHeaders)
	orDefault(&c.MaxHeaderBytes, d.MaxHeaderBytes)
	orDefault(&c.MaxDeadLetterBytes, d.MaxDeadLetterBytes)
	return c
}

// orDefault sets *v to def when it is zero.
func orDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// limits returns the per-record Limits of c.
func (c Config) limits() Limits {
	return Limits{MaxRecordBytes: c.MaxRecordBytes, MaxHeaders: c.MaxHeaders, MaxHeaderBytes: c.MaxHeaderBytes}
}

// Validate reports configuration errors.
func (c Config) Validate() error {
	var errs []error
	if c.Group == "" {
		errs = append(errs, errors.New("group: required"))
	}
	if c.Topic == "" {
		errs = append(errs, errors.New("topic: required"))
	}
	if c.Concurrency < 0 || c.MaxPollRecords < 0 || c.Attempts < 0 || c.RetryBackoff < 0 || c.CommitTimeout < 0 || c.FetchMaxBytes < 0 {
		errs = append(errs, errors.New("concurrency, max poll records, attempts, retry backoff, commit timeout and fetch max bytes must not be negative"))
	}
	if c.MaxRecordBytes < 0 || c.MaxHeaders < 0 || c.MaxHeaderBytes < 0 || c.MaxDeadLetterBytes < 0 {
		errs = append(errs, errors.New("max record bytes, max headers, max header bytes and max dead letter bytes must not be negative"))
	}
	if c.SessionTimeout < 0 || c.RebalanceTimeout < 0 || c.HeartbeatInterval < 0 {
		errs = append(errs, errors.New("session timeout, rebalance timeout and heartbeat interval must not be negative"))
	}
	if d := c.withDefaults(); d.HeartbeatInterval >= d.SessionTimeout {
		errs = append(errs, fmt.Errorf("heartbeat interval %v: must be less than the session timeout %v (a third of it at most is advised)", d.HeartbeatInterval, d.SessionTimeout))
	}
	if c.MaxDeadLetterBytes > 0 && c.MaxDeadLetterBytes < minDeadLetterBytes {
		errs = append(errs, fmt.Errorf("max dead letter bytes: must be at least %d", minDeadLetterBytes))
	}
	return errors.Join(errs...)
}
