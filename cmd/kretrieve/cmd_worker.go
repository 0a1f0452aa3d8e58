// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/kretrieve/kretrieve/consumers"
	"github.com/kretrieve/kretrieve/consumers/retrieval"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/lag"
	"github.com/kretrieve/kretrieve/pipeline"
)

// workerCommands are "kretrieve STAGE", one per stage of the binary's
// pipeline (pipeline.DefaultStages).
func (e *cli) workerCommands() []*cobra.Command {
	var cmds []*cobra.Command
	for _, st := range defaultTopology().Stages {
		role := st.Name
		cmds = append(cmds, e.command(&cobra.Command{
			Use:     role,
			GroupID: "pipeline",
			Short:   fmt.Sprintf("Worker of stage %s (group %q)", role, st.Group),
			Long: fmt.Sprintf(`Run a %s worker until interrupted: it consumes %s in consumer group
%q, processes each record and publishes to the next topic. Records that
fail for good go to the dead-letter topic. Start as many as partitions allow.`, role, st.Input, st.Group),
			Example: fmt.Sprintf(`  kretrieve %s --brokers kafka:9092
  KRETRIEVE_BROKERS=kafka:9092 kretrieve %s --concurrency 12`, role, role),
			Args: noArgs,
		}, func(s *settings) (func([]string) error, func(context.Context) error) {
			var c workerConfig
			return c.flags(s, role), func(ctx context.Context) error { return runWorker(ctx, role, c, e.stderr) }
		}))
	}
	return cmds
}

// workerConfig configures the worker commands, one per pipeline stage.
type workerConfig struct {
	commonConfig
	worker          consumers.Config
	shutdownTimeout time.Duration
	index           string
	healthListen    string
	recordQueryText bool
	recordDocuments bool
	searchTimeout   time.Duration
	lagInterval     time.Duration
	pathways        pathwaysFlags
}

// declareRecordQueryText declares --record-query-text.
func declareRecordQueryText(s *settings, p *bool) {
	s.boolean(p, "record-query-text", false, "record query text on search spans (debugging only: queries are user data)")
}

// declareRecordDocuments declares --record-retrieval-documents.
func declareRecordDocuments(s *settings, p *bool) {
	s.boolean(p, "record-retrieval-documents", false, "record the documents found (id and score) on search spans as gen_ai.retrieval.documents (debugging only: they tell what was searched for)")
}

// declareSearchTimeout declares the flag bounding one search of the
// default pipeline's first stage (pipeline.Config.SearchTimeout).
func declareSearchTimeout(s *settings, p *time.Duration) {
	s.duration(p, "search-timeout", retrieval.DefaultSearchTimeout, "longest one search may take; a search that takes longer is run once more, and a request whose search takes longer twice is dead-lettered (0: no limit)")
}

// searchTimeout checks --search-timeout and returns it as
// retrieval.Config.SearchTimeout, where no limit is negative.
func searchTimeout(d time.Duration) (time.Duration, error) {
	switch {
	case d < 0:
		return 0, errors.New("search-timeout: must not be negative (0: no limit)")
	case d == 0:
		return -1, nil
	case d < retrieval.MinSearchTimeout:
		return 0, fmt.Errorf("search-timeout: %v is below %v: a burst of slow queries would dead-letter innocent requests as permanent failures (0: no limit)", d, retrieval.MinSearchTimeout)
	}
	return d, nil
}

// flags declares the flags of the worker of stage role on s and returns
// the check of their values, run once they are parsed. The first stage's
// worker, which reads what request producers publish and searches the
// index (pipeline.DefaultStages), also takes the search and inbound trace
// context flags.
func (c *workerConfig) flags(s *settings, role string) (check func(args []string) error) {
	top := defaultTopology()
	st, _ := top.Stage(role)
	first := role == top.Stages[0].Name
	c.declare(s, role, kafkaclient.DefaultBrokers)
	s.str(&c.worker.Group, "group", st.Group, "consumer group")
	s.integer(&c.worker.Concurrency, "concurrency", consumers.DefaultConcurrency, "records processed at once, each of a different partition (a partition's records are processed in order)")
	s.integer(&c.worker.MaxPollRecords, "max-poll-records", consumers.DefaultMaxPollRecords, "records taken per poll, and the most queued per partition (a full queue pauses its fetching)")
	fetchMax := consumers.DefaultFetchMaxBytes
	s.integer(&fetchMax, "fetch-max-bytes", fetchMax, "largest fetch response buffered per broker")
	s.integer(&c.worker.Attempts, "attempts", consumers.DefaultAttempts, "attempts for a transient error before dead-lettering")
	s.duration(&c.worker.RetryBackoff, "retry-backoff", consumers.DefaultRetryBackoff, "first retry delay (doubles up to "+consumers.DefaultMaxRetryBackoff.String()+")")
	s.duration(&c.worker.SessionTimeout, "session-timeout", consumers.DefaultSessionTimeout, "how long the group waits for a crashed member (no heartbeat) before reassigning its partitions")
	s.duration(&c.worker.RebalanceTimeout, "rebalance-timeout", consumers.DefaultRebalanceTimeout, "how long a rebalance waits for every member to rejoin; a member killed mid-rebalance is dropped after it (the group uses its members' largest)")
	s.str(&c.worker.InstanceID, "instance-id", "", "static group membership under this id, unique in the group and stable across restarts (a pod's name): a restarted worker takes its partitions back at once; a stopped one keeps them until --session-timeout (empty: dynamic member)")
	s.duration(&c.worker.HeartbeatInterval, "heartbeat-interval", consumers.DefaultHeartbeatInterval, "how often the worker heartbeats, and so how soon it joins a rebalance (at most a third of --session-timeout)")
	s.integer(&c.worker.MaxRecordBytes, "max-record-bytes", consumers.DefaultMaxRecordBytes, "largest record (key + value) processed; larger ones are dead-lettered")
	s.integer(&c.worker.MaxHeaders, "max-headers", consumers.DefaultMaxHeaders, "most headers a record may carry; more are dead-lettered")
	s.integer(&c.worker.MaxHeaderBytes, "max-header-bytes", consumers.DefaultMaxHeaderBytes, "largest total of a record's header keys and values; more is dead-lettered")
	s.integer(&c.worker.MaxDeadLetterBytes, "max-dead-letter-bytes", consumers.DefaultMaxDeadLetterBytes, "largest dead letter (at least 4096); a bigger one keeps the start of the value and says so in kretrieve.dlq.truncated")
	s.duration(&c.shutdownTimeout, "shutdown-timeout", consumers.DefaultCommitTimeout, "bound on each step of a graceful stop: finishing the batch, committing and leaving the group, flushing spans")
	declareIndex(s, &c.index)
	s.str(&c.healthListen, "health-listen", "", "serve GET /healthz, /readyz (ready once the index has caught up with the documents topic) and /v1/index (its position and digest) on ADDR, e.g. :8081 (empty: off)")
	s.duration(&c.lagInterval, "lag-interval", lag.DefaultInterval, "how often to measure and export this group's lag (0: off)")
	c.pathways.declare(s)
	if first {
		declareRecordQueryText(s, &c.recordQueryText)
		declareRecordDocuments(s, &c.recordDocuments)
		declareSearchTimeout(s, &c.searchTimeout)
		c.declareRetrievalTrustBoundary(s)
		c.declareTrustedBaggage(s)
	}
	c.declareBaggageAttributes(s)
	c.declareMetricsListen(s)
	return func(args []string) error {
		c.worker.CommitTimeout = c.shutdownTimeout
		c.worker.FetchMaxBytes = int32(min(max(fetchMax, 0), 1<<30))
		if st, ok := c.topology().Stage(role); ok {
			c.worker.Topic = st.Input
		}
		var errTimeout error
		c.searchTimeout, errTimeout = searchTimeout(c.searchTimeout)
		return errors.Join(c.validate(), validateBrokers(c.brokers), c.worker.Validate(), c.pathways.validate(), errTimeout)
	}
}

// runWorker runs a worker of the stage named role until ctx is done.
func runWorker(ctx context.Context, role string, cfg workerConfig, stderr io.Writer) (err error) {
	return command{role: role, configure: func(pc *pipeline.Config) {
		pc.Worker = cfg.worker
		pc.RecordQueryText = cfg.recordQueryText
		pc.RecordDocuments = cfg.recordDocuments
		pc.SearchTimeout = cfg.searchTimeout
	}, connect: ensureTopicsWhenReachable, flushTimeout: cfg.shutdownTimeout}.run(ctx, cfg.commonConfig, stderr, func(comp *component, p *pipeline.Pipeline) error {
		wi, err := openWorkerIndex(ctx, p, role, cfg.index, comp.logger)
		if err != nil {
			return err
		}
		defer wi.Close()
		if err := wi.serveHealth(ctx, cfg.healthListen, comp.logger); err != nil {
			return err
		}
		// Published from the start, so that a worker catching up is seen
		// doing so; stopped after the worker has drained and committed,
		// so that its last window holds its last records.
		defer publishPathways(ctx, cfg.pathways, p, comp, wi.feeds)()
		return wi.while(ctx, comp.logger, func(ctx context.Context) error {
			return runStageWorker(ctx, role, cfg, comp, p, wi)
		})
	})
}

// runStageWorker runs the worker of stage role over wi until ctx is done.
func runStageWorker(ctx context.Context, role string, cfg workerConfig, comp *component, p *pipeline.Pipeline, wi *workerIndex) error {
	w, err := p.NewWorker(role, wi.idx)
	if err != nil {
		return err
	}
	if cfg.lagInterval > 0 {
		// Every worker of a group exports the group's lag; the series carry
		// the worker's resource (service.instance.id), so take their max.
		m, err := lag.NewMonitor(kafkaOptions(p, nil), lag.MonitorConfig{Groups: []string{cfg.worker.Group}, Interval: cfg.lagInterval},
			lag.WithMeterProvider(comp.telemetry.MeterProvider), lag.WithLogger(comp.logger))
		if err != nil {
			return err
		}
		defer m.Close()
		go func() { _ = m.Run(ctx) }()
	}
	return w.Run(ctx)
}
