// SPDX-License-Identifier: Apache-2.0

package pipeline_test

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/corpus"
	"github.com/kretrieve/kretrieve/gateway"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/search"
)

// TestLiveDocumentsThroughTheGateway runs the workers over a follower of
// the documents topic: a document published to the topic is found
// through the gateway with its version and each stage's index_freshness;
// deleted, it is found no more; and applying it was a sampled process span
// of its own trace, after its send span.
func TestLiveDocumentsThroughTheGateway(t *testing.T) {
	h := newHarness(t, 3)
	p := h.pipeline()
	f, err := p.NewFollower(t.Context(), "live", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	if err := f.WaitReady(t.Context()); err != nil {
		t.Fatal(err)
	}
	ws, err := p.StartWorkers(ctx, f.Index(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = ws.Wait()
		<-done
		_ = f.Close()
	})
	srv, _ := h.gateway(gateway.Config{})

	// Published as `kretrieve ingest` does, through the pipeline's traced client.
	pub, err := kgo.NewClient(p.ClientOptions(p.Tracer(""))...)
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	d := search.Document{ID: "kb-walrus", Title: "The walrus operator", Body: "walrus assignment expressions, live from Kafka", Source: "test"}
	v, err := corpus.EncodeDocument(d)
	if err != nil {
		t.Fatal(err)
	}
	topic := p.Topology().Documents
	if err := pub.ProduceSync(t.Context(), &kgo.Record{Topic: topic, Key: []byte(d.ID), Value: v}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	var body httpResult
	poll.Until(t, 20*time.Second, func() bool {
		body = post(t, srv.URL+"/v1/search", "application/json", `{"query":"walrus assignment"}`, nil)
		docs, _ := body.body["documents"].([]any)
		return body.status == http.StatusOK && len(docs) > 0 && docs[0].(map[string]any)["id"] == d.ID
	}, "the published document found through the gateway")
	// Asked again: the stages read their freshness before they search, so
	// the answer that first found the document may predate it.
	body = post(t, srv.URL+"/v1/search", "application/json", `{"query":"walrus assignment"}`, nil)
	first := body.body["documents"].([]any)[0].(map[string]any)
	if first["version"] != d.Hash() {
		t.Errorf("version %v, want %s", first["version"], d.Hash())
	}
	fresh, _ := body.body["index_freshness"].([]any)
	var stages []string
	for _, e := range fresh {
		m := e.(map[string]any)
		stages = append(stages, m["stage"].(string))
		if pos, _ := m["position"].(float64); pos < 1 {
			t.Errorf("index_freshness entry %v: position below 1", m)
		}
	}
	if !slices.Equal(stages, []string{messages.StageRetrieval, messages.StageEnrichment}) {
		t.Errorf("index_freshness %s, want an entry per stage", body.raw)
	}

	if err := pub.ProduceSync(t.Context(), &kgo.Record{Topic: topic, Key: []byte(d.ID)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 20*time.Second, func() bool {
		body = post(t, srv.URL+"/v1/search", "application/json", `{"query":"walrus assignment"}`, nil)
		docs, _ := body.body["documents"].([]any)
		return body.status == http.StatusOK && !slices.ContainsFunc(docs, func(x any) bool { return x.(map[string]any)["id"] == d.ID })
	}, "the deleted document gone from the gateway's answers")

	// The document's trace: its send span, then its process span at the
	// follower (sampled: the harness samples everything).
	var send, process bool
	for _, s := range h.recorded() {
		send = send || s.Name == "send "+topic
		process = process || s.Name == "process "+topic
	}
	if !send || !process {
		t.Errorf("spans of the document: send %v, process %v", send, process)
	}
}
