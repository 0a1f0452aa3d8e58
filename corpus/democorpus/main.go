// SPDX-License-Identifier: Apache-2.0

// Command democorpus writes the demo corpus, the Go standard library's
// documentation of the Go installation that runs it, as the JSONL file
// `kretrieve ingest --jsonl` reads. `make image` runs it on the build host,
// so that the image (which has no Go toolchain) carries the corpus its
// ingest Job publishes:
//
//	go run ./corpus/democorpus -o build/image/go-stdlib.jsonl
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"

	"github.com/kretrieve/kretrieve/corpus"
)

func main() {
	out := flag.String("o", "", "FILE to write (required); written next to it and renamed into place")
	goroot := flag.String("goroot", "", "Go installation to read (default: this toolchain's GOROOT)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *out, *goroot); err != nil {
		fmt.Fprintln(os.Stderr, "democorpus:", err)
		os.Exit(1)
	}
}

// run writes the Go standard library's documents to out, readable by all
// (the image's unprivileged user reads it).
func run(ctx context.Context, out, goroot string) error {
	if out == "" || flag.NArg() > 0 {
		return errors.New("usage: democorpus -o FILE [-goroot DIR]")
	}
	docs, err := corpus.GoStdlib(ctx, goroot)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(out), ".democorpus-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	err = errors.Join(corpus.WriteJSONL(f, docs), f.Chmod(0o644), f.Close())
	if err != nil {
		return fmt.Errorf("%s: %w", out, err)
	}
	if err := os.Rename(f.Name(), out); err != nil {
		return err
	}
	fmt.Printf("democorpus: %d documents to %s\n", len(docs), out)
	return nil
}
