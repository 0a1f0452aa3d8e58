// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 1 || len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprintln(stderr, "usage: benchratio [go-test-bench-output-file]")
		return 2
	}
	in, name := stdin, "standard input"
	if len(args) == 1 {
		f, err := os.Open(args[0])
		if err != nil {
			fmt.Fprintln(stderr, "benchratio:", err)
			return 1
		}
		defer f.Close()
		in, name = f, args[0]
	}
	if err := report(in, name, stdout); err != nil {
		fmt.Fprintln(stderr, "benchratio:", err)
		return 1
	}
	return 0
}

func report(in io.Reader, name string, out io.Writer) error {
	parsed, err := Parse(in)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if len(parsed.Results) == 0 {
		return errors.Join(errors.New(name+": no benchmark results"), failed(parsed.Failures))
	}
	if err := Print(out, Evaluate(Medians(parsed.Results), Targets)); err != nil {
		return err
	}
	return failed(parsed.Failures)
}

// failed is an error listing the failure lines, nil when there are none.
func failed(lines []string) error {
	if len(lines) == 0 {
		return nil
	}
	return fmt.Errorf("%d failure lines in the output, the first: %s", len(lines), lines[0])
}
