// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/kafkatrace"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/ops/status"
	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/pathwaytopic"
	"github.com/kretrieve/kretrieve/pipeline"
)

// pathwaysRefresh is how often `kretrieve pathways` redraws on a terminal
// when --watch does not say.
const pathwaysRefresh = 2 * time.Second

// pathwaysCatchUpTimeout bounds reading the aggregate topic once.
const pathwaysCatchUpTimeout = 15 * time.Second

// pathwaysFlags are the settings of a command that publishes its pathway
// aggregates.
type pathwaysFlags struct {
	interval time.Duration
	topic    string
}

func (p *pathwaysFlags) declare(s *settings) {
	s.duration(&p.interval, "pathways-interval", pathwaytopic.DefaultInterval, "how often to publish this process's pathway aggregates for `kretrieve pathways` (0: never)")
	declarePathwaysTopic(s, &p.topic)
}

func declarePathwaysTopic(s *settings, p *string) {
	s.str(p, "pathways-topic", pathwaytopic.DefaultTopic, "compacted topic of the pathway aggregates (created when missing)")
}

func (p pathwaysFlags) validate() error {
	var errs []error
	if p.interval != 0 && (p.interval < pathwaytopic.MinInterval || p.interval > pathwaytopic.MaxInterval) {
		errs = append(errs, fmt.Errorf("pathways-interval: 0 or between %s and %s", pathwaytopic.MinInterval, pathwaytopic.MaxInterval))
	}
	return errors.Join(append(errs, validatePathwaysTopic(p.topic))...)
}

func validatePathwaysTopic(topic string) error {
	// The pipeline topics' rules; the aggregate topic has no dead-letter
	// topic but may not clash with one either.
	if err := messages.ValidateTopics(messages.NamedTopic{Name: "pathways", Topic: topic}); err != nil {
		return fmt.Errorf("pathways-topic: %w", err)
	}
	return nil
}

// publishPathways publishes the process's pathway aggregates every
// f.interval until the returned function is called, which publishes a last
// window (within pathwaytopic.FinalTimeout) and returns: call it once the
// component has drained, so the last window holds its last records. It
// publishes nothing when f.interval is 0 or pathways are off. It never
// fails the command: pathways are observability, so a topic that cannot be
// created or written is logged and publishing goes on trying. feeds, when
// not nil, says where the process's indexes stand (see workerIndex.feeds).
func publishPathways(ctx context.Context, f pathwaysFlags, p *pipeline.Pipeline, comp *component, feeds func() []pathwaytopic.Feed) (stop func()) {
	pc := p.Config()
	if f.interval <= 0 || pc.DisablePathways || comp.metrics == nil {
		return func() {}
	}
	// Windows that cannot be delivered for a while are dropped, not
	// retried forever ahead of the next ones (which include them).
	client, err := kgo.NewClient(kafkaOptions(p, nil,
		kgo.RecordDeliveryTimeout(max(2*f.interval, 30*time.Second)))...)
	if err != nil {
		comp.logger.WarnContext(ctx, "pathway aggregates off", "err", err)
		return func() {}
	}
	ectx, cancel := context.WithTimeout(ctx, kafkaclient.DefaultCheckTimeout)
	if err := pathwaytopic.EnsureTopic(ectx, client, pc.Kafka.ReplicationFactor, f.topic); err != nil {
		comp.logger.WarnContext(ctx, "pathways topic not created", "topic", f.topic, "err", err)
	}
	cancel()
	pub, err := pathwaytopic.NewPublisher(client, comp.metrics, pathwaytopic.WithTopic(f.topic), pathwaytopic.WithInterval(f.interval),
		pathwaytopic.WithService(pc.ServiceName), pathwaytopic.WithLogger(comp.logger), pathwaytopic.WithFeeds(feeds),
		pathwaytopic.WithPublished(countWindows(ctx, comp)))
	if err != nil {
		client.Close()
		comp.logger.WarnContext(ctx, "pathway aggregates off", "err", err)
		return func() {}
	}
	comp.logger.DebugContext(ctx, "publishing pathway aggregates", "topic", f.topic, "interval", f.interval, "instance", pub.Instance())
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = pub.Run(runCtx)
	}()
	return sync.OnceFunc(func() {
		cancel()
		<-done
		client.Close()
	})
}

// countWindows returns the function that counts the pathway windows the
// process tried to publish in kretrieve.pathways.windows, with error.type
// on failures (the alert KretrievePathwaysNotPublished reads it); nil when
// the counter cannot be made, which is logged.
func countWindows(ctx context.Context, comp *component) func(error) {
	if comp.telemetry.MeterProvider == nil {
		return nil
	}
	c, err := comp.telemetry.MeterProvider.Meter("github.com/kretrieve/kretrieve/pathwaytopic").Int64Counter(
		otelnames.MetricPathwaysWindows, metric.WithUnit(otelnames.MetricPathwaysWindowsUnit),
		metric.WithDescription("Pathway windows the process tried to publish to the pathways topic"))
	if err != nil {
		comp.logger.WarnContext(ctx, "pathway windows not counted", "err", err)
		return nil
	}
	ok := metric.WithAttributeSet(attribute.NewSet())
	return func(err error) {
		if err == nil {
			c.Add(context.Background(), 1, ok)
			return
		}
		c.Add(context.Background(), 1, metric.WithAttributes(semconv.ErrorTypeKey.String(kafkatrace.ErrorType(err))))
	}
}

// pathwaysCommand is "kretrieve pathways".
func (e *cli) pathwaysCommand() *cobra.Command {
	return e.command(&cobra.Command{
		Use:     "pathways",
		GroupID: "tools",
		Short:   "Live pathways of every process: msgs/s, edge and origin p50/p95/p99, lag, dead letters",
		Long: `Print the pathways of the running pipeline from the aggregates every process
publishes: messages per second, edge and origin latency percentiles, lag
and dead letters; on a terminal it refreshes until interrupted.`,
		Example: `  kretrieve pathways
  kretrieve pathways --once --json`,
		Args: noArgs,
	}, bind(func(ctx context.Context, c pathwaysConfig) error { return runPathways(ctx, c, e.stdout, e.stderr) }))
}

// pathwaysConfig configures the pathways command.
type pathwaysConfig struct {
	commonConfig
	topic  string
	groups []string
	json   bool
	once   bool
	watch  time.Duration
	// unfinishedAfter is status.Config.UnfinishedAfter.
	unfinishedAfter time.Duration
}

// flags declares the flags of a pathwaysConfig on s and returns the check of
// their values, run once they are parsed.
func (c *pathwaysConfig) flags(s *settings) (check func(args []string) error) {
	var groups string
	c.declare(s, "pathways", kafkaclient.DefaultBrokers)
	declarePathwaysTopic(s, &c.topic)
	s.str(&groups, "groups", defaultGroups(), "comma-separated consumer groups whose lag to show (none: no lag)")
	s.boolean(&c.json, "json", false, "print one JSON document (with --watch, one a line)")
	s.boolean(&c.once, "once", false, "print once and exit (the default when stdout is not a terminal, and with --json)")
	s.duration(&c.watch, "watch", 0, "refresh every DURATION until interrupted (0: every "+pathwaysRefresh.String()+" on a terminal, once otherwise)")
	s.duration(&c.unfinishedAfter, "unfinished-after", status.DefaultUnfinishedAfter, "judge the requests of an origin-time cohort unfinished this long after it ended (at least 3 times the processes' --pathways-interval)")
	return func(args []string) error {
		var errs []error
		c.groups = splitList(groups)
		if c.watch < 0 {
			errs = append(errs, errors.New("watch: must not be negative"))
		}
		if c.unfinishedAfter <= 0 {
			errs = append(errs, errors.New("unfinished-after: must be positive"))
		}
		return errors.Join(append(errs, validatePathwaysTopic(c.topic), c.validate(), validateBrokers(c.brokers))...)
	}
}

// refresh returns how often to print (0: once) and whether to redraw in
// place, given whether stdout is a terminal.
func (c pathwaysConfig) refresh(terminal bool) (every time.Duration, redraw bool) {
	switch {
	case c.once:
		return 0, false
	case c.watch > 0:
		return c.watch, terminal && !c.json
	case c.json || !terminal:
		return 0, false
	}
	return pathwaysRefresh, true
}

// runPathways prints the pathways of the running pipeline from the
// aggregates its processes publish, with the lag and dead letters of each
// stage (package status): once, or refreshed until ctx is done.
func runPathways(ctx context.Context, cfg pathwaysConfig, stdout, stderr io.Writer) (err error) {
	return command{role: "pathways", connect: checkKafka}.run(ctx, cfg.commonConfig, stderr, func(comp *component, p *pipeline.Pipeline) error {
		src, err := status.New(status.Config{Topology: cfg.topology(), KafkaOptions: kafkaOptions(p, nil), PathwaysTopic: cfg.topic,
			Groups: cfg.groups, CatchUpTimeout: pathwaysCatchUpTimeout, Logger: comp.logger, UnfinishedAfter: cfg.unfinishedAfter})
		if err != nil {
			return err
		}
		defer src.Close()

		every, redraw := cfg.refresh(isTerminal(stdout))
		if every == 0 {
			st, err := src.Read(ctx)
			return errors.Join(printPathways(stdout, newPathwaysReport(st), cfg.json), err)
		}
		screen := &redrawer{w: stdout, on: redraw}
		defer screen.done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			st, err := src.Read(ctx)
			if ctx.Err() != nil {
				return nil
			}
			rep := newPathwaysReport(st)
			if err != nil {
				rep.Errors = append(rep.Errors, err.Error())
			}
			var b bytes.Buffer
			if err := printPathways(&b, rep, cfg.json); err != nil {
				return err
			}
			if err := screen.frame(b.Bytes(), !cfg.json); err != nil {
				return err
			}
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
			}
		}
	})
}

// isTerminal reports whether w is a terminal: a character device other
// than /dev/null.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err != nil || !os.SameFile(fi, null)
}

// redrawer prints frames: in place on a terminal (cursor up over the
// previous frame, clear to the end of the screen, as progress displays
// do), else one after another.
type redrawer struct {
	w      io.Writer
	on     bool
	lines  int
	frames int
}

// frame prints one frame; separate says to put a blank line between
// frames that are not redrawn.
func (r *redrawer) frame(b []byte, separate bool) error {
	var out bytes.Buffer
	switch {
	case r.on && r.frames == 0:
		out.WriteString("\x1b[?25l") // hide the cursor
	case r.on && r.lines > 0:
		fmt.Fprintf(&out, "\r\x1b[%dA\x1b[J", r.lines)
	case separate && r.frames > 0:
		out.WriteByte('\n')
	}
	out.Write(b)
	r.lines = bytes.Count(b, []byte("\n"))
	r.frames++
	_, err := r.w.Write(out.Bytes())
	return err
}

// done restores the cursor.
func (r *redrawer) done() {
	if r.on && r.frames > 0 {
		_, _ = io.WriteString(r.w, "\x1b[?25h")
	}
}
