// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/kretrieve/kretrieve/ops/status"
	"github.com/kretrieve/kretrieve/pathway"
)

// maxCohortLines bounds the unfinished cohorts printed one by one.
const maxCohortLines = 10

// printCompleteness prints how many requests entered and ended over the
// cohorts judged, then each cohort with unfinished requests and where
// they wait: "37 requests from 10:00:10 unfinished, waiting at
// retrieval.candidates → enrichment".
func printCompleteness(w io.Writer, c status.Completeness) {
	if c.Since.IsZero() || c.Since.Unix() == 0 {
		fmt.Fprintln(w, "completeness: no request counted yet")
		fmt.Fprintln(w)
		return
	}
	fmt.Fprintf(w, "completeness of requests by origin (%s cohorts, judged %s after; %s to %s): entered %d, ended %d (expired %d, dead-lettered %d), unfinished %d\n",
		pathway.CohortWidth, c.UnfinishedAfter, clock(c.Since), clock(c.Until), c.Entered, c.Ended, c.Expired, c.DeadLettered, c.Unfinished)
	for i, co := range c.Cohorts {
		if i == maxCohortLines {
			fmt.Fprintf(w, "… and %d more unfinished cohorts\n", len(c.Cohorts)-i)
			break
		}
		fmt.Fprintf(w, "%d %s from %s unfinished%s\n", co.Unfinished, plural(int(co.Unfinished), "request", "requests"), clock(co.Origin), waitingText(co.Waiting, co.Unfinished))
	}
	fmt.Fprintln(w)
}

// waitingText says where unfinished requests wait: ", waiting at A" when
// all are at A, else ", waiting at A (n), B (m)".
func waitingText(ws []status.Waiting, unfinished uint64) string {
	switch {
	case len(ws) == 0:
		return " (where is not known: the counts of a stopped process?)"
	case len(ws) == 1 && ws[0].Count == unfinished:
		return ", waiting at " + ws[0].Where
	}
	parts := make([]string, len(ws))
	for i, wt := range ws {
		parts[i] = fmt.Sprintf("%s (%d)", wt.Where, wt.Count)
	}
	return ", waiting at " + strings.Join(parts, ", ")
}

// clock formats t as a time of day in UTC, with the date when it is not
// today's.
func clock(t time.Time) string {
	t = t.UTC()
	if y, m, d := t.Date(); y == time.Now().UTC().Year() && m == time.Now().UTC().Month() && d == time.Now().UTC().Day() {
		return t.Format(time.TimeOnly)
	}
	return t.Format(time.DateTime)
}
