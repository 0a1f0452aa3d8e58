package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kretrieve/kretrieve/corpus"
	"github.com/kretrieve/kretrieve/pipeline"
	"github.com/kretrieve/kretrieve/search"
	"github.com/kretrieve/kretrieve/tracing"
)

// indexCommand is "kretrieve index".
func (e *cli) indexCommand() *cobra.Command {
	return e.command(&cobra.Command{
		Use:     "index --index DIR",
		GroupID: "tools",
		Short:   "Build an on-disk index (Go stdlib docs or --jsonl FILE)",
		Long: `Build an on-disk index in --index DIR, which workers open read-only with
--index: the Go standard library docs, or --jsonl FILE's documents.`,
		Example: `  kretrieve index --index ./idx
  kretrieve index --index ./idx --jsonl docs.jsonl --strict`,
		Args: noArgs,
	}, bind(func(ctx context.Context, c indexConfig) error { return runIndex(ctx, c, e.stdout, e.stderr) }))
}

// indexConfig configures the index command.
type indexConfig struct {
	index     string
	name      string
	jsonl     string
	strict    bool
	goroot    string
	logFormat string
	logLevel  string
}

// flags declares the flags of a indexConfig on s and returns the check of
// their values, run once they are parsed.
func (c *indexConfig) flags(s *settings) (check func(args []string) error) {
	s.str(&c.index, "index", "", "DIR to create the index in (must not exist or be empty)")
	s.str(&c.name, "index-name", "", "index name shown on spans (default: go-stdlib, or the JSONL file's base name)")
	s.str(&c.jsonl, "jsonl", "", `index FILE's documents, one JSON object per line: {"id","title","body","url","metadata":{...}} (default: the Go standard library docs)`)
	s.boolean(&c.strict, "strict", false, "with --jsonl: reject the whole file at the first bad line instead of skipping bad lines")
	s.str(&c.goroot, "goroot", "", "Go installation to take the standard library docs from (default: this toolchain's GOROOT)")
	declareLogging(s, &c.logFormat, &c.logLevel)
	return func(args []string) error {
		if c.index == "" {
			return errors.New("index: the directory to build is required (--index DIR)")
		}
		if c.strict && c.jsonl == "" {
			return errors.New("strict: only applies with --jsonl")
		}
		return nil
	}
}

// runIndex builds an on-disk index that workers open read-only with --index.
func runIndex(ctx context.Context, cfg indexConfig, stdout, stderr io.Writer) error {
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

func baseName(path string) string {
	base := filepath.Base(path)
	return strings.TrimSuffix(base, filepath.Ext(base))
}
