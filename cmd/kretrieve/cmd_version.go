// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version and revision name a release build: `make release` sets them
// with -ldflags "-X main.version=v0.1.0 -X main.revision=<commit>"
// (tools/release/release.sh). Empty, as in a go build or go install, the
// build information Go embeds is used instead.
var version, revision string

// versionInfo is what `kretrieve version` prints, from the build
// information the Go toolchain embeds in the binary.
type versionInfo struct {
	// Module is the main module's path and Version its version: a tag,
	// a pseudo-version, or "(devel)" for a build from a work tree.
	Module  string `json:"module"`
	Version string `json:"version"`
	// Revision is the VCS commit and Dirty whether the work tree had
	// uncommitted changes; empty when built without VCS information
	// (go run, -buildvcs=false).
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	Dirty    bool   `json:"dirty,omitempty"`
	// Go is the toolchain that built the binary.
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// readVersion reads the binary's build information.
func readVersion() versionInfo {
	v := versionInfo{Version: "(unknown)", Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v.stamped(version, revision)
	}
	v.Module, v.Version, v.Go = bi.Main.Path, bi.Main.Version, bi.GoVersion
	if v.Version == "" {
		v.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Dirty = s.Value == "true"
		}
	}
	return v.stamped(version, revision)
}

// stamped is v with the release version and revision a release build's
// linker flags set, where they are set.
func (v versionInfo) stamped(version, revision string) versionInfo {
	if version != "" {
		v.Version = version
	}
	if revision != "" {
		v.Revision, v.Dirty = revision, false
	}
	return v
}

// write prints v as text, or as one JSON object.
func (v versionInfo) write(w io.Writer, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(v)
	}
	_, err := io.WriteString(w, v.text())
	return err
}

// text is v as lines: the version, then the module, the revision
// ("+dirty" for uncommitted changes) and the Go version.
func (v versionInfo) text() string {
	rev := v.Revision
	if rev == "" {
		rev = "unknown"
	}
	if v.Dirty {
		rev += "+dirty"
	}
	return fmt.Sprintf("kretrieve %s\n  module:   %s\n  revision: %s\n  go:       %s %s\n", v.Version, v.Module, rev, v.Go, v.Platform)
}

// versionCommand is "kretrieve version".
func (e *cli) versionCommand() *cobra.Command {
	return e.command(&cobra.Command{
		Use:   "version",
		Short: "Print the version, VCS revision and Go version of this binary",
		Long: `Print the module version, the VCS revision the binary was built from
("+dirty" when the work tree had uncommitted changes) and the Go version,
from the build information Go embeds in the binary.`,
		Example: `  kretrieve version
  kretrieve version --json`,
		Args: noArgs,
	}, func(s *settings) (func([]string) error, func(context.Context) error) {
		var asJSON bool
		s.boolean(&asJSON, "json", false, "print one JSON object")
		return func([]string) error { return nil }, func(context.Context) error { return readVersion().write(e.stdout, asJSON) }
	})
}
