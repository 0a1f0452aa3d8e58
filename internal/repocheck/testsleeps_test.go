// SPDX-License-Identifier: Apache-2.0

package repocheck

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/srcscan"
)

// allowed are the time.Sleep calls left in the module's tests, by file
// (slash path from the module root): how many, and why each is not a wait
// for an event.
var allowed = map[string]struct {
	n      int
	reason string
}{
	"ops/loadgen/loadgen_test.go":     {1, "the fake searcher's latency: simulated work the load engine measures"},
	"gateway/admission_test.go":       {3, "a handler holding its admission slot, an impatient client retrying before Retry-After, a stalled client holding its slot: simulated clients and work"},
	"tracing/metricsproducer_test.go": {1, "the recorded duration itself (lands in a bucket above 25 ms)"},
	"pipeline/pipeline_bench_test.go": {1, "pacing: the benchmark's fixed request rate"},
	"consumers/partitions_test.go":    {3, "simulated per-record handler work, so that a backlog builds"},
	"integration/telemetry_test.go":   {2, "how long the retrieval worker stays paused: the stall under test, which makes traces slow"},
}

// TestNoNewSleepsInTests fails for every _test.go file with more
// time.Sleep calls than the allow-list grants, and for every allow-list
// entry with fewer (so that the list shrinks when a sleep goes).
func TestNoNewSleepsInTests(t *testing.T) {
	got, err := srcscan.ModuleCalls(true, "time", "Sleep")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 {
		t.Fatal("no time.Sleep found anywhere: the scan is broken (the allow-list names some)")
	}
	for file, n := range got {
		if a := allowed[file]; n > a.n {
			t.Errorf("%s: %d time.Sleep calls, %d allowed: wait for the event instead (a channel, a hook, internal/testutil/poll), or add simulated work to the allow-list with its reason", file, n, a.n)
		}
	}
	for file, a := range allowed {
		if got[file] < a.n {
			t.Errorf("%s: %d time.Sleep calls, the allow-list grants %d: lower it", file, got[file], a.n)
		}
	}
}

// sleeps counts the uses of time.Sleep in the Go file path, whatever name
// it imports package time under.
func sleeps(path string) (int, error) {
	names, err := srcscan.Calls(path, "time")
	n := 0
	for _, name := range names {
		if name == "Sleep" {
			n++
		}
	}
	return n, err
}

// TestSleepsCountsEveryImportName: the scan finds time.Sleep under an
// import alias, and nothing in files that do not call it.
func TestSleepsCountsEveryImportName(t *testing.T) {
	dir := t.TempDir()
	for src, want := range map[string]int{
		"package p\nimport t \"time\"\nfunc f() { t.Sleep(1); t.Sleep(2) }\n":       2,
		"package p\nimport (\n\t\"os\"\n\t_ \"time\"\n)\nfunc f() { os.Exit(0) }\n": 0,
		"package p\nfunc f() { clock.Sleep(1) }\n":                                  0,
	} {
		path := filepath.Join(dir, "x_test.go")
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		if n, err := sleeps(path); err != nil || n != want {
			t.Errorf("sleeps(%q) = %d, %v; want %d", src, n, err, want)
		}
	}
}
