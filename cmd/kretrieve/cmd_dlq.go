// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/kretrieve/kretrieve/deadletters"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/ops/dlq"
	"github.com/kretrieve/kretrieve/pipeline"
)

// dlqCommand is "kretrieve dlq" and its list and replay subcommands.
func (e *cli) dlqCommand() *cobra.Command {
	dlqCmd := &cobra.Command{
		Use:     "dlq list|replay",
		GroupID: "tools",
		Short:   "List or replay dead letters",
		Long: `List or replay dead letters. Both read the dead-letter topics up to their
end when the command starts. replay commits its progress to --replay-group:
a dead letter is replayed once per group. Letters that --reason or
--error-type pass over are committed too; preview with --dry-run.`,
		Example: `  kretrieve dlq list
  kretrieve dlq replay --dry-run`,
		Args: cobra.ArbitraryArgs,
		RunE: e.subcommandOnly("dlq", "list or replay"),
	}
	for _, sub := range []struct{ name, short, example string }{
		{"list", "Print dead letters, oldest first (a table, or --json lines)", `  kretrieve dlq list
  kretrieve dlq list --json --limit 10`},
		{"replay", "Republish dead letters to their original topic, each in a new trace", `  kretrieve dlq replay --dry-run
  kretrieve dlq replay --error-type transient`},
	} {
		dlqCmd.AddCommand(e.command(&cobra.Command{Use: sub.name, Short: sub.short, Example: sub.example, Args: noArgs},
			func(s *settings) (func([]string) error, func(context.Context) error) {
				c := dlqConfig{sub: sub.name}
				return c.flags(s), func(ctx context.Context) error { return runDLQ(ctx, c, e.stdout, e.stderr) }
			}))
	}
	return dlqCmd
}

// dlqConfig configures the dlq list and replay subcommands.
type dlqConfig struct {
	commonConfig
	sub         string // "list" or "replay"
	dlqTopics   string // comma-separated; "" = the pipeline's dead-letter topics
	limit       int
	json        bool
	reason      string
	errorType   string
	dryRun      bool
	replayGroup string
}

// flags declares the flags of a dlqConfig on s and returns the check of
// their values, run once they are parsed.
func (c *dlqConfig) flags(s *settings) (check func(args []string) error) {
	c.declare(s, "dlq", kafkaclient.DefaultBrokers)
	s.str(&c.dlqTopics, "dlq-topic", "", "comma-separated dead-letter topics (default: the .dlq topics of the requests, candidates and results topics)")
	s.integer(&c.limit, "limit", 0, "most dead letters to "+c.sub+" (0: all)")
	s.boolean(&c.json, "json", false, "print JSON lines")
	if c.sub == "replay" {
		s.str(&c.reason, "reason", "", "replay only dead letters whose reason contains this text (case-sensitive); the others are skipped and committed")
		s.str(&c.errorType, "error-type", "", "replay only dead letters of this error type, permanent or transient; the others are skipped and committed")
		s.boolean(&c.dryRun, "dry-run", false, "print what would be replayed; publish and commit nothing")
		s.str(&c.replayGroup, "replay-group", dlq.DefaultReplayGroup, "consumer group that records which dead letters were replayed")
	}
	return func(args []string) error {
		var errs []error
		if c.limit < 0 {
			errs = append(errs, errors.New("limit: must not be negative"))
		}
		switch c.errorType {
		case "", deadletters.ErrorTypePermanent, deadletters.ErrorTypeTransient:
		default:
			errs = append(errs, fmt.Errorf("error-type: %q is neither %s nor %s", c.errorType, deadletters.ErrorTypePermanent, deadletters.ErrorTypeTransient))
		}
		if c.sub == "replay" && strings.TrimSpace(c.replayGroup) == "" {
			errs = append(errs, errors.New("replay-group: required"))
		}
		return errors.Join(append(errs, c.validate(), validateBrokers(c.brokers))...)
	}
}

// deadLetterTopics returns the --dlq-topic list, or the pipeline's
// dead-letter topics.
func (c dlqConfig) deadLetterTopics() []string {
	if topics := splitList(c.dlqTopics); len(topics) > 0 {
		return topics
	}
	return []string{messages.DLQTopic(c.topics.Requests), messages.DLQTopic(c.topics.Candidates), messages.DLQTopic(c.topics.Results)}
}

// replayTargets are the topics p's dead letters may be replayed to, as its
// topology knows them: the pipeline topics and the documents topic.
func replayTargets(p *pipeline.Pipeline) []string {
	t := p.Topology()
	targets := t.Topics()
	if t.Documents != "" {
		targets = append(targets, t.Documents)
	}
	return targets
}

// runDLQ lists or replays dead letters.
func runDLQ(ctx context.Context, cfg dlqConfig, stdout, stderr io.Writer) (err error) {
	return command{role: "dlq", connect: checkKafka}.run(ctx, cfg.commonConfig, stderr, func(comp *component, p *pipeline.Pipeline) error {
		clientOpts := kafkaOptions(p, comp.telemetry.MeterProvider)
		if cfg.sub == "list" {
			letters, err := dlq.List(ctx, clientOpts, cfg.deadLetterTopics(), cfg.limit)
			if err != nil {
				return err
			}
			if cfg.json {
				return printLetterLines(stdout, letters)
			}
			return printLetterTable(stdout, letters, time.Now())
		}

		if !cfg.dryRun {
			// As every command that publishes: the pipeline topics exist.
			if err := p.EnsureTopics(ctx); err != nil {
				return err
			}
		}
		// The workers' tracer settings; the replay's pathway checkpoints: its
		// group reads the dead letters, and what it republishes starts a
		// pathway of its own.
		res, err := dlq.Replay(ctx, clientOpts, p.Tracer(cfg.replayGroup), dlq.ReplayConfig{
			Topics:    cfg.deadLetterTopics(),
			Targets:   replayTargets(p),
			Group:     cfg.replayGroup,
			Reason:    cfg.reason,
			ErrorType: cfg.errorType,
			DryRun:    cfg.dryRun,
			Limit:     cfg.limit,
		}, dlq.WithTracerProvider(comp.telemetry.TracerProvider), dlq.WithLogger(comp.logger))
		// What was done is printed even when the replay stopped on an error.
		return errors.Join(err, printReplay(stdout, cfg, res))
	})
}

// letterLine is one dead letter in `dlq list --json`. The value is not
// printed (it holds user data such as queries), only its size.
type letterLine struct {
	DLQTopic          string     `json:"dlq_topic"`
	Partition         int32      `json:"partition"`
	Offset            int64      `json:"offset"`
	Timestamp         time.Time  `json:"timestamp"`
	Key               string     `json:"key"`
	KeyBase64         []byte     `json:"key_base64,omitempty"` // instead of key when it is not UTF-8
	ValueBytes        int        `json:"value_bytes"`
	Reason            string     `json:"reason"`
	ErrorType         string     `json:"error_type"`
	OriginalTopic     string     `json:"original_topic"`
	OriginalPartition int32      `json:"original_partition"`
	OriginalOffset    int64      `json:"original_offset"`
	OriginalTimestamp *time.Time `json:"original_timestamp,omitempty"`
	Attempts          int        `json:"attempts"`
	ConsumerGroup     string     `json:"consumer_group"`
	TraceID           string     `json:"trace_id"`
	// Truncated is the kretrieve.dlq.truncated header, only on a letter
	// that could not carry the whole original record: what was kept of it,
	// "key=K/K0 headers=H/H0 value=V/V0". Such a letter cannot be replayed.
	Truncated string `json:"truncated,omitempty"`
}

func printLetterLines(w io.Writer, letters []deadletters.Letter) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, l := range letters {
		line := letterLine{
			DLQTopic: l.Topic, Partition: l.Partition, Offset: l.Offset, Timestamp: l.Timestamp,
			ValueBytes: len(l.Value), Reason: l.Reason, ErrorType: l.ErrorType,
			OriginalTopic: l.OriginalTopic, OriginalPartition: l.OriginalPartition, OriginalOffset: l.OriginalOffset,
			Attempts: l.Attempts, ConsumerGroup: l.ConsumerGroup, TraceID: l.TraceID, Truncated: l.Truncated,
		}
		if utf8.Valid(l.Key) {
			line.Key = string(l.Key)
		} else {
			line.KeyBase64 = l.Key
		}
		if !l.OriginalTimestamp.IsZero() {
			line.OriginalTimestamp = &l.OriginalTimestamp
		}
		if err := enc.Encode(line); err != nil {
			return err
		}
	}
	return nil
}

// Column widths of the list table.
const (
	keyColumn    = 26 // a ULID request id
	reasonColumn = 80
)

func printLetterTable(w io.Writer, letters []deadletters.Letter, now time.Time) error {
	if len(letters) == 0 {
		_, err := fmt.Fprintln(w, "no dead letters")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "DLQ TOPIC\tPARTITION\tOFFSET\tAGE\tERROR TYPE\tATTEMPTS\tORIGINAL\tKEY\tREASON\tTRUNCATED\tTRACE ID")
	for _, l := range letters {
		original := "-"
		if l.OriginalTopic != "" {
			original = fmt.Sprintf("%s/%d@%d", printable(l.OriginalTopic, '.'), l.OriginalPartition, l.OriginalOffset)
		}
		attempts := "-"
		if l.Attempts > 0 {
			attempts = strconv.Itoa(l.Attempts)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			l.Topic, l.Partition, l.Offset, age(l.Timestamp, now),
			orDash(printable(l.ErrorType, '.')), attempts, original,
			orDash(truncate(printable(string(l.Key), '.'), keyColumn)),
			orDash(truncate(printable(l.Reason, ' '), reasonColumn)),
			orDash(truncate(printable(l.Truncated, ' '), reasonColumn)),
			orDash(l.TraceID))
	}
	return tw.Flush()
}

// printable replaces what would garble a table cell (control characters,
// invalid UTF-8, other non-printable runes) with repl.
func printable(s string, repl rune) string {
	return strings.Map(func(r rune) rune {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return repl
		}
		return r
	}, s)
}

// age formats how long ago t was in at most two units: 42s, 5m07s, 3h12m, 4d06h.
func age(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := max(now.Sub(t), 0).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
}

// replayLine is one replayed dead letter in `dlq replay --json`.
type replayLine struct {
	DLQTopic        string `json:"dlq_topic"`
	Partition       int32  `json:"partition"`
	Offset          int64  `json:"offset"`
	Topic           string `json:"topic"`
	TargetPartition int32  `json:"target_partition"` // -1 in a dry run
	TargetOffset    int64  `json:"target_offset"`    // -1 in a dry run
	TraceID         string `json:"trace_id"`         // the replay's new trace
	OriginalTraceID string `json:"original_trace_id"`
	DryRun          bool   `json:"dry_run"`
}

// replaySummary is the last line of `dlq replay --json`.
type replaySummary struct {
	Replayed int    `json:"replayed"`
	Skipped  int    `json:"skipped"`
	Failed   int    `json:"failed"`
	Group    string `json:"group"`
	DryRun   bool   `json:"dry_run"`
}

func printReplay(w io.Writer, cfg dlqConfig, res dlq.ReplayResult) error {
	sum := replaySummary{Replayed: res.Replayed, Skipped: res.Skipped, Failed: res.Failed, Group: cfg.replayGroup, DryRun: cfg.dryRun}
	if cfg.json {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		for _, l := range res.Letters {
			if err := enc.Encode(replayLine{
				DLQTopic: l.Topic, Partition: l.Partition, Offset: l.Offset,
				Topic: l.Target, TargetPartition: l.TargetPartition, TargetOffset: l.TargetOffset,
				TraceID: l.ReplayTraceID, OriginalTraceID: l.TraceID, DryRun: cfg.dryRun,
			}); err != nil {
				return err
			}
		}
		return enc.Encode(sum)
	}
	for _, l := range res.Letters {
		if cfg.dryRun {
			fmt.Fprintf(w, "would replay %s/%d@%d -> %s original_trace_id=%s\n", l.Topic, l.Partition, l.Offset, l.Target, orDash(l.TraceID))
			continue
		}
		fmt.Fprintf(w, "replayed %s/%d@%d -> %s/%d@%d trace_id=%s original_trace_id=%s\n",
			l.Topic, l.Partition, l.Offset, l.Target, l.TargetPartition, l.TargetOffset, orDash(l.ReplayTraceID), orDash(l.TraceID))
	}
	if cfg.dryRun {
		_, err := fmt.Fprintf(w, "dry run: would replay %d, skip %d, fail %d (group %s); nothing published or committed\n", sum.Replayed, sum.Skipped, sum.Failed, sum.Group)
		return err
	}
	_, err := fmt.Fprintf(w, "replayed %d, skipped %d, failed %d (group %s)\n", sum.Replayed, sum.Skipped, sum.Failed, sum.Group)
	return err
}
