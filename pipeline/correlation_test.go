// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/gateway"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/messages"
)

// docURLs returns the documents' URLs of a search answer, in order.
func docURLs(t *testing.T, res httpResult) []string {
	t.Helper()
	docs, _ := res.body["documents"].([]any)
	var urls []string
	for _, d := range docs {
		m, _ := d.(map[string]any)
		u, _ := m["url"].(string)
		urls = append(urls, u)
	}
	return urls
}

func searchBody(id, query string) string {
	return fmt.Sprintf(`{"request_id":%q,"query":%q,"top_k":3}`, id, query)
}

// Security #2: a second caller with the same request_id at the same gateway
// is refused with 409 and never gets the first caller's documents.
func TestGatewaySameRequestIDInFlightIs409(t *testing.T) {
	h := newHarness(t, 3) // no workers yet: the first call stays in flight
	srv, _ := h.gateway(gateway.Config{Timeout: time.Minute})
	type answer struct {
		query string
		res   httpResult
	}
	answers := make(chan answer, 2)
	for _, q := range []string{"parse a URL query string", "gzip"} {
		go func() {
			answers <- answer{q, post(t, srv.URL+"/v1/search", "application/json", searchBody("shared-1", q), nil)}
		}()
	}
	refused := <-answers // the one that came second is answered at once
	if refused.res.status != http.StatusConflict || refused.res.body["documents"] != nil {
		t.Fatalf("second caller: status %d body %s", refused.res.status, refused.res.raw)
	}
	e, _ := refused.res.body["error"].(map[string]any)
	if e["code"] != "request_id_in_use" || e["field"] != "request_id" {
		t.Fatalf("409 body %s", refused.res.raw)
	}
	stop := h.startWorkers()
	first := <-answers
	if first.res.status != http.StatusOK || first.res.body["request_id"] != "shared-1" {
		t.Fatalf("first caller: status %d body %s", first.res.status, first.res.raw)
	}
	// The first caller gets the documents of its own query.
	own := post(t, srv.URL+"/v1/search", "application/json", searchBody("reference-1", first.query), nil)
	if got, want := docURLs(t, first.res), docURLs(t, own); !slices.Equal(got, want) || len(got) == 0 {
		t.Fatalf("first caller got %v, its query gives %v", got, want)
	}
	// Reusing the completed id within the window is refused too.
	if again := post(t, srv.URL+"/v1/search", "application/json", searchBody("shared-1", first.query), nil); again.status != http.StatusConflict {
		t.Fatalf("reused id: status %d body %s", again.status, again.raw)
	}
	if again := post(t, srv.URL+"/v1/requests", "application/json", searchBody("shared-1", "gzip"), nil); again.status != http.StatusConflict {
		t.Fatalf("reused id on /v1/requests: status %d body %s", again.status, again.raw)
	}
	// The correlation header changes nothing in the trace: still one.
	stop()
	checkTrace(t, byTrace(h.recorded())[first.res.body["trace_id"].(string)], h.cfg, "POST /v1/search")
}

// Security #2: with two gateway instances, two callers sharing a request_id
// each get the documents of their own query.
func TestTwoGatewaysSameRequestIDGetTheirOwnResults(t *testing.T) {
	h := newHarness(t, 3)
	h.startWorkers()
	a, _ := h.gateway(gateway.Config{})
	b, _ := h.gateway(gateway.Config{})
	queries := []string{"parse a URL query string", "gzip"}
	var want [][]string
	for i, q := range queries {
		want = append(want, docURLs(t, post(t, a.URL+"/v1/search", "application/json", searchBody(fmt.Sprintf("ref-%d", i), q), nil)))
	}
	if slices.Equal(want[0], want[1]) {
		t.Fatalf("the two queries give the same documents %v: the test proves nothing", want[0])
	}
	type answer struct {
		i   int
		res httpResult
	}
	answers := make(chan answer, 2)
	for i, srv := range []string{a.URL, b.URL} {
		go func() {
			answers <- answer{i, post(t, srv+"/v1/search", "application/json", searchBody("twin-1", queries[i]), nil)}
		}()
	}
	for range 2 {
		ans := <-answers
		if ans.res.status != http.StatusOK {
			t.Fatalf("caller %d: status %d body %s", ans.i, ans.res.status, ans.res.raw)
		}
		if got := docURLs(t, ans.res); !slices.Equal(got, want[ans.i]) {
			t.Errorf("caller %d got %v, its query gives %v", ans.i, got, want[ans.i])
		}
	}
}

// Security #2: a result with the waited-for request_id but without the
// call's correlation value, or with another one, is not handed to the
// waiting call; it is counted as foreign.
func TestForgedResultIsNotHandedToTheWaiter(t *testing.T) {
	h := newHarness(t, 3) // no workers yet
	srv, c := h.gateway(gateway.Config{Timeout: time.Minute})
	done := make(chan httpResult, 1)
	go func() {
		done <- post(t, srv.URL+"/v1/search", "application/json", searchBody("forged-1", "gzip"), nil)
	}()
	// Wait until the request is published: the call is then waiting.
	raw := rawProducer(t, h)
	cons, err := kgo.NewClient(append(kafkaclient.Options(h.cfg.Kafka, h.logger, nil), kgo.ConsumeTopics(h.cfg.Topology().Requests()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cons.Close)
	ctx, cancel := context.WithTimeout(t.Context(), resultTimeout)
	defer cancel()
	var corr string
	for corr == "" {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatal("no request with a correlation header published")
		}
		for _, r := range fs.Records() {
			corr = hdrValue(r, messages.HeaderCorrelation)
		}
	}
	forged := `{"schema_version":2,"request_id":"forged-1","documents":[{"id":"evil","title":"forged","url":"https://evil.example/","snippet":"x","score":1}],"timings":{"stages":[]}}`
	for _, hs := range [][]kgo.RecordHeader{nil, {{Key: messages.HeaderCorrelation, Value: []byte(corr + "x")}}} {
		rec := &kgo.Record{Topic: h.cfg.Topology().Results(), Key: []byte("forged-1"), Value: []byte(forged), Headers: hs}
		if err := raw.ProduceSync(t.Context(), rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, func() bool { return c.Collector.Unexpected() == 2 }, "forged results counted as foreign (%d)", c.Collector.Unexpected())
	select {
	case res := <-done:
		t.Fatalf("answered with a forged result: status %d body %s", res.status, res.raw)
	default:
	}
	h.startWorkers()
	res := <-done
	if res.status != http.StatusOK || slices.Contains(docURLs(t, res), "https://evil.example/") {
		t.Fatalf("status %d body %s", res.status, res.raw)
	}
}
