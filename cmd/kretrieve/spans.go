// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/kretrieve/kretrieve/ops/runsummary"
	"github.com/kretrieve/kretrieve/ops/spans"
	"github.com/kretrieve/kretrieve/otelnames"
)

// maxSpansFileRequests bounds --spans-file-requests: the kept spans stay in
// memory until the end (a request of `run` is 14 spans, about 13 KB as JSON).
const maxSpansFileRequests = 10000

// spansFileFlags are run's and load's --spans-file and --spans-file-requests.
type spansFileFlags struct {
	path     string
	requests int
}

func (f *spansFileFlags) declare(s *settings) {
	s.str(&f.path, "spans-file", "", "write the spans this process recorded of the slowest completed requests (--spans-file-requests) to FILE (-: stdout) as JSON lines; draw one with `kretrieve trace --spans-file FILE TRACE_ID`")
	s.integer(&f.requests, "spans-file-requests", 100, fmt.Sprintf("how many of the slowest completed requests --spans-file holds (1-%d; kept in memory until the end)", maxSpansFileRequests))
}

func (f spansFileFlags) validate() error {
	if f.requests < 1 || f.requests > maxSpansFileRequests {
		return fmt.Errorf("spans-file-requests: must be between 1 and %d", maxSpansFileRequests)
	}
	return nil
}

// recorder returns the span processor that summarises the run and keeps
// the slowest requests' spans: the slowest for the summary, and as many as
// the spans file holds when there is one.
func (f spansFileFlags) recorder() *runsummary.Recorder {
	keep := 1
	if f.path != "" {
		keep = f.requests
	}
	return runsummary.NewRecorder(otelnames.SpanRequest, string(otelnames.RequestOutcome), runsummary.WithKeepSlowest(keep))
}

// write writes the recorder's kept traces to the spans file, if any ("-":
// stdout), and returns how many.
func (f spansFileFlags) write(rec *runsummary.Recorder, stdout io.Writer) (int, error) {
	if f.path == "" {
		return 0, nil
	}
	traces := rec.Traces()
	file, err := createOutput(f.path, stdout)
	if err != nil {
		return 0, fmt.Errorf("spans file: %w", err)
	}
	if err := spans.WriteSpans(file, traces); err != nil {
		return 0, errors.Join(fmt.Errorf("spans file: %w", err), file.Close())
	}
	if err := file.Close(); err != nil {
		return 0, fmt.Errorf("spans file: %w", err)
	}
	return len(traces), nil
}

// save writes the recorder's kept traces to the spans file, if any, and
// says so on stderr.
func (f spansFileFlags) save(rec *runsummary.Recorder, stdout, stderr io.Writer) error {
	n, err := f.write(rec, stdout)
	if err == nil && f.path != "" {
		fmt.Fprintf(stderr, "spans of the %d slowest completed requests written to %s\n", n, outputName(f.path))
	}
	return err
}
