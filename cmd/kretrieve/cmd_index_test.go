// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/corpus"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/search"
)

// indexCmd runs kretrieve index with args.
func indexCmd(t *testing.T, env func(string) string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = runIO(t.Context(), append([]string{"index"}, args...), env, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), err
}

// digestOf is the digest of documents as ingest publishes them from
// JSONL lines.
func digestOf(t *testing.T, lines string) search.Digest {
	t.Helper()
	docs, bad, err := corpus.ReadJSONLForTopic(strings.NewReader(lines), true)
	if err != nil || len(bad) > 0 {
		t.Fatalf("%v %v", err, bad)
	}
	var d search.Digest
	for _, doc := range docs {
		d.Add(doc.ID, doc.Hash())
	}
	return d
}

// TestIndexFromTopic: index --from-topic builds the topic's final state
// (an update and a delete applied), stamped with the topic's end offsets;
// a follower started on the snapshot applies only the records published
// after it and ends with the topic's documents.
func TestIndexFromTopic(t *testing.T) {
	env, client := ingestFixture(t)
	topic := messages.DefaultDocumentsTopic
	for _, args := range [][]string{
		{"--jsonl", "-"},
		{"--delete", "gamma"},
	} {
		lines := documentsLines("alpha", "beta", "gamma", "delta")
		if _, stderr, err := ingest(t, env, lines, args...); err != nil {
			t.Fatalf("ingest %v: %v\n%s", args, err, stderr)
		}
	}
	changed := strings.Replace(documentsLines("alpha", "beta", "delta"), "the body of beta", "beta, rewritten", 1)
	if _, stderr, err := ingest(t, env, changed, "--jsonl", "-"); err != nil {
		t.Fatalf("ingest: %v\n%s", err, stderr)
	}
	ends := endOffsets(t, client, topic)
	dir := filepath.Join(t.TempDir(), "snapshot")
	stdout, stderr, err := indexCmd(t, env, "--index", dir, "--from-topic")
	if err != nil || !strings.Contains(stdout, `indexed 3 documents of retrieval.documents as "retrieval.documents" in `+dir+" at offsets ") {
		t.Fatalf("index --from-topic: %v\n%s%s", err, stdout, stderr)
	}
	want := digestOf(t, changed)
	ix, err := search.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	pos, digest, n := ix.Position(), ix.Digest(), ix.Len()
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if pos.Topic != topic || !maps.Equal(pos.Offsets, ends) || digest != want || n != 3 {
		t.Fatalf("snapshot: position %+v (topic's ends %v), digest %v (want %v), %d documents", pos, ends, digest, want, n)
	}
	// As new as the last record published: a worker started on it stamps
	// its results with freshness before it applies anything.
	if age := time.Since(pos.Newest); pos.Newest.IsZero() || age < 0 || age > time.Minute {
		t.Errorf("snapshot's newest record %v: want the last ingest's, moments ago", pos.Newest)
	}
	if !strings.Contains(stdout, "digest "+want.String()) {
		t.Errorf("output lacks the digest %v:\n%s", want, stdout)
	}

	// Two records after the snapshot: an update and a new document.
	final := strings.Replace(documentsLines("alpha", "beta", "delta", "epsilon"), "the body of beta", "beta, rewritten", 1)
	final = strings.Replace(final, "the body of alpha", "alpha, rewritten", 1)
	if stdout, stderr, err := ingest(t, env, final, "--jsonl", "-"); err != nil || !strings.Contains(stdout, "2 published") {
		t.Fatalf("ingest: %v\n%s%s", err, stdout, stderr)
	}
	f := startFollower(t, env, "retrieval", dir)
	ends = endOffsets(t, client, topic)
	poll.Until(t, 10*time.Second, func() bool { return caughtUp(f.Status(), ends) }, "the follower at the topic's ends %v: %+v", ends, f.Status())
	if st := f.Status(); st.Applied != 2 || st.Documents != 4 || st.Digest != digestOf(t, final).String() {
		t.Errorf("follower on the snapshot: applied %d records (want the 2 after it), %d documents, digest %s (want %v)",
			st.Applied, st.Documents, st.Digest, digestOf(t, final))
	}
}

// TestIndexFromTopicRefusals: --from-topic with --jsonl is refused, as is
// a topic holding no documents, and nothing is built.
func TestIndexFromTopicRefusals(t *testing.T) {
	env, _ := ingestFixture(t)
	jsonl := filepath.Join(t.TempDir(), "docs.jsonl")
	if err := os.WriteFile(jsonl, []byte(documentsLines("alpha")), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "idx")
	if _, _, err := indexCmd(t, env, "--index", dir, "--from-topic", "--jsonl", jsonl); err == nil || !strings.Contains(err.Error(), "from-topic: the documents come from the topic or from --jsonl, not both") {
		t.Errorf("--from-topic --jsonl: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var out, errOut bytes.Buffer
	err := runIO(ctx, []string{"index", "--index", dir, "--from-topic"}, env, strings.NewReader(""), &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "no documents to index: retrieval.documents holds none") {
		t.Errorf("an empty topic: %v\n%s%s", err, out.String(), errOut.String())
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s: %v, want nothing built", dir, err)
	}
}
