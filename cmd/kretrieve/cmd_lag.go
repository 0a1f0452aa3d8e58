// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/lag"
	"github.com/kretrieve/kretrieve/ops/status"
	"github.com/kretrieve/kretrieve/pipeline"
)

// lagCommand is "kretrieve lag".
func (e *cli) lagCommand() *cobra.Command {
	return e.command(&cobra.Command{
		Use:     "lag",
		GroupID: "tools",
		Short:   "Consumer-group and index lag in records and seconds (--watch)",
		Long: `Print the lag of consumer groups, per partition, in records and in seconds,
once or every --watch DURATION until interrupted. Then, with --indexes (the
default), the lag of every running worker's index behind the documents
topic, which it reads with no consumer group: the workers say where they
stand in the windows they publish to --pathways-topic. It exits non-zero
when a lag could not be measured.

Each group's lag comes with its health over a window of measurements
(docs/operations.md, "Lag health"): its status (ok, warn, stall, stop,
rewind), velocity, time to drain and retention headroom. Once, it takes 3
measurements spread over --window and prints the last; with --watch, it
judges over the last --window or 10 measurements, whichever is longer.`,
		Example: fmt.Sprintf(`  kretrieve lag
  kretrieve lag --groups %s --watch 5s
  kretrieve lag --json
  kretrieve lag --window 10s`, defaultTopology().Stages[0].Group),
		Args: noArgs,
	}, bind(func(ctx context.Context, c lagConfig) error { return runLag(ctx, c, e.stdout, e.stderr) }))
}

// lagConfig configures the lag command.
type lagConfig struct {
	commonConfig
	groups        []string
	json          bool
	watch         time.Duration
	window        time.Duration
	indexes       bool
	pathwaysTopic string
}

// flags declares the flags of a lagConfig on s and returns the check of
// their values, run once they are parsed.
func (c *lagConfig) flags(s *settings) (check func(args []string) error) {
	var groups string
	c.declare(s, "lag", kafkaclient.DefaultBrokers)
	s.str(&groups, "groups", defaultGroups(), "comma-separated consumer groups")
	s.boolean(&c.json, "json", false, "print JSON lines")
	s.duration(&c.watch, "watch", 0, "measure and print again every DURATION until interrupted (0: once)")
	s.duration(&c.window, "window", defaultLagWindow, "judge the lag's health over DURATION of measurements (once: 3 spread over it; 0: one, no health)")
	s.boolean(&c.indexes, "indexes", true, "also the lag of the workers' indexes behind the documents topic, from the pathway windows")
	declarePathwaysTopic(s, &c.pathwaysTopic)
	return func(args []string) error {
		var errs []error
		c.groups = splitList(groups)
		if len(c.groups) == 0 {
			errs = append(errs, errors.New("groups: at least one group is required"))
		}
		if c.watch < 0 {
			errs = append(errs, errors.New("watch: must not be negative"))
		}
		if c.window < 0 {
			errs = append(errs, errors.New("window: must not be negative"))
		}
		return errors.Join(append(errs, c.validate(), validateBrokers(c.brokers))...)
	}
}

// runLag prints the lag of consumer groups in records and in seconds, once
// or, with --watch, every interval until ctx is done. The lag is also
// exported as the kretrieve.consumer.lag gauges when OTEL_* configures a
// metrics exporter. Once, it fails when a group or partition could not be
// measured; watching, it logs that and goes on.
func runLag(ctx context.Context, cfg lagConfig, stdout, stderr io.Writer) (err error) {
	return command{role: "lag", connect: checkKafka}.run(ctx, cfg.commonConfig, stderr, func(comp *component, p *pipeline.Pipeline) error {
		mon, err := lag.NewMonitor(kafkaOptions(p, comp.telemetry.MeterProvider), cfg.monitorConfig(),
			lag.WithMeterProvider(comp.telemetry.MeterProvider), lag.WithLogger(comp.logger))
		if err != nil {
			return err
		}
		var tick <-chan time.Time
		if cfg.watch > 0 {
			t := time.NewTicker(cfg.watch)
			defer t.Stop()
			tick = t.C
		}
		var indexes *indexLags
		if cfg.indexes {
			if indexes, err = newIndexLags(kafkaOptions(p, nil), cfg.pathwaysTopic); err != nil {
				return err
			}
			defer indexes.Close()
		}
		for n := 0; ; n++ {
			lags, err := sampleLag(ctx, mon, cfg)
			var ilags []status.FeedLag
			if err == nil && indexes != nil {
				ilags, err = indexes.measure(ctx)
			}
			switch {
			case cfg.watch > 0 && ctx.Err() != nil:
				return nil // interrupted while measuring
			case err != nil && cfg.watch == 0:
				return err
			case err != nil:
				comp.logger.WarnContext(ctx, "lag not measured", "err", err)
			default:
				if n > 0 && !cfg.json {
					fmt.Fprintln(stdout)
				}
				if err := printLag(stdout, lags, ilags, cfg.json, time.Now()); err != nil {
					return err
				}
				errs := append(lagErrors(lags), indexLagErrors(ilags)...)
				if cfg.watch == 0 {
					return errors.Join(errs...)
				}
				for _, err := range errs {
					comp.logger.WarnContext(ctx, "lag partly measured", "err", err)
				}
			}
			select {
			case <-ctx.Done():
				return nil
			case <-tick:
			}
		}
	})
}

// lagErrors returns the errors of the entries, each naming its group and
// partition.
func lagErrors(lags []lag.PartitionLag) []error {
	var errs []error
	for _, l := range lags {
		switch {
		case l.Err == nil:
		case l.Partition < 0:
			errs = append(errs, l.Err) // names the group already
		default:
			errs = append(errs, fmt.Errorf("group %s topic %s partition %d: %w", l.Group, l.Topic, l.Partition, l.Err))
		}
	}
	return errs
}

// printLag prints the groups' lags, then the indexes'.
func printLag(w io.Writer, lags []lag.PartitionLag, indexes []status.FeedLag, asJSON bool, now time.Time) error {
	if asJSON {
		if err := printLagLines(w, lags, now); err != nil {
			return err
		}
		return printIndexLagLines(w, indexes, now)
	}
	if err := printLagTable(w, lags); err != nil {
		return err
	}
	return printIndexLagTable(w, indexes)
}

// lagLine is one entry in `lag --json`; -1 means unknown (see error). A
// worker's index (no group) has Index and Instance instead of Group, and
// Committed is the next offset it will apply.
type lagLine struct {
	Time            time.Time  `json:"time"`
	Group           string     `json:"group"`
	Index           string     `json:"index,omitempty"`
	Instance        string     `json:"instance,omitempty"`
	Topic           string     `json:"topic,omitempty"`
	Partition       int32      `json:"partition"`
	Committed       int64      `json:"committed"`
	End             int64      `json:"end"`
	Lag             int64      `json:"lag"`
	LagSeconds      float64    `json:"lag_seconds"`
	OldestTimestamp *time.Time `json:"oldest_timestamp,omitempty"`
	healthFields
	Error string `json:"error,omitempty"`
}

// newLagLine is the line of l measured at now.
func newLagLine(l lag.PartitionLag, now time.Time) lagLine {
	line := lagLine{
		Time: now.UTC(), Group: l.Group, Topic: l.Topic, Partition: l.Partition,
		Committed: l.Committed, End: l.End, Lag: l.Records, LagSeconds: l.Seconds,
	}
	if !l.OldestTimestamp.IsZero() {
		ts := l.OldestTimestamp.UTC()
		line.OldestTimestamp = &ts
	}
	if l.Err != nil {
		line.Error = l.Err.Error()
	}
	return line
}

// encodeLine writes line as one JSON line.
func encodeLine(w io.Writer, line lagLine) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(line)
}

func printLagLines(w io.Writer, lags []lag.PartitionLag, now time.Time) error {
	for _, l := range lags {
		line := newLagLine(l, now)
		if l.Partition >= 0 {
			line.healthFields = newHealthFields(l.Health)
		}
		if err := encodeLine(w, line); err != nil {
			return err
		}
	}
	return nil
}

// printLagTable prints one row per partition and a total row per group
// (lag.Sum: records summed, the largest age, unknown when a partition's
// is). Entries about a whole group (errors) have no row.
func printLagTable(w io.Writer, lags []lag.PartitionLag) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tTOPIC\tPARTITION\tCOMMITTED\tEND\tLAG\tLAG(s)\t"+healthHeader)
	for i := 0; i < len(lags); {
		group := lags[i].Group
		var parts []lag.PartitionLag
		for ; i < len(lags) && lags[i].Group == group; i++ {
			l := lags[i]
			if l.Partition < 0 {
				continue
			}
			parts = append(parts, l)
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", l.Group, l.Topic, l.Partition,
				lagCell(l.Committed), lagCell(l.End), lagCell(l.Records), secondsCell(l.Seconds), healthCells(l.Health))
		}
		if len(parts) > 0 {
			records, seconds, _ := lag.Sum(parts)
			fmt.Fprintf(tw, "%s\t(total)\t\t\t\t%s\t%s\t%s\n", group, lagCell(records), secondsCell(seconds), healthCells(sumHealth(parts, records)))
		}
	}
	return tw.Flush()
}

// lagCell formats an offset or a count, "-" when unknown or none.
func lagCell(n int64) string {
	if n < 0 {
		return "-"
	}
	return strconv.FormatInt(n, 10)
}

func secondsCell(s float64) string {
	if s < 0 {
		return "-"
	}
	return strconv.FormatFloat(s, 'f', 1, 64)
}
