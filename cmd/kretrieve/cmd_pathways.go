package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/ops/status"
	"github.com/kretrieve/kretrieve/pathway"
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
// created or written is logged and publishing goes on trying.
func publishPathways(ctx context.Context, f pathwaysFlags, p *pipeline.Pipeline, comp *component) (stop func()) {
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
		pathwaytopic.WithService(pc.ServiceName), pathwaytopic.WithLogger(comp.logger))
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

// pathwaysConfig configures the pathways command.
type pathwaysConfig struct {
	commonConfig
	topic  string
	groups []string
	json   bool
	once   bool
	watch  time.Duration
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
	return func(args []string) error {
		var errs []error
		c.groups = splitList(groups)
		if c.watch < 0 {
			errs = append(errs, errors.New("watch: must not be negative"))
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
			Groups: cfg.groups, CatchUpTimeout: pathwaysCatchUpTimeout, Logger: comp.logger})
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

// pathwaysReport is what `kretrieve pathways` prints, a rendering of a
// status.Status: the document of --json, whose unknown numbers are null.
type pathwaysReport struct {
	Time      time.Time         `json:"time"`
	Topic     string            `json:"topic"`
	Instances []pathwayInstance `json:"instances"`
	Pathways  []pathwayRow      `json:"pathways"`
	Edges     []pathwayEdge     `json:"edges"`
	Stages    []pathwayStage    `json:"stages"`
	Skipped   map[string]uint64 `json:"skipped,omitempty"`
	Errors    []string          `json:"errors,omitempty"`
}

// pathwayInstance is one process's newest window.
type pathwayInstance struct {
	Instance        string    `json:"instance"`
	Service         string    `json:"service"`
	WindowStart     time.Time `json:"window_start"`
	WindowEnd       time.Time `json:"window_end"`
	IntervalSeconds float64   `json:"interval_seconds"`
	Series          int       `json:"series"`
	Stale           bool      `json:"stale"`
}

// pathwayRow is one pathway checkpoint over the instances' windows.
type pathwayRow struct {
	Hash      string `json:"hash"`
	Parent    string `json:"parent"`
	Depth     int    `json:"depth"`
	Edge      string `json:"edge"`
	Service   string `json:"service"`
	Group     string `json:"group,omitempty"`
	Topic     string `json:"topic"`
	Direction string `json:"direction"`
	// Overflow marks the series of the pathways beyond a process's bound.
	Overflow bool `json:"overflow,omitempty"`
	// Count is the records in the windows, Total since the processes
	// started.
	Count         uint64           `json:"count"`
	Total         uint64           `json:"total"`
	MsgsPerSecond float64          `json:"msgs_per_second"`
	Instances     int              `json:"instances"`
	EdgeLatency   status.Quantiles `json:"edge_ms"`
	OriginLatency status.Quantiles `json:"origin_ms"`
}

// pathwayEdge is one pipeline topic: the records its consuming stage read
// (status.Edge).
type pathwayEdge struct {
	Topic         string           `json:"topic"`
	From          string           `json:"from"`
	To            string           `json:"to"`
	MsgsPerSecond float64          `json:"msgs_per_second"`
	EdgeLatency   status.Quantiles `json:"edge_ms"`
	OriginLatency status.Quantiles `json:"origin_ms"`
}

// pathwayStage is one pipeline topic: the lag of a group consuming it and
// the dead letters of the stage consuming it; null where unknown (see
// error), and for the results topic, which no stage consumes.
type pathwayStage struct {
	Topic       string                `json:"topic"`
	Group       string                `json:"group,omitempty"`
	Lag         status.Maybe[int64]   `json:"lag"`
	LagSeconds  status.Maybe[float64] `json:"lag_seconds"`
	DLQTopic    string                `json:"dlq_topic,omitempty"`
	DeadLetters status.Maybe[int64]   `json:"dead_letters"`
	Error       string                `json:"error,omitempty"`
}

// newPathwaysReport renders st.
func newPathwaysReport(st status.Status) pathwaysReport {
	rep := pathwaysReport{Time: st.Time, Topic: st.PathwaysTopic, Skipped: st.Skipped, Errors: st.Errors,
		Instances: []pathwayInstance{}, Pathways: []pathwayRow{}, Edges: []pathwayEdge{}, Stages: []pathwayStage{}}
	for _, in := range st.Instances {
		rep.Instances = append(rep.Instances, pathwayInstance{Instance: in.Instance, Service: in.Service,
			WindowStart: in.Start.UTC(), WindowEnd: in.End.UTC(), IntervalSeconds: in.Interval.Seconds(), Series: in.Series, Stale: in.Stale})
	}
	for _, r := range st.Pathways {
		cp := r.Checkpoint
		rep.Pathways = append(rep.Pathways, pathwayRow{
			Hash: pathway.HashString(r.Hash), Parent: pathway.HashString(r.Parent), Depth: r.Depth, Edge: cp.Edge(),
			Service: cp.Service, Group: cp.Group, Topic: cp.Topic, Direction: cp.Direction.String(), Overflow: r.Overflow,
			Count: r.Count, Total: r.Total, MsgsPerSecond: r.Rate, Instances: r.Instances,
			EdgeLatency: r.Latency, OriginLatency: r.Origin,
		})
	}
	for i, e := range st.Edges {
		rep.Edges = append(rep.Edges, pathwayEdge{Topic: e.Topic, From: e.From, To: e.To, MsgsPerSecond: e.Rate, EdgeLatency: e.Latency, OriginLatency: e.Origin})
		var stage status.Stage // the stage reading e.Topic; none for the results
		if i < len(st.Stages) {
			stage = st.Stages[i]
		}
		row := pathwayStage{Topic: e.Topic, DLQTopic: stage.DLQTopic, DeadLetters: stage.DeadLetters}
		if len(e.Lags) == 0 {
			row.Error = stage.Error
			rep.Stages = append(rep.Stages, row)
		}
		for _, g := range e.Lags {
			row.Group, row.Lag, row.LagSeconds = g.Group, g.Records, g.Seconds
			row.Error = joinErrors(g.Error, stage.Error)
			rep.Stages = append(rep.Stages, row)
		}
	}
	for _, g := range st.GroupErrors {
		rep.Stages = append(rep.Stages, pathwayStage{Group: g.Group, Error: g.Error})
	}
	return rep
}

// joinErrors joins the error texts that are not empty, as errors.Join.
func joinErrors(texts ...string) string {
	return strings.Join(slices.DeleteFunc(texts, func(t string) bool { return t == "" }), "\n")
}

// printPathways prints the report as one JSON document (one line) or as
// tables.
func printPathways(w io.Writer, rep pathwaysReport, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return enc.Encode(rep)
	}
	return printPathwaysTables(w, rep)
}

// maxIndent bounds the indentation of deep pathways in the table.
const maxIndent = 8

// printPathwaysTables prints the header, the pathways, the edges and the
// stages.
func printPathwaysTables(w io.Writer, rep pathwaysReport) error {
	live := printPathwaysHeader(w, rep)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "PATHWAY\tEDGE\tMSG/S\tCOUNT\tTOTAL\tEDGE p50\tp95\tp99\tORIGIN p50\tp95\tp99")
	for _, r := range rep.Pathways {
		hash := r.Hash[:8]
		if r.Overflow {
			hash = "overflow"
		}
		edge := strings.Repeat("  ", min(r.Depth, maxIndent)) + r.Edge
		e, o := r.EdgeLatency, r.OriginLatency
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", hash, edge, rateCell(r.MsgsPerSecond), r.Count, r.Total,
			latencyCell(e.P50), latencyCell(e.P95), latencyCell(e.P99), latencyCell(o.P50), latencyCell(o.P95), latencyCell(o.P99))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	switch {
	case len(rep.Pathways) > 0:
	case len(rep.Instances) == 0:
		fmt.Fprintln(w, "(no process has published pathways yet)")
	case live == 0:
		fmt.Fprintln(w, "(no process has published lately: are they running?)")
	default:
		fmt.Fprintln(w, "(no pathway measured yet)")
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tFROM → TO\tMSG/S\tEDGE p50\tp99\tORIGIN p50\tp99")
	for _, e := range rep.Edges {
		fmt.Fprintf(tw, "%s\t%s → %s\t%s\t%s\t%s\t%s\t%s\n", e.Topic, e.From, e.To, rateCell(e.MsgsPerSecond),
			latencyCell(e.EdgeLatency.P50), latencyCell(e.EdgeLatency.P99), latencyCell(e.OriginLatency.P50), latencyCell(e.OriginLatency.P99))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return printStagesTable(w, rep)
}

// printPathwaysHeader prints who published and what was skipped, and
// returns the number of live instances.
func printPathwaysHeader(w io.Writer, rep pathwaysReport) (live int) {
	stale := 0
	for _, in := range rep.Instances {
		if in.Stale {
			stale++
		} else {
			live++
		}
	}
	fmt.Fprintf(w, "pathways of %d %s", live, plural(live, "process", "processes"))
	if stale > 0 {
		fmt.Fprintf(w, " (%d stale, not counted)", stale)
	}
	fmt.Fprintf(w, " from %s at %s\n", rep.Topic, rep.Time.Format(time.RFC3339))
	if len(rep.Skipped) > 0 {
		var parts []string
		var n uint64
		for _, reason := range slices.Sorted(maps.Keys(rep.Skipped)) {
			parts = append(parts, fmt.Sprintf("%d %s", rep.Skipped[reason], reason))
			n += rep.Skipped[reason]
		}
		fmt.Fprintf(w, "skipped %d aggregate %s: %s\n", n, plural(int(n), "record", "records"), strings.Join(parts, ", "))
	}
	fmt.Fprintln(w)
	return live
}

// printStagesTable prints the lag and dead letters of each topic, then the
// errors.
func printStagesTable(w io.Writer, rep pathwaysReport) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE\tGROUP\tLAG\tLAG(s)\tDEAD LETTERS")
	var errs []string
	for _, s := range rep.Stages {
		group := cmp.Or(s.Group, status.Unknown)
		topic := cmp.Or(s.Topic, "?")
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", topic, group, recordsCell(s.Lag), s.LagSeconds.Format(secondsText), recordsCell(s.DeadLetters))
		if s.Error != "" {
			errs = append(errs, fmt.Sprintf("%s %s: %s", topic, group, s.Error))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, e := range append(errs, rep.Errors...) {
		fmt.Fprintln(w, "error:", e)
	}
	return nil
}

func recordsCell(n status.Maybe[int64]) string {
	return n.Format(func(n int64) string { return strconv.FormatInt(n, 10) })
}

func secondsText(s float64) string { return strconv.FormatFloat(s, 'f', 1, 64) }

func latencyCell(ms status.Maybe[float64]) string { return ms.Format(msCell) }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func rateCell(r float64) string {
	if r >= 100 {
		return strconv.FormatFloat(r, 'f', 0, 64)
	}
	return strconv.FormatFloat(r, 'f', 1, 64)
}

// msCell formats milliseconds compactly: 850µs, 3.42ms, 12.5ms, 1.20s.
func msCell(ms float64) string {
	switch {
	case ms == 0:
		return "0"
	case ms < 1:
		return strconv.FormatFloat(ms*1000, 'f', 0, 64) + "µs"
	case ms < 10:
		return strconv.FormatFloat(ms, 'f', 2, 64) + "ms"
	case ms < 1000:
		return strconv.FormatFloat(ms, 'f', 1, 64) + "ms"
	case ms < 60000:
		return strconv.FormatFloat(ms/1000, 'f', 2, 64) + "s"
	}
	return (time.Duration(ms) * time.Millisecond).Round(time.Second).String()
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
