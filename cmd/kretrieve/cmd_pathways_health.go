// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
)

// printLagHealthTable prints the lag health of each group on each topic
// (status.LagHealth); nothing when no group's lag was measured.
func printLagHealthTable(w io.Writer, rep pathwaysReport) error {
	var rows []pathwayStage
	for _, s := range rep.Stages {
		if s.LagHealth != nil && s.LagHealth.Samples > 0 {
			rows = append(rows, s)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE\tGROUP\tLAG HEALTH\tSAMPLES\tVELOCITY(/s)\tDRAIN(s)\tHEADROOM(s)")
	oneDecimal := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	for _, s := range rows {
		h := s.LagHealth
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", s.Topic, s.Group, h.Status, h.Samples,
			h.Velocity.Format(oneDecimal), h.Drain.Format(oneDecimal), h.Headroom.Format(oneDecimal))
	}
	return tw.Flush()
}
