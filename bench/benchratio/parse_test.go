// SPDX-License-Identifier: Apache-2.0

package main

import (
	"math"
	"os"
	"strings"
	"testing"
)

func TestParseJoinsResultsSplitByOutput(t *testing.T) {
	in := strings.Join([]string{
		"goos: linux",
		"pkg: example.com/p",
		"BenchmarkA/x-2   \t    1000\t      1500 ns/op\t       12.5 req/s",
		// go test prints the name, the benchmark writes, then the numbers.
		"BenchmarkA/y-2   \ttime=09:00 level=WARN msg=\"slow broker\"",
		"2026/11/22 09:00:00 another log line",
		"  123 things done",
		"    1000\t      3000 ns/op\t       6.25 req/s",
		"PASS",
		"ok  \texample.com/p\t1.0s",
	}, "\n")
	out, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 2 || len(out.Failures) != 0 {
		t.Fatalf("got %+v", out)
	}
	y := out.Results[1]
	if y.Pkg != "example.com/p" || y.Name != "BenchmarkA/y-2" || y.N != 1000 || y.Metrics["ns/op"] != 3000 || y.Metrics["req/s"] != 6.25 {
		t.Errorf("split result = %+v", y)
	}
}

func TestParseFailures(t *testing.T) {
	in := strings.Join([]string{
		"BenchmarkA-2   \t--- FAIL: BenchmarkA-2",
		"    a_test.go:10: boom",
		"FAIL",
		"exit status 1",
		"FAIL\texample.com/p\t0.5s",
		"# example.com/q",
		"q.go:1:1: undefined: x",
		"FAIL\texample.com/q [build failed]",
	}, "\n")
	out, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 0 || len(out.Failures) != 4 {
		t.Fatalf("results %v, failures %q; want 0 results and 4 failures", out.Results, out.Failures)
	}
}

func TestParseMalformedValue(t *testing.T) {
	_, err := Parse(strings.NewReader("BenchmarkA-2 \t 10\t 5 ns/op\t x12 req/s\n"))
	if err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("err = %v, want a line 1 error", err)
	}
}

func TestMediansStripOnlyTheCommonProcsSuffix(t *testing.T) {
	res := func(name string, v float64) Result {
		return Result{Name: name, N: 1, Metrics: map[string]float64{"msgs/s": v}}
	}
	tests := []struct {
		name    string
		results []Result
		want    map[string]float64
	}{
		{
			name:    "GOMAXPROCS=2",
			results: []Result{res("BenchmarkRelay/kretrieve-100-2", 1), res("BenchmarkRelay/kretrieve-1-2", 2), res("BenchmarkRelay/untraced-2", 3)},
			want:    map[string]float64{"BenchmarkRelay/kretrieve-100": 1, "BenchmarkRelay/kretrieve-1": 2, "BenchmarkRelay/untraced": 3},
		},
		{
			name:    "GOMAXPROCS=1",
			results: []Result{res("BenchmarkRelay/kretrieve-100", 1), res("BenchmarkRelay/kretrieve-1", 2), res("BenchmarkRelay/untraced", 3)},
			want:    map[string]float64{"BenchmarkRelay/kretrieve-100": 1, "BenchmarkRelay/kretrieve-1": 2, "BenchmarkRelay/untraced": 3},
		},
		{
			name:    "GOMAXPROCS=1, every name ending in a number",
			results: []Result{res("BenchmarkRelay/kretrieve-100", 1), res("BenchmarkRelay/kretrieve-1", 2)},
			want:    map[string]float64{"BenchmarkRelay/kretrieve-100": 1, "BenchmarkRelay/kretrieve-1": 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Medians(tt.results)
			if len(got) != len(tt.want) {
				t.Fatalf("medians of %v", got)
			}
			for name, v := range tt.want {
				if got[name].Median["msgs/s"] != v {
					t.Errorf("%s = %v, want %v (all: %v)", name, got[name], v, got)
				}
			}
		})
	}
}

func TestMedian(t *testing.T) {
	for _, tt := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{5}, 5},
		{[]float64{9, 1, 5}, 5},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := median(tt.in); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestSample parses the saved output of a real `make bench` run
// (testdata/sample.txt) and checks one median by hand.
func TestSample(t *testing.T) {
	f, err := os.Open("testdata/sample.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Failures) != 0 {
		t.Errorf("failures in the sample: %q", out.Failures)
	}
	m := Medians(out.Results)
	for _, name := range []string{
		"BenchmarkInjectExtract", "BenchmarkSearch",
		"BenchmarkRelay/untraced", "BenchmarkRelay/kotel", "BenchmarkRelay/kretrieve-100", "BenchmarkRelay/kretrieve-1", "BenchmarkRelay/kretrieve-100-defaults",
		"BenchmarkRelayPaced/untraced", "BenchmarkRelayPaced/kotel", "BenchmarkRelayPaced/kretrieve-100",
		"BenchmarkPipeline/inprocess", "BenchmarkPipeline/kafka-untraced", "BenchmarkPipeline/kafka-traced-100",
	} {
		if _, ok := m[name]; !ok {
			t.Errorf("%s not in the sample's medians", name)
		}
	}
	for _, name := range []string{"BenchmarkRelay/kotel", "BenchmarkRelayPaced/untraced", "BenchmarkPipeline/inprocess"} {
		if runs := m[name].Runs; runs != 3 {
			t.Errorf("%s: %d runs, want 3", name, runs)
		}
	}
	if got := m["BenchmarkRelay/kotel"].Median["msgs/s"]; math.Abs(got-sampleKotelMedian) > 1e-9 {
		t.Errorf("kotel median msgs/s = %v, want %v", got, sampleKotelMedian)
	}
}

// sampleKotelMedian is the median of BenchmarkRelay/kotel's msgs/s in
// testdata/sample.txt: of 3853, 9873 and 8141.
const sampleKotelMedian = 8141
