// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Result is one result line of `go test -bench`: one run of one benchmark.
type Result struct {
	// Pkg is the import path from the preceding "pkg:" line.
	Pkg string
	// Name is the full benchmark name as printed, including any
	// -GOMAXPROCS suffix ("BenchmarkRelay/kotel-2").
	Name string
	// N is the iteration count.
	N int64
	// Metrics maps each unit ("ns/op", "msgs/s", "p99-µs") to its value.
	Metrics map[string]float64
}

var (
	benchName  = regexp.MustCompile(`^(Benchmark\S+)`)
	procsTail  = regexp.MustCompile(`-(\d+)$`)
	resultTail = regexp.MustCompile(`^\s*\d+\s+\S+\s+\S`)
)

// Output is what Parse found in `go test -bench` output.
type Output struct {
	// Results are the result lines, in order.
	Results []Result
	// Failures are the lines reporting a failed benchmark, test or
	// package ("--- FAIL: ...", "FAIL\t<pkg> ...") or a panic. Such lines
	// are never taken for results.
	Failures []string
}

// Parse reads `go test -bench` output. Other lines (package headers, PASS,
// logs) are skipped. A result split from its benchmark's name by output the
// benchmark wrote while it ran (go test prints the name before the run and
// the numbers after it) is joined back to the last name seen.
func Parse(r io.Reader) (Output, error) {
	var (
		out     Output
		pkg     string
		pending string // a name printed without its numbers yet
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if p, ok := strings.CutPrefix(text, "pkg: "); ok {
			pkg, pending = strings.TrimSpace(p), ""
			continue
		}
		if isFailure(text) {
			out.Failures = append(out.Failures, strings.TrimSpace(text))
			continue
		}
		if m := benchName.FindStringSubmatch(text); m != nil {
			res, ok, err := parseFields(pkg, m[1], strings.Fields(text[len(m[1]):]))
			if err != nil {
				return Output{}, fmt.Errorf("line %d: %w", line, err)
			}
			if ok {
				out.Results, pending = append(out.Results, res), ""
			} else {
				pending = m[1]
			}
			continue
		}
		if pending != "" && resultTail.MatchString(text) {
			res, ok, err := parseFields(pkg, pending, strings.Fields(text))
			if err != nil {
				return Output{}, fmt.Errorf("line %d: %w", line, err)
			}
			if ok {
				out.Results, pending = append(out.Results, res), ""
			}
		}
	}
	if err := sc.Err(); err != nil {
		return Output{}, err
	}
	return out, nil
}

func isFailure(line string) bool {
	t := strings.TrimSpace(line)
	// "--- FAIL" may follow the benchmark's name on its line.
	return strings.Contains(t, "--- FAIL:") || t == "FAIL" || strings.HasPrefix(t, "FAIL\t") || strings.HasPrefix(t, "panic: ")
}

// parseFields parses "N v1 unit1 v2 unit2 ...". It reports false when the
// fields are not a result (a name line without numbers, or with other text);
// an error only when they look like a result but a value is malformed.
func parseFields(pkg, name string, f []string) (Result, bool, error) {
	if len(f) < 3 || len(f)%2 == 0 {
		return Result{}, false, nil
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return Result{}, false, nil
	}
	res := Result{Pkg: pkg, Name: name, N: n, Metrics: make(map[string]float64, len(f)/2)}
	for i := 1; i < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			if i == 1 {
				return Result{}, false, nil // not numbers at all: some log line
			}
			return Result{}, false, fmt.Errorf("%s: value %q of %s: %w", name, f[i], f[i+1], err)
		}
		res.Metrics[f[i+1]] = v
	}
	return res, true, nil
}

// procsSuffix returns the "-N" suffix go test appended to every name (when
// GOMAXPROCS > 1), or "" when the names do not all end in the same one. A
// name's own "-100" (as in "kretrieve-100" under GOMAXPROCS=1) is therefore
// never taken for it.
func procsSuffix(results []Result) string {
	suffix := ""
	for i, r := range results {
		m := procsTail.FindString(r.Name)
		if m == "" || i > 0 && m != suffix {
			return ""
		}
		suffix = m
	}
	return suffix
}

// Medians groups results by benchmark name (without the GOMAXPROCS suffix)
// and returns, per name, the median of each metric over its runs and the
// number of runs.
func Medians(results []Result) map[string]Summary {
	suffix := procsSuffix(results)
	values := map[string]map[string][]float64{}
	for _, r := range results {
		name := strings.TrimSuffix(r.Name, suffix)
		if values[name] == nil {
			values[name] = map[string][]float64{}
		}
		for unit, v := range r.Metrics {
			values[name][unit] = append(values[name][unit], v)
		}
	}
	out := make(map[string]Summary, len(values))
	for name, units := range values {
		s := Summary{Median: make(map[string]float64, len(units))}
		for unit, vs := range units {
			s.Median[unit] = median(vs)
			s.Runs = max(s.Runs, len(vs))
		}
		out[name] = s
	}
	return out
}

// Summary is the medians of one benchmark's runs.
type Summary struct {
	Median map[string]float64
	Runs   int
}

func median(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
