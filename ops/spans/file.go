// SPDX-License-Identifier: Apache-2.0

package spans

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// WriteSpans writes the spans of traces as a spans file: JSON lines, one
// Span per line, trace after trace in the order given (a run's kept
// requests: slowest first).
func WriteSpans(w io.Writer, traces []Trace) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for _, t := range traces {
		for _, s := range t.Spans {
			if err := enc.Encode(s); err != nil {
				return fmt.Errorf("write span %s of trace %s: %w", s.SpanID, s.TraceID, err)
			}
		}
	}
	return bw.Flush()
}

// ReadSpans reads a file written by WriteSpans. Blank lines are skipped; a
// line that is not a span is an error naming its line number.
func ReadSpans(r io.Reader) ([]Span, error) {
	br := bufio.NewReader(r)
	var out []Span
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(b)) > 0 {
			var s Span
			if jerr := json.Unmarshal(b, &s); jerr != nil {
				return out, fmt.Errorf("line %d: %w", line, jerr)
			}
			if s.TraceID == "" || s.SpanID == "" {
				return out, fmt.Errorf("line %d: trace_id and span_id are required", line)
			}
			out = append(out, s)
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}
