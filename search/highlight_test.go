// SPDX-License-Identifier: Apache-2.0

package search

import (
	"context"
	"errors"
	"html"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// plain turns a Highlighted snippet into the text it shows.
func plain(snippet string) string {
	s := strings.ReplaceAll(snippet, MarkStart, "")
	s = strings.ReplaceAll(s, MarkEnd, "")
	return html.UnescapeString(s)
}

// marked returns the texts wrapped in marks in snippet.
func marked(snippet string) []string {
	var out []string
	for {
		_, rest, ok := strings.Cut(snippet, MarkStart)
		if !ok {
			return out
		}
		term, after, ok := strings.Cut(rest, MarkEnd)
		if !ok {
			return append(out, "unclosed:"+rest)
		}
		out = append(out, term)
		snippet = after
	}
}

func TestHighlight(t *testing.T) {
	docs := smallDocs(t)
	byID := make(map[string]Document)
	for _, d := range docs {
		byID[d.ID] = d
	}
	ix := openSmall(t)
	tests := []struct {
		name     string
		query    string
		ids      []string
		maxRunes int
		// want maps each id expected in the result to the terms marked in
		// its snippet (nil: none, the snippet is the start of the body).
		want map[string][]string
	}{
		{
			name:     "stemmed terms marked",
			query:    "parse query",
			ids:      []string{"net/url.ParseQuery", "net/url"},
			maxRunes: 60,
			want: map[string][]string{
				"net/url.ParseQuery": {"parses", "query"},
				"net/url":            {"parses", "query"},
			},
		},
		{
			name:     "missing and duplicate ids",
			query:    "gzip",
			ids:      []string{"nope", "compress/gzip", "", "compress/gzip", "also/missing"},
			maxRunes: 200,
			want:     map[string][]string{"compress/gzip": {"gzip", "gzip"}},
		},
		{
			name:     "no match in body",
			query:    "gzip",
			ids:      []string{"recipes/pancakes", "compress/gzip.NewReader"},
			maxRunes: 30,
			want: map[string][]string{
				"recipes/pancakes":        nil,
				"compress/gzip.NewReader": nil,
			},
		},
		{
			name:     "blank query",
			query:    " ",
			ids:      []string{"archive/tar"},
			maxRunes: 100,
			want:     map[string][]string{"archive/tar": nil},
		},
		{
			name:     "markup in body is escaped",
			query:    "script",
			ids:      []string{"html/escaping"},
			maxRunes: 200,
			want:     map[string][]string{"html/escaping": {"script", "script"}},
		},
		{
			name:     "no ids",
			query:    "gzip",
			maxRunes: 100,
			want:     map[string][]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ix.Highlight(t.Context(), tt.query, tt.ids, tt.maxRunes)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Errorf("got %d documents, want %d: %v", len(got), len(tt.want), got)
			}
			for id, terms := range tt.want {
				h, ok := got[id]
				if !ok {
					t.Errorf("%s missing", id)
					continue
				}
				if !reflect.DeepEqual(h.Document, byID[id]) {
					t.Errorf("%s: document %+v, want %+v", id, h.Document, byID[id])
				}
				if m := marked(h.Snippet); !reflect.DeepEqual(m, terms) {
					t.Errorf("%s: marked %q, want %q in %q", id, m, terms, h.Snippet)
				}
				text := plain(h.Snippet)
				if body := byID[id].Body; !strings.Contains(body, strings.Trim(text, "…")) {
					t.Errorf("%s: snippet %q is not from the body %q", id, text, body)
				}
				// About maxRunes: whole words within the fragment, plus "…"
				// at either end.
				if n := utf8.RuneCountInString(text); n > tt.maxRunes+2 {
					t.Errorf("%s: snippet has %d runes, max %d: %q", id, n, tt.maxRunes, text)
				}
				if terms == nil && !strings.HasPrefix(byID[id].Body, strings.TrimSuffix(text, "…")) {
					t.Errorf("%s: unmatched snippet %q is not the start of the body", id, text)
				}
				if strings.Contains(h.Snippet, "<script") || strings.Contains(h.Snippet, "& ") {
					t.Errorf("%s: unescaped markup in %q", id, h.Snippet)
				}
			}
		})
	}
}

func TestHighlightWholeWords(t *testing.T) {
	body := strings.Repeat("alpha beta gamma delta ", 20) + "the needle sits here " + strings.Repeat("epsilon zeta eta theta ", 20)
	ix := mustMemory(t, "words", []Document{{ID: "d", Body: body}})
	got, err := ix.Highlight(t.Context(), "needle", []string{"d"}, 50)
	if err != nil {
		t.Fatal(err)
	}
	s := got["d"].Snippet
	if !strings.Contains(s, "<mark>needle</mark>") || !strings.HasPrefix(s, "…") || !strings.HasSuffix(s, "…") {
		t.Fatalf("snippet %q", s)
	}
	words := map[string]bool{"the": true, "needle": true, "sits": true, "here": true}
	for _, w := range strings.Fields("alpha beta gamma delta epsilon zeta eta theta") {
		words[w] = true
	}
	for _, w := range strings.Fields(strings.Trim(plain(s), "…")) {
		if !words[w] {
			t.Errorf("snippet %q has a cut word %q", s, w)
		}
	}
}

func TestHighlightErrors(t *testing.T) {
	ix := mustMemory(t, "small", smallDocs(t))
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name     string
		ctx      context.Context
		query    string
		maxRunes int
		want     error
	}{
		{"zero runes", t.Context(), "gzip", 0, ErrInvalidQuery},
		{"negative runes", t.Context(), "gzip", -5, ErrInvalidQuery},
		{"long query", t.Context(), strings.Repeat("q", MaxQueryBytes+1), 100, ErrInvalidQuery},
		{"cancelled", cancelled, "gzip", 100, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ix.Highlight(tt.ctx, tt.query, []string{"compress/gzip"}, tt.maxRunes)
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
}
