// SPDX-License-Identifier: Apache-2.0

package rerank

import (
	"reflect"
	"testing"

	"github.com/kretrieve/kretrieve/search"
)

func doc(id, body string) search.Document {
	return search.Document{ID: id, Title: id, Body: body, Kind: "func"}
}

func TestRerank(t *testing.T) {
	docs := func() []Scored {
		return []Scored{
			{Doc: doc("net/url.Values", "Values maps a string key to a list of values."), BM25: 10},
			{Doc: doc("net/url.ParseQuery", "ParseQuery parses the URL-encoded query string."), BM25: 8},
			{Doc: search.Document{ID: "net/url", Title: "net/url", Body: "Package url parses URLs.", Kind: "package"}, BM25: 3},
		}
	}
	tests := []struct {
		query string
		want  []string
		top   float64
	}{
		{"parse query string", []string{"net/url.Values", "net/url.ParseQuery", "net/url"}, 1},                     // plain words: BM25 order
		{"how do I use ParseQuery?", []string{"net/url.ParseQuery", "net/url.Values", "net/url"}, 0.8 + NameBoost}, // the identifier
		{"parsequery", []string{"net/url.ParseQuery", "net/url.Values", "net/url"}, 0.8 + NameBoost},
		{"docs for net/url.ParseQuery()", []string{"net/url.ParseQuery", "net/url.Values", "net/url"}, 0.8 + NameBoost + TitleBoost},
		{"net/url", []string{"net/url", "net/url.Values", "net/url.ParseQuery"}, 0.3 + TitleBoost},
		{"url", []string{"net/url.Values", "net/url.ParseQuery", "net/url"}, 1}, // a package name is an everyday word
		{"read values", []string{"net/url.Values", "net/url.ParseQuery", "net/url"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			got := Rerank(tt.query, docs())
			if !reflect.DeepEqual(ids(got), tt.want) {
				t.Fatalf("order %v, want %v", ids(got), tt.want)
			}
			if got[0].Score != tt.top {
				t.Fatalf("top score %v, want %v", got[0].Score, tt.top)
			}
		})
	}
	if got := Rerank("q", nil); len(got) != 0 {
		t.Fatal("nil input")
	}
}

func TestDedupe(t *testing.T) {
	body := "Len returns the number of bytes of the unread portion of the buffer"
	docs := []Scored{
		{Doc: doc("bytes.Buffer.Len", body)},
		{Doc: doc("vendored/bytes.Buffer.Len", body+".")},                               // same kind, identifier and text: duplicate
		{Doc: doc("strings.Reader.Size", body)},                                         // same text, other identifier: kept
		{Doc: search.Document{ID: "x.Len", Title: "x.Len", Body: body, Kind: "method"}}, // other kind: kept
		{Doc: doc("a.Len", "something else entirely")},
		{Doc: doc("e1.E", "")},
		{Doc: doc("e2.E", "")},
	}
	kept, dropped := Dedupe(docs, DefaultDuplicateThreshold)
	want := []string{"bytes.Buffer.Len", "strings.Reader.Size", "x.Len", "a.Len", "e1.E", "e2.E"}
	if dropped != 1 || !reflect.DeepEqual(ids(kept), want) {
		t.Fatalf("kept %v dropped %d", ids(kept), dropped)
	}
	if len(docs) != 7 {
		t.Fatal("input modified")
	}
}

func ids(ds []Scored) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Doc.ID
	}
	return out
}
