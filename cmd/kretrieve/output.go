package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// toStdout is the file name an output flag (--summary-json, --spans-file,
// --curve) takes for standard output.
const toStdout = "-"

// createOutput creates the file an output flag names, or returns stdout
// for "-"; closing stdout does nothing.
func createOutput(path string, stdout io.Writer) (io.WriteCloser, error) {
	if path == toStdout {
		return nopWriteCloser{stdout}, nil
	}
	return os.Create(path)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// outputName names an output in messages: "stdout" for "-".
func outputName(path string) string {
	if path == toStdout {
		return "stdout"
	}
	return path
}

// checkStdout fails when more than one output flag is "-". The flags are
// given as name, value pairs.
func checkStdout(pairs ...string) error {
	var names []string
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == toStdout {
			names = append(names, "--"+pairs[i])
		}
	}
	if len(names) > 1 {
		return fmt.Errorf("%s: only one output can be - (stdout)", strings.Join(slices.Sorted(slices.Values(names)), ", "))
	}
	return nil
}

// reportWriter is where a command prints its report: stdout, or stderr
// when an output flag writes to stdout (so that stdout holds that output
// alone, e.g. for jq).
func reportWriter(stdout, stderr io.Writer, outputs ...string) io.Writer {
	if slices.Contains(outputs, toStdout) {
		return stderr
	}
	return stdout
}
