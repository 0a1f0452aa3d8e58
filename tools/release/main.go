// SPDX-License-Identifier: Apache-2.0

// Command release packages a kretrieve release reproducibly: the same
// inputs and SOURCE_DATE_EPOCH give byte-identical outputs. release.sh
// (make release) builds the binaries and runs its subcommands:
//
//	release archive -epoch N -o OUT.tar.gz|OUT.zip DIR
//	release image -epoch N -version V -revision R -o OUT.tar linux/amd64=CTX ...
//	release sums DIR
//
// archive packs DIR under its base name with sorted entries, owner 0:0,
// mode 0755 or 0644 and every time set to the epoch. image builds a
// multi-platform OCI image layout tarball from one staged build context
// per platform (the Dockerfile and the files it copies, as make
// image-context stages them). sums writes DIR/SHA256SUMS.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

// usage is the synopsis printed for a missing or unknown subcommand.
const usage = "usage: release archive|image|sums [flags] ARGS (see go doc ./tools/release)"

// run runs the subcommand args[0] with the rest of args.
func run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	epoch := fs.Int64("epoch", -1, "SOURCE_DATE_EPOCH: the time every file and the image carry, in seconds since 1970")
	out := fs.String("o", "", "the output file")
	version := fs.String("version", "", "image: the release version (org.opencontainers.image.version)")
	revision := fs.String("revision", "", "image: the commit (org.opencontainers.image.revision)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	when := time.Unix(*epoch, 0).UTC()
	needs := func(n int) error {
		if *epoch < 0 && args[0] != "sums" {
			return errors.New(args[0] + ": -epoch is required (the commit time, git log -1 --format=%ct)")
		}
		if *out == "" && args[0] != "sums" {
			return errors.New(args[0] + ": -o is required")
		}
		if fs.NArg() < n {
			return fmt.Errorf("%s: want at least %d argument(s), got %d", args[0], n, fs.NArg())
		}
		return nil
	}
	switch args[0] {
	case "archive":
		if err := needs(1); err != nil {
			return err
		}
		return writeArchive(*out, fs.Arg(0), when)
	case "image":
		if err := needs(1); err != nil {
			return err
		}
		if *version == "" || *revision == "" {
			return errors.New("image: -version and -revision are required")
		}
		digest, err := writeImage(*out, fs.Args(), imageMeta{Version: *version, Revision: *revision, Created: when})
		if err == nil {
			fmt.Fprintf(stdout, "%s: image index %s\n", *out, digest)
		}
		return err
	case "sums":
		if err := needs(1); err != nil {
			return err
		}
		return writeSums(fs.Arg(0))
	}
	return fmt.Errorf("unknown subcommand %q; %s", args[0], strings.TrimPrefix(usage, "usage: "))
}
