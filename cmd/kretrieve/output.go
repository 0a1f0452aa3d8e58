// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// toStdout is the file name an output flag (--summary-json, --spans-file,
// --curve) takes for standard output.
const toStdout = "-"

// outputPerm is the mode of the files output flags write: spans and
// summaries may hold query text and document data, so they are private.
const outputPerm = 0o600

// errOutputSymlink is the error of an output path that is a symbolic link.
var errOutputSymlink = errors.New("is a symlink: refusing to write through it (remove it or name another file)")

// createOutput creates the file an output flag names, or returns stdout
// for "-"; closing stdout does nothing. It never writes through a symbolic
// link (a link at path is refused; O_NOFOLLOW closes the race where the
// platform has it), creates the file 0600, and makes an existing regular
// file 0600 before truncating it.
func createOutput(path string, stdout io.Writer) (io.WriteCloser, error) {
	if path == toStdout {
		return nopWriteCloser{stdout}, nil
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("%s: %w", path, errOutputSymlink)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|noFollow, outputPerm)
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s: %w", path, errOutputSymlink)
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && fi.Mode().IsRegular() {
		if fi.Mode().Perm()&^outputPerm != 0 {
			err = f.Chmod(outputPerm)
		}
		if err == nil {
			err = f.Truncate(0)
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
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
