// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/corpus"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/pipeline"
	"github.com/kretrieve/kretrieve/search"
)

// ingestCommand is "kretrieve ingest".
func (e *cli) ingestCommand() *cobra.Command {
	return e.command(&cobra.Command{
		Use:     "ingest [--jsonl FILE] [--delete ID]...",
		GroupID: "pipeline",
		Short:   "Publish documents to the documents topic (Go stdlib docs or --jsonl FILE; --delete ID)",
		Long: `Publish documents to the compacted documents topic (--topic-documents), which
every worker's index follows: the Go standard library docs, or --jsonl FILE's
documents (the format of index --jsonl; - reads stdin). Each record's key is the
document id, its value the document as one JSON object; --delete ID publishes a
tombstone, which deletes the document (with --delete and no --jsonl nothing else
is published).

Lines are checked as index --jsonl checks them, and a document's value may be at
most 1000 KiB: bad lines are reported with their numbers and skipped, or with
--strict the whole file is refused and nothing is published. The topic is read
first: a document whose content hash is already the latest for its id is not
published again, nor is a delete of an id the topic does not hold, so
re-ingesting an unchanged corpus publishes nothing. Every record carries W3C
trace context and the pathway header. The topic is created compacted when
missing; an existing topic that is not compacted is an error.

The command exits non-zero when a line was refused or a record was not
acknowledged, and says how many.`,
		Example: `  kretrieve ingest                                  # the Go standard library docs
  kretrieve ingest --jsonl docs.jsonl --strict
  cat docs.jsonl | kretrieve ingest --jsonl -
  kretrieve ingest --delete faq-12 --delete faq-13`,
		Args: noArgs,
	}, bind(func(ctx context.Context, c ingestConfig) error { return runIngest(ctx, c, e.stdin, e.stdout, e.stderr) }))
}

// ingestConfig configures the ingest command.
type ingestConfig struct {
	commonConfig
	jsonl   string
	strict  bool
	goroot  string
	deletes []string
}

// flags declares the flags of an ingestConfig on s and returns the check
// of their values, run once they are parsed.
func (c *ingestConfig) flags(s *settings) (check func(args []string) error) {
	c.declare(s, "ingest", kafkaclient.DefaultBrokers)
	s.str(&c.jsonl, "jsonl", "", `publish FILE's documents, one JSON object per line as index --jsonl reads them (-: stdin; default: the Go standard library docs, unless --delete is given)`)
	s.boolean(&c.strict, "strict", false, "with --jsonl: refuse the whole file at the first bad line, publishing nothing")
	s.str(&c.goroot, "goroot", "", "Go installation to take the standard library docs from (default: this toolchain's GOROOT)")
	declareDeletes(s, &c.deletes)
	return func(args []string) error {
		errs := []error{c.validate(), validateBrokers(c.brokers)}
		if c.strict && c.jsonl == "" {
			errs = append(errs, errors.New("strict: only applies with --jsonl"))
		}
		for _, id := range c.deletes {
			if strings.TrimSpace(id) == "" || len(id) > messages.MaxDocumentIDBytes || !utf8.ValidString(id) {
				errs = append(errs, fmt.Errorf("delete %.80q: a document id is 1 to %d bytes of UTF-8, not only spaces", id, messages.MaxDocumentIDBytes))
			}
		}
		return errors.Join(errs...)
	}
}

// declareDeletes declares --delete, a flag given once per id. Its variable,
// KRETRIEVE_DELETE, holds comma-separated ids.
func declareDeletes(s *settings, p *[]string) {
	s.list(p, "delete", "publish a tombstone deleting the document with this id (repeat the flag for more; the variable: comma-separated ids)")
}

// ingestBatchMaxBytes is the producer's largest record batch: room for
// a document value of messages.MaxDocumentBytes with its key and headers,
// under Kafka's default message.max.bytes (1048588). franz-go's own
// default (1000012 bytes) is smaller than the largest document.
const ingestBatchMaxBytes = messages.MaxDocumentBytes + 16<<10

// progressInterval is how often the progress line is redrawn.
const progressInterval = 100 * time.Millisecond

// runIngest reads the documents, then publishes those the documents topic
// does not hold yet and the tombstones of --delete.
func runIngest(ctx context.Context, cfg ingestConfig, stdin io.Reader, stdout, stderr io.Writer) error {
	start := time.Now()
	docs, refused, err := ingestDocuments(ctx, cfg, stdin, stderr)
	if err != nil {
		return err
	}
	return command{role: "ingest", connect: checkKafka}.run(ctx, cfg.commonConfig, stderr, func(comp *component, p *pipeline.Pipeline) error {
		n, err := publishDocuments(ctx, p, comp, docs, cfg.deletes, refused, stderr)
		if n != nil {
			fmt.Fprintf(stdout, "ingest: %s (%s)\n", n.summary(cfg.topics.Documents), time.Since(start).Round(time.Millisecond))
		}
		return err
	})
}

// publishDocuments publishes docs and deletes to p's documents topic
// (ensured compacted), skipping what the topic already holds, with
// progress on stderr when it is a terminal, and returns the counts (nil
// when nothing could be published) and the error that says what was
// refused or not acknowledged. refused counts documents refused before.
func publishDocuments(ctx context.Context, p *pipeline.Pipeline, comp *component, docs []search.Document, deletes []string, refused int, stderr io.Writer) (*ingestTotals, error) {
	topic := p.Topology().Documents
	client, err := kgo.NewClient(append(p.ClientOptions(p.Tracer("")), kgo.ProducerBatchMaxBytes(ingestBatchMaxBytes))...)
	if err != nil {
		return nil, err
	}
	defer client.Close()
	if err := kafkaclient.EnsureCompactedTopics(ctx, client, p.Config().Kafka, topic); err != nil {
		return nil, err
	}
	hashes, err := readDocumentHashes(ctx, kafkaOptions(p, nil), topic, comp.logger)
	if err != nil {
		return nil, fmt.Errorf("read the documents topic %s: %w", topic, err)
	}
	pub := &ingestPublisher{client: client, topic: topic, hashes: hashes, stderr: stderr}
	pub.counts.refused.Store(int64(refused))
	stop := pub.showProgress(isTerminal(stderr), len(docs)+refused)
	pub.publish(ctx, docs, deletes)
	flushErr := client.Flush(ctx)
	stop()
	n := pub.counts.snapshot()
	return &n, errors.Join(flushErr, n.err(pub.firstErr()))
}

// ingestDocuments returns the documents to publish: --jsonl's, the Go
// standard library's when neither --jsonl nor --delete is given, or none.
// Bad lines are printed to stderr and counted in refused; with --strict
// the first one is the error. A document also given to --delete is an
// error: publishing and deleting it at once says nothing clear.
func ingestDocuments(ctx context.Context, cfg ingestConfig, stdin io.Reader, stderr io.Writer) (docs []search.Document, refused int, err error) {
	switch {
	case cfg.jsonl != "":
		name, r := cfg.jsonl, stdin
		if cfg.jsonl == "-" {
			name = "stdin"
		} else {
			f, err := os.Open(cfg.jsonl)
			if err != nil {
				return nil, 0, fmt.Errorf("open jsonl: %w", err)
			}
			defer f.Close()
			r = f
		}
		var bad []corpus.LineError
		docs, bad, err = corpus.ReadJSONLForTopic(r, cfg.strict)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w (nothing published)", name, err)
		}
		for _, b := range bad {
			fmt.Fprintf(stderr, "%s: refused %v\n", name, &b)
		}
		refused = len(bad)
	case len(cfg.deletes) == 0:
		if docs, err = corpus.GoStdlib(ctx, cfg.goroot); err != nil {
			return nil, 0, err
		}
	}
	for _, d := range docs {
		if slices.Contains(cfg.deletes, d.ID) {
			return nil, 0, fmt.Errorf("delete %q: the document is also to be published; give it to one of --jsonl and --delete (nothing published)", d.ID)
		}
	}
	return docs, refused, nil
}

// readDocumentHashes reads the documents topic from its log start to the
// end offsets it has now (readDocumentsTopic) and returns the content
// hash of each id's latest document; a tombstone removes the id.
func readDocumentHashes(ctx context.Context, opts []kgo.Opt, topic string, logger *slog.Logger) (map[string]string, error) {
	hashes := map[string]string{}
	foreign := 0
	_, _, err := readDocumentsTopic(ctx, opts, topic, func(r *kgo.Record) {
		if !foldRecord(hashes, r) {
			foreign++
		}
	})
	if err != nil {
		return nil, err
	}
	if foreign > 0 {
		logger.WarnContext(ctx, "records without a key on the documents topic ignored", "topic", topic, "records", foreign)
	}
	return hashes, nil
}

// foldRecord applies one record of the documents topic to hashes: a
// tombstone removes its key, any other value sets the key's hash, from
// the HeaderDocumentHash header when it is well-formed, else from the
// parsed value ("" when the value is not a valid document, which no
// document's hash equals). A control record or a record without a key
// changes nothing; it returns false for the latter.
func foldRecord(hashes map[string]string, r *kgo.Record) bool {
	switch {
	case r.Attrs.IsControl():
		return true
	case len(r.Key) == 0:
		return false
	case r.Value == nil:
		delete(hashes, string(r.Key))
		return true
	}
	hash := ""
	for _, h := range r.Headers {
		if h.Key == messages.HeaderDocumentHash {
			hash = string(h.Value)
		}
	}
	if !validHash(hash) {
		hash = ""
		if d, err := corpus.ParseDocument(r.Value); err == nil {
			hash = d.Hash()
		}
	}
	hashes[string(r.Key)] = hash
	return true
}

// validHash reports whether h has the form of search.Document.Hash: 32
// lower-case hex digits.
func validHash(h string) bool {
	if len(h) != 32 {
		return false
	}
	for _, c := range []byte(h) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// ingestCounts are the counts of one ingest, updated as acknowledgements
// arrive.
type ingestCounts struct {
	published, unchanged, refused, deleted, absent, failed atomic.Int64
}

// ingestTotals is a snapshot of ingestCounts.
type ingestTotals struct {
	published, unchanged, refused, deleted, absent, failed int64
}

func (c *ingestCounts) snapshot() ingestTotals {
	return ingestTotals{c.published.Load(), c.unchanged.Load(), c.refused.Load(), c.deleted.Load(), c.absent.Load(), c.failed.Load()}
}

// summary is the ingest's one-line report.
func (n ingestTotals) summary(topic string) string {
	s := fmt.Sprintf("%d documents to %s: %d published, %d unchanged, %d refused, %d deleted",
		n.published+n.unchanged+n.refused+n.failed, topic, n.published, n.unchanged, n.refused, n.deleted)
	if n.absent > 0 {
		s += fmt.Sprintf(", %d deletes of ids not in the topic (nothing published)", n.absent)
	}
	if n.failed > 0 {
		s += fmt.Sprintf(", %d not acknowledged", n.failed)
	}
	return s
}

// err is the command's error: how many lines were refused and records
// not acknowledged (first: the first produce error), or nil.
func (n ingestTotals) err(first error) error {
	var parts []string
	if n.refused > 0 {
		parts = append(parts, fmt.Sprintf("%d documents refused (see the lines above)", n.refused))
	}
	if n.failed > 0 {
		parts = append(parts, fmt.Sprintf("%d records not acknowledged (first: %v)", n.failed, first))
	}
	if len(parts) == 0 {
		return nil
	}
	return fmt.Errorf("ingest: %s", strings.Join(parts, ", "))
}

// ingestPublisher publishes documents and tombstones asynchronously,
// counting acknowledgements.
type ingestPublisher struct {
	client *kgo.Client
	topic  string
	// hashes is the topic's latest hash per id, read before publishing.
	hashes map[string]string
	stderr io.Writer
	counts ingestCounts

	mu    sync.Mutex
	first error
}

// publish produces every document whose hash differs from the topic's,
// then a tombstone for every id of deletes the topic holds. Documents
// that cannot be encoded are refused and reported by id.
func (p *ingestPublisher) publish(ctx context.Context, docs []search.Document, deletes []string) {
	for _, d := range docs {
		value, err := corpus.EncodeDocument(d)
		if err != nil {
			fmt.Fprintf(p.stderr, "refused %v\n", err)
			p.counts.refused.Add(1)
			continue
		}
		hash := d.Hash()
		if h, ok := p.hashes[d.ID]; ok && h == hash {
			p.counts.unchanged.Add(1)
			continue
		}
		p.hashes[d.ID] = hash
		r := &kgo.Record{Topic: p.topic, Key: []byte(d.ID), Value: value,
			Headers: []kgo.RecordHeader{{Key: messages.HeaderDocumentHash, Value: []byte(hash)}}}
		p.client.Produce(ctx, r, p.acked(&p.counts.published))
	}
	for _, id := range deletes {
		if _, ok := p.hashes[id]; !ok {
			fmt.Fprintf(p.stderr, "delete %q: not in %s, nothing published\n", id, p.topic)
			p.counts.absent.Add(1)
			continue
		}
		delete(p.hashes, id)
		p.client.Produce(ctx, &kgo.Record{Topic: p.topic, Key: []byte(id)}, p.acked(&p.counts.deleted))
	}
}

// acked returns the promise of a record that counts in ok once
// acknowledged, else as failed.
func (p *ingestPublisher) acked(ok *atomic.Int64) func(*kgo.Record, error) {
	return func(r *kgo.Record, err error) {
		if err == nil {
			ok.Add(1)
			return
		}
		p.counts.failed.Add(1)
		p.mu.Lock()
		if p.first == nil {
			p.first = fmt.Errorf("%s: %w", r.Key, err)
		}
		p.mu.Unlock()
	}
}

func (p *ingestPublisher) firstErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.first
}

// showProgress redraws a progress line on stderr every progressInterval
// when on (stderr is a terminal), until the returned stop is called,
// which erases it.
func (p *ingestPublisher) showProgress(on bool, total int) (stop func()) {
	if !on {
		return func() {}
	}
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(progressInterval)
		defer t.Stop()
		for {
			n := p.counts.snapshot()
			fmt.Fprintf(p.stderr, "\r\x1b[Kingest: %d/%d: %d published, %d unchanged, %d refused",
				n.published+n.unchanged+n.refused+n.failed, total, n.published, n.unchanged, n.refused)
			select {
			case <-done:
				fmt.Fprint(p.stderr, "\r\x1b[K")
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-exited }
}
