// SPDX-License-Identifier: Apache-2.0

package messages_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/messages"
)

func benchCandidates() messages.Candidates {
	c := messages.Candidates{
		RequestID: "01JDQ3Z7W8X2K4M6N8P0R2T4V6",
		Query:     "how does kafka rebalance consumer groups",
		TopK:      10,
		Timings:   messages.Timings{}.With(messages.StageTiming{Stage: messages.StageRetrieval, QueueMS: 2.5, WorkMS: 14.25}),
	}
	for i := range 10 {
		c.Candidates = append(c.Candidates, messages.Candidate{DocID: "doc-" + strconv.Itoa(i), Score: 10 - float64(i)/3})
	}
	return c
}

func benchResult() messages.Result {
	r := messages.Result{
		RequestID: "01JDQ3Z7W8X2K4M6N8P0R2T4V6",
		Timings: messages.Timings{Stages: []messages.StageTiming{
			{Stage: messages.StageRetrieval, QueueMS: 2.5, WorkMS: 14.25},
			{Stage: messages.StageEnrichment, QueueMS: 1.5, WorkMS: 6.75},
		}},
	}
	snippet := strings.Repeat("consumer group rebalancing moves partitions. ", 5)[:200]
	for i := range 10 {
		r.Documents = append(r.Documents, messages.Document{
			ID:      "doc-" + strconv.Itoa(i),
			Title:   "Kafka consumer groups, part " + strconv.Itoa(i),
			Score:   10 - float64(i)/3,
			Snippet: snippet,
			URL:     "https://docs.example.com/kafka/consumer-groups/" + strconv.Itoa(i),
			Source:  "docs",
		})
	}
	return r
}

func BenchmarkDecodeRequest(b *testing.B) {
	body := []byte(`{"schema_version":1,"request_id":"01JDQ3Z7W8X2K4M6N8P0R2T4V6","query":"how does kafka rebalance consumer groups","top_k":10}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := messages.DecodeRequest(body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeRequest(b *testing.B) {
	r := messages.Request{RequestID: "01JDQ3Z7W8X2K4M6N8P0R2T4V6", Query: "how does kafka rebalance consumer groups", TopK: 10}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := messages.EncodeRequest(r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeCandidates(b *testing.B) {
	c := benchCandidates()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := messages.EncodeCandidates(c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeCandidates(b *testing.B) {
	body, err := messages.EncodeCandidates(benchCandidates())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := messages.DecodeCandidates(body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeResult(b *testing.B) {
	r := benchResult()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := messages.EncodeResult(r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeResult(b *testing.B) {
	body, err := messages.EncodeResult(benchResult())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := messages.DecodeResult(body); err != nil {
			b.Fatal(err)
		}
	}
}
