// SPDX-License-Identifier: Apache-2.0

// Package configdoc reads the variables docs/configuration.md documents —
// the KRETRIEVE_* rows of its "Flags and KRETRIEVE_* variables" table with
// the commands each applies to, and the OTEL_* variables of its tracing
// table — and the binary's commands and flags that cmd/kretrieve lists in
// testdata/commands.json, so tests of the deployment files (deploy/k8s,
// deploy/compose) can check them against the documentation and the binary.
// It is a test helper; nothing in the binary imports it.
package configdoc

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

var (
	kretrieveVar = regexp.MustCompile("`(KRETRIEVE_[A-Z0-9_]+)`")
	otelVar      = regexp.MustCompile("`(OTEL_[A-Z0-9_]+)[`=]")
)

// Read parses the configuration reference (docs/configuration.md) at path.
// commands is the full list of subcommands, for the Commands column's "all"
// and "all but X".
func Read(path string, commands []string) (kretrieve map[string][]string, otel map[string]bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	kretrieve, otel = map[string][]string{}, map[string]bool{}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if h, ok := strings.CutPrefix(line, "## "); ok {
			section = h
			continue
		}
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "|") || len(cells) < 3 {
			continue
		}
		switch {
		case strings.HasPrefix(section, "Flags and"):
			for _, v := range kretrieveVar.FindAllStringSubmatch(cells[1], -1) {
				kretrieve[v[1]] = commandsCell(cells[2], commands)
			}
		case strings.HasPrefix(section, "Tracing"):
			for _, v := range otelVar.FindAllStringSubmatch(cells[1], -1) {
				otel[v[1]] = true
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	if kretrieve["KRETRIEVE_BROKERS"] == nil || !otel["OTEL_SERVICE_NAME"] {
		return nil, nil, fmt.Errorf("%s: the Flags and Tracing tables were not found (%d KRETRIEVE_, %d OTEL_ variables)", path, len(kretrieve), len(otel))
	}
	return kretrieve, otel, nil
}

// commandsCell parses the Commands column: "all", "all but broker" or a
// comma-separated list ("dlq replay" counts as dlq).
func commandsCell(cell string, commands []string) []string {
	cell = strings.TrimSpace(cell)
	if cell == "all" {
		return commands
	}
	if but, ok := strings.CutPrefix(cell, "all but "); ok {
		return slices.DeleteFunc(slices.Clone(commands), func(c string) bool { return c == strings.TrimSpace(but) })
	}
	var out []string
	for c := range strings.SplitSeq(cell, ",") {
		if f := strings.Fields(c); len(f) > 0 {
			out = append(out, f[0])
		}
	}
	return out
}

// EnvName is the variable bound to a flag, as cmd/kretrieve/settings.go
// derives it: --topic-requests is KRETRIEVE_TOPIC_REQUESTS.
func EnvName(flag string) string {
	return "KRETRIEVE_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}
