// SPDX-License-Identifier: Apache-2.0

package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kretrieve/kretrieve/corpus"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/pipeline"
	"github.com/kretrieve/kretrieve/search"
	"github.com/kretrieve/kretrieve/tracing"
)

// indexCommand is "kretrieve index".
func (e *cli) indexCommand() *cobra.Command {
	return e.command(&cobra.Command{
		Use:     "index --index DIR [--jsonl FILE | --from-topic]",
		GroupID: "tools",
		Short:   "Build an on-disk index (Go stdlib docs, --jsonl FILE, or a snapshot of the documents topic)",
		Long: `Build an on-disk index in --index DIR: the Go standard library docs, or
--jsonl FILE's documents, which workers given --index DIR serve as they are,
static and read-only.

With --from-topic it builds a snapshot of the documents topic
(--topic-documents) instead: its final state, read from its log start to the
end offsets it has when the command starts, as workers apply it, stamped with
those offsets. A worker given --index DIR starts from the snapshot and follows
the topic from those offsets, instead of reading the whole topic: copy the
directory to a new worker's volume to start it fast.`,
		Example: `  kretrieve index --index ./idx
  kretrieve index --index ./idx --jsonl docs.jsonl --strict
  kretrieve index --index ./snapshot --from-topic --brokers kafka:9092
  kretrieve retrieval --index ./snapshot         # starts from it, then follows the topic`,
		Args: noArgs,
	}, bind(func(ctx context.Context, c indexConfig) error { return runIndex(ctx, c, e.stdout, e.stderr) }))
}

// indexConfig configures the index command.
type indexConfig struct {
	commonConfig
	index     string
	name      string
	jsonl     string
	strict    bool
	goroot    string
	fromTopic bool
}

// flags declares the flags of a indexConfig on s and returns the check of
// their values, run once they are parsed.
func (c *indexConfig) flags(s *settings) (check func(args []string) error) {
	c.declare(s, "index", kafkaclient.DefaultBrokers)
	s.str(&c.index, "index", "", "DIR to create the index in (must not exist or be empty)")
	s.str(&c.name, "index-name", "", "index name shown on spans (default: go-stdlib, the JSONL file's base name, or with --from-topic the topic's name)")
	s.str(&c.jsonl, "jsonl", "", `index FILE's documents, one JSON object per line: {"id","title","body","url","metadata":{...}} (default: the Go standard library docs)`)
	s.boolean(&c.strict, "strict", false, "with --jsonl: reject the whole file at the first bad line instead of skipping bad lines")
	s.str(&c.goroot, "goroot", "", "Go installation to take the standard library docs from (default: this toolchain's GOROOT)")
	s.boolean(&c.fromTopic, "from-topic", false, "build a snapshot of the documents topic (--topic-documents, on --brokers), stamped with its end offsets, which workers given --index DIR follow on from")
	return func(args []string) error {
		if c.index == "" {
			return errors.New("index: the directory to build is required (--index DIR)")
		}
		if c.strict && c.jsonl == "" {
			return errors.New("strict: only applies with --jsonl")
		}
		if !c.fromTopic {
			return nil
		}
		errs := []error{c.validate(), validateBrokers(c.brokers)}
		if c.jsonl != "" {
			errs = append(errs, errors.New("from-topic: the documents come from the topic or from --jsonl, not both"))
		}
		if c.goroot != "" {
			errs = append(errs, errors.New("goroot: does not apply with --from-topic"))
		}
		return errors.Join(errs...)
	}
}

// runIndex builds an on-disk index that workers open read-only with
// --index, or, with --from-topic, a snapshot they follow on from.
func runIndex(ctx context.Context, cfg indexConfig, stdout, stderr io.Writer) error {
	if cfg.fromTopic {
		return runIndexFromTopic(ctx, cfg, stdout, stderr)
	}
	logger, err := tracing.NewLogger(stderr, cfg.logFormat, cfg.logLevel)
	if err != nil {
		return err
	}
	start := time.Now()
	var docs []search.Document
	name := cfg.name
	if cfg.jsonl != "" {
		var bad []corpus.LineError
		docs, bad, err = corpus.ReadJSONLFile(cfg.jsonl, cfg.strict)
		if err != nil {
			return err
		}
		for _, b := range bad {
			fmt.Fprintf(stderr, "%s: skipped %v\n", cfg.jsonl, &b)
		}
		if len(bad) > 0 {
			logger.Warn("bad lines skipped", "file", cfg.jsonl, "skipped", len(bad), "indexed", len(docs))
		}
		if name == "" {
			name = baseName(cfg.jsonl)
		}
	} else {
		if docs, err = corpus.GoStdlib(ctx, cfg.goroot); err != nil {
			return err
		}
		if name == "" {
			name = pipeline.GoStdlibIndexName
		}
	}
	if len(docs) == 0 {
		return errors.New("no documents to index")
	}
	if err := search.Build(ctx, cfg.index, name, docs); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "indexed %d documents as %q in %s (%s)\n", len(docs), name, cfg.index, time.Since(start).Round(time.Millisecond))
	return nil
}

// runIndexFromTopic builds the snapshot of the documents topic's final
// state, stamped with the end offsets it was read to.
func runIndexFromTopic(ctx context.Context, cfg indexConfig, stdout, stderr io.Writer) error {
	start := time.Now()
	return command{role: "index", connect: checkKafka}.run(ctx, cfg.commonConfig, stderr, func(comp *component, p *pipeline.Pipeline) error {
		topic := p.Topology().Documents
		state, err := readDocumentsState(ctx, kafkaOptions(p, nil), topic, true)
		if err != nil {
			return fmt.Errorf("read the documents topic %s: %w", topic, err)
		}
		if state.refused > 0 {
			comp.logger.WarnContext(ctx, "records that are not documents skipped, as workers skip them", "topic", topic, "records", state.refused)
		}
		docs := state.documents()
		if len(docs) == 0 {
			return fmt.Errorf("no documents to index: %s holds none (see kretrieve ingest)", topic)
		}
		name := cmp.Or(cfg.name, topic)
		pos := state.position()
		if err := search.Build(ctx, cfg.index, name, docs, search.WithPosition(pos)); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "indexed %d documents of %s as %q in %s at offsets %s, digest %s (%s)\n", len(docs), topic, name, cfg.index,
			offsetsText(pos.Offsets, nil), state.digest(), time.Since(start).Round(time.Millisecond))
		return nil
	})
}

func baseName(path string) string {
	base := filepath.Base(path)
	return strings.TrimSuffix(base, filepath.Ext(base))
}
