// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/lag"
	"github.com/kretrieve/kretrieve/ops/status"
	"github.com/kretrieve/kretrieve/pathwaytopic"
)

// indexLags measures how far behind the documents topic each worker's
// index is: the workers say where they stand in their pathway windows
// (pathwaytopic.Feed), read here from the pathways topic; their lag is
// measured now from there (status.MeasureFeeds). Stale instances (stopped
// processes) are left out.
type indexLags struct {
	opts   []kgo.Opt
	reader *pathwaytopic.Reader
}

// newIndexLags returns the measurer of the indexes whose processes publish
// to the pathways topic; Close it.
func newIndexLags(opts []kgo.Opt, topic string) (*indexLags, error) {
	r, err := pathwaytopic.NewReader(opts, pathwaytopic.WithTopic(topic))
	if err != nil {
		return nil, err
	}
	return &indexLags{opts: opts, reader: r}, nil
}

// Close closes the pathways reader.
func (x *indexLags) Close() { x.reader.Close() }

// measure reads the windows published since the last call and measures
// the live instances' indexes.
func (x *indexLags) measure(ctx context.Context) ([]status.FeedLag, error) {
	cctx, cancel := context.WithTimeout(ctx, status.DefaultCatchUpTimeout)
	err := x.reader.CatchUp(cctx)
	cancel()
	if errors.Is(err, pathwaytopic.ErrNoTopic) {
		return nil, nil // no process has published yet: no index to show
	}
	if err != nil {
		return nil, fmt.Errorf("read the pathway windows: %w", err)
	}
	v := x.reader.View()
	live := v.Instances[:0:0]
	for _, in := range v.Instances {
		if !in.Stale {
			live = append(live, in)
		}
	}
	v.Instances = live
	return status.MeasureFeeds(ctx, x.opts, v)
}

// indexLagErrors returns the errors of the entries, each naming its index,
// instance and partition.
func indexLagErrors(lags []status.FeedLag) []error {
	var errs []error
	for _, l := range lags {
		if l.Err != nil {
			errs = append(errs, fmt.Errorf("index %s of %s, topic %s partition %d: %w", l.Group, l.Instance, l.Topic, l.Partition, l.Err))
		}
	}
	return errs
}

// printIndexLagTable prints one row per partition and a total row per
// index of each instance (lag.Sum); nothing when no index was reported.
func printIndexLagTable(w io.Writer, lags []status.FeedLag) error {
	if len(lags) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "INDEX\tINSTANCE\tTOPIC\tPARTITION\tAPPLIED\tEND\tLAG\tLAG(s)")
	for i := 0; i < len(lags); {
		first := lags[i]
		var parts []lag.PartitionLag
		for ; i < len(lags) && lags[i].Group == first.Group && lags[i].Instance == first.Instance && lags[i].Topic == first.Topic; i++ {
			l := lags[i]
			parts = append(parts, l.PartitionLag)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", l.Group, l.Instance, l.Topic, l.Partition,
				lagCell(l.Committed), lagCell(l.End), lagCell(l.Records), secondsCell(l.Seconds))
		}
		records, seconds, _ := lag.Sum(parts)
		fmt.Fprintf(tw, "%s\t%s\t(total)\t\t\t\t%s\t%s\n", first.Group, first.Instance, lagCell(records), secondsCell(seconds))
	}
	return tw.Flush()
}

// printIndexLagLines prints one JSON line per entry, as lagLine with the
// index and instance instead of a group.
func printIndexLagLines(w io.Writer, lags []status.FeedLag, now time.Time) error {
	for _, l := range lags {
		line := newLagLine(l.PartitionLag, now)
		line.Group, line.Index, line.Instance = "", l.Group, l.Instance
		if err := encodeLine(w, line); err != nil {
			return err
		}
	}
	return nil
}
