// SPDX-License-Identifier: Apache-2.0

package configdoc

import (
	"reflect"
	"slices"
	"testing"
)

func TestReadRepositoryREADME(t *testing.T) {
	cmds := []string{"broker", "retrieval", "run"}
	kre, otel, err := Read("../../../docs/configuration.md", cmds)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(kre["KRETRIEVE_LOG_FORMAT"], cmds) || !otel["OTEL_EXPORTER_OTLP_ENDPOINT"] {
		t.Fatalf("LOG_FORMAT %v, OTLP endpoint %v", kre["KRETRIEVE_LOG_FORMAT"], otel["OTEL_EXPORTER_OTLP_ENDPOINT"])
	}
	if got := commandsCell("all but broker", cmds); !reflect.DeepEqual(got, []string{"retrieval", "run"}) {
		t.Fatalf("all but broker: %v", got)
	}
	if got := commandsCell("dlq replay, lag", cmds); !reflect.DeepEqual(got, []string{"dlq", "lag"}) {
		t.Fatalf("list: %v", got)
	}
	if EnvName("topic-requests") != "KRETRIEVE_TOPIC_REQUESTS" {
		t.Fatal(EnvName("topic-requests"))
	}
}

// TestReadCommands: the binary's command list reads, dlq's subcommands
// are one name, and a flag several commands declare has the same variable
// and type in each (what Flags relies on).
func TestReadCommands(t *testing.T) {
	cmds, err := ReadCommands("../../../" + CommandsPath)
	if err != nil {
		t.Fatal(err)
	}
	names := Names(cmds)
	for _, want := range []string{"broker", "retrieval", "enrichment", "run", "dlq"} {
		if n := len(slices.DeleteFunc(slices.Clone(names), func(s string) bool { return s != want })); n != 1 {
			t.Errorf("%s: %d times in %v", want, n, names)
		}
	}
	seen := map[string]Flag{}
	for _, c := range cmds {
		for _, f := range c.Flags {
			if f.Variable != EnvName(f.Name) {
				t.Errorf("%s --%s: variable %s", c.Command, f.Name, f.Variable)
			}
			if g, ok := seen[f.Name]; ok && g.Type != f.Type {
				t.Errorf("--%s: type %s and %s", f.Name, g.Type, f.Type)
			}
			seen[f.Name] = f
		}
	}
	if flags := Flags(cmds); flags["wait"].Type != "bool" || flags["brokers"].Type != "string" || len(flags) != len(seen) {
		t.Errorf("flags: wait %+v brokers %+v", flags["wait"], flags["brokers"])
	}
}
