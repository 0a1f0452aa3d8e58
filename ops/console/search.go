// SPDX-License-Identifier: Apache-2.0

package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"strings"

	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/producer"
	"github.com/kretrieve/kretrieve/search"
)

// maxSearchBody bounds a search request's body.
const maxSearchBody = 64 << 10

type searchBody struct {
	Query string `json:"query"`
	TopK  int    `json:"top_k"`
}

type searchDoc struct {
	RequestID string           `json:"request_id"`
	TraceID   string           `json:"trace_id"`
	Documents []resultDocument `json:"documents"`
	Timings   messages.Timings `json:"timings"`
	Spans     []apiSpan        `json:"spans"`
	// SpansSource is where the spans came from: "console", "jaeger" or ""
	// (none found yet; GET /api/traces/{id} may find them later).
	SpansSource string `json:"spans_source"`
}

// resultDocument is a result's document with its snippet as plain text and
// the byte ranges of its highlights.
type resultDocument struct {
	ID         string   `json:"id"`
	Title      string   `json:"title"`
	URL        string   `json:"url"`
	Score      float64  `json:"score"`
	Snippet    string   `json:"snippet"`
	Highlights [][2]int `json:"highlights"`
}

// search publishes a request through the console's request client, waits
// for its result and answers with it and its trace's spans.
func (c *Console) search(w http.ResponseWriter, r *http.Request, l *live) {
	var body searchBody
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxSearchBody))
	if err := dec.Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "body: "+err.Error())
		return
	}
	req := messages.Request{Query: body.Query, TopK: body.TopK}.WithDefaults()
	if err := req.Validate(); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	client, err := l.requestClient(r.Context())
	if errors.Is(err, errNoSearch) {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "request client: "+err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), c.cfg.SearchTimeout)
	defer cancel()
	call, err := client.Start(ctx, req, true)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "publish: "+err.Error())
		return
	}
	out, err := call.Wait(ctx, c.cfg.SearchTimeout)
	switch {
	case errors.Is(err, producer.ErrNotAcknowledged):
		writeError(w, http.StatusGatewayTimeout, fmt.Sprintf("not acknowledged by Kafka within %s; the request may still be published (trace %s)", c.cfg.SearchTimeout, call.TraceID))
		return
	case errors.Is(err, producer.ErrTimeout):
		writeError(w, http.StatusGatewayTimeout, fmt.Sprintf("no result within %s (trace %s)", c.cfg.SearchTimeout, call.TraceID))
		return
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	case out.Failed:
		writeError(w, http.StatusBadGateway, fmt.Sprintf("dead-lettered on %s: %s (trace %s)", out.Topic, out.Reason, call.TraceID))
		return
	}
	doc := searchDoc{RequestID: call.Request.RequestID, TraceID: call.TraceID, Documents: []resultDocument{}, Timings: out.Result.Timings, Spans: []apiSpan{}}
	for _, d := range out.Result.Documents {
		text, marks := plainSnippet(d.Snippet)
		doc.Documents = append(doc.Documents, resultDocument{ID: d.ID, Title: d.Title, URL: d.URL, Score: d.Score, Snippet: text, Highlights: marks})
	}
	if call.TraceID != "" {
		spans, source, err := c.lookupTrace(ctx, call.TraceID)
		if err == nil && len(spans) > 0 {
			doc.Spans, doc.SpansSource = apiSpans(spans), source
		}
	}
	writeJSON(w, http.StatusOK, doc)
}

// plainSnippet turns an enrichment snippet (HTML-escaped text with the
// matches in search.MarkStart…search.MarkEnd) into plain text and the byte
// ranges [start, end) of the matches in it: the browser inserts the text as
// text and builds the marks itself, never parsing HTML from a record.
func plainSnippet(s string) (string, [][2]int) {
	var b strings.Builder
	marks := [][2]int{}
	for {
		i := strings.Index(s, search.MarkStart)
		if i < 0 {
			break
		}
		j := strings.Index(s[i+len(search.MarkStart):], search.MarkEnd)
		if j < 0 {
			break
		}
		b.WriteString(html.UnescapeString(s[:i]))
		start := b.Len()
		b.WriteString(html.UnescapeString(s[i+len(search.MarkStart) : i+len(search.MarkStart)+j]))
		marks = append(marks, [2]int{start, b.Len()})
		s = s[i+len(search.MarkStart)+j+len(search.MarkEnd):]
	}
	b.WriteString(html.UnescapeString(s))
	return b.String(), marks
}
