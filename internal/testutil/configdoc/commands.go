// SPDX-License-Identifier: Apache-2.0

package configdoc

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// CommandsPath is where, from the repository root, cmd/kretrieve lists its
// command tree: every command and its flags. cmd/kretrieve's
// TestCommandsFile keeps the file equal to the tree, so tests outside
// package main (which cannot import it) read the commands from there.
const CommandsPath = "cmd/kretrieve/testdata/commands.json"

// Command is a command of the binary, by path ("run", "dlq list"), with
// its flags.
type Command struct {
	Command string `json:"command"`
	Flags   []Flag `json:"flags"`
}

// Flag is a flag of a command: its KRETRIEVE_* variable, its pflag type
// ("bool" flags take no value) and its default as the help shows it.
type Flag struct {
	Name     string `json:"name"`
	Variable string `json:"variable"`
	Type     string `json:"type"`
	Default  string `json:"default"`
}

// ReadCommands reads the command list at path (CommandsPath below the
// repository root).
func ReadCommands(path string) ([]Command, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cmds []Command
	if err := json.Unmarshal(b, &cmds); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(cmds) == 0 {
		return nil, fmt.Errorf("%s: no commands", path)
	}
	return cmds, nil
}

// Names returns the commands' first words, each once and in order: the
// argument that selects the command ("dlq list" and "dlq replay" are dlq).
func Names(cmds []Command) []string {
	var out []string
	for _, c := range cmds {
		if name, _, _ := strings.Cut(c.Command, " "); !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// Flags returns every flag of the commands by name (a flag several
// commands declare is one entry: its name, variable and type are the same
// everywhere).
func Flags(cmds []Command) map[string]Flag {
	out := map[string]Flag{}
	for _, c := range cmds {
		for _, f := range c.Flags {
			out[f.Name] = f
		}
	}
	return out
}
