// SPDX-License-Identifier: Apache-2.0

package compose_test

import (
	"encoding/json"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/semconv/v1.43.0/messagingconv"
	"go.yaml.in/yaml/v3"

	"github.com/kretrieve/kretrieve/otelnames"
)

// Grafana's provisioning directories in the container.
const (
	grafanaDatasources = "/etc/grafana/provisioning/datasources"
	grafanaDashboards  = "/etc/grafana/provisioning/dashboards"
)

// instrument is a metric kretrieve emits.
type instrument struct {
	name, unit string
	kind       string // counter, gauge or histogram
	source     string // what in the module's code must exist for it
}

// emitted lists the metrics the code registers, with the names and units
// taken from the code (package telemetry and semconv's messagingconv), and
// the registration each needs in the source (TestEmittedMetricsAreInTheCode).
func emitted() []instrument {
	return []instrument{
		{otelnames.MetricQueueWait, otelnames.MetricQueueWaitUnit, "histogram", "addHist(otelnames.MetricQueueWait,"},
		{messagingconv.ProcessDuration{}.Name(), messagingconv.ProcessDuration{}.Unit(), "histogram", "addHist(messagingconv.ProcessDuration{}.Name()"},
		{messagingconv.ClientOperationDuration{}.Name(), messagingconv.ClientOperationDuration{}.Unit(), "histogram", "addHist(messagingconv.ClientOperationDuration{}.Name()"},
		{messagingconv.ClientSentMessages{}.Name(), messagingconv.ClientSentMessages{}.Unit(), "counter", "addSum(messagingconv.ClientSentMessages{}.Name()"},
		{messagingconv.ClientConsumedMessages{}.Name(), messagingconv.ClientConsumedMessages{}.Unit(), "counter", "addSum(messagingconv.ClientConsumedMessages{}.Name()"},
		{otelnames.MetricLagRecords, otelnames.MetricLagRecordsUnit, "gauge", "gauge{otelnames.MetricLagRecords, otelnames.MetricLagRecordsUnit"},
		{otelnames.MetricLagSeconds, otelnames.MetricLagSecondsUnit, "gauge", "gauge{otelnames.MetricLagSeconds, otelnames.MetricLagSecondsUnit"},
		{otelnames.MetricIndexLagRecords, otelnames.MetricLagRecordsUnit, "gauge", "gauge{otelnames.MetricIndexLagRecords, otelnames.MetricLagRecordsUnit"},
		{otelnames.MetricIndexLagSeconds, otelnames.MetricLagSecondsUnit, "gauge", "gauge{otelnames.MetricIndexLagSeconds, otelnames.MetricLagSecondsUnit"},
		{otelnames.MetricLagStatus, otelnames.MetricLagStatusUnit, "gauge", "Int64ObservableGauge(otelnames.MetricLagStatus, metric.WithUnit(otelnames.MetricLagStatusUnit)"},
		{otelnames.MetricLagVelocity, otelnames.MetricLagVelocityUnit, "gauge", "Float64ObservableGauge(otelnames.MetricLagVelocity, metric.WithUnit(otelnames.MetricLagVelocityUnit)"},
		{otelnames.MetricLagDrain, otelnames.MetricLagSecondsUnit, "gauge", "Float64ObservableGauge(otelnames.MetricLagDrain, metric.WithUnit(otelnames.MetricLagSecondsUnit)"},
		{otelnames.MetricRetentionHeadroom, otelnames.MetricLagSecondsUnit, "gauge", "Float64ObservableGauge(otelnames.MetricRetentionHeadroom, metric.WithUnit(otelnames.MetricLagSecondsUnit)"},
		{otelnames.MetricResultsDropped, otelnames.MetricResultsDroppedUnit, "counter", "Int64ObservableCounter(otelnames.MetricResultsDropped"},
		{otelnames.MetricSpansDropped, otelnames.MetricSpansUnit, "counter", "Int64ObservableCounter(otelnames.MetricSpansDropped"},
		{otelnames.MetricSpansExported, otelnames.MetricSpansUnit, "counter", "Int64ObservableCounter(otelnames.MetricSpansExported"},
		{otelnames.MetricPathwaysWindows, otelnames.MetricPathwaysWindowsUnit, "counter", "otelnames.MetricPathwaysWindows, metric.WithUnit(otelnames.MetricPathwaysWindowsUnit)"},
		{otelnames.MetricRequestsUnfinished, otelnames.MetricRequestsUnfinishedUnit, "gauge", "Int64ObservableGauge(otelnames.MetricRequestsUnfinished, metric.WithUnit(otelnames.MetricRequestsUnfinishedUnit)"},
		// Exported as classic histograms with
		// OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION=explicit_bucket_histogram
		// (compose.yaml): Prometheus's OTLP receiver would store
		// exponential ones as native histograms, which the dashboard's
		// _bucket queries do not read.
		{otelnames.MetricPathwayLatency, otelnames.MetricPathwayLatencyUnit, "histogram", "metricdata.Histogram[float64]{DataPoints: expl"},
	}
}

// promUnits are the unit suffixes of Prometheus's OTLP translation for the
// units kretrieve uses; units in braces ({message}) add none.
var promUnits = map[string]string{"s": "seconds", "ms": "milliseconds", "By": "bytes", "1": "ratio", "{message}/s": "per_second"}

// promNames returns the series names Prometheus's OTLP receiver (default
// translation: underscore escaping with suffixes) stores for an
// instrument: name tokens joined by _, the unit suffix unless already a
// token, _total for counters, _bucket/_sum/_count for histograms.
func promNames(in instrument) []string {
	tokens := strings.FieldsFunc(in.name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
	if u := promUnits[in.unit]; u != "" && !slices.Contains(tokens, u) {
		tokens = append(tokens, u)
	}
	if in.kind == "counter" && tokens[len(tokens)-1] != "total" {
		tokens = append(tokens, "total")
	}
	base := strings.Join(tokens, "_")
	if in.kind == "histogram" {
		return []string{base + "_bucket", base + "_sum", base + "_count"}
	}
	return []string{base}
}

func TestPromNames(t *testing.T) {
	for _, tc := range []struct {
		in   instrument
		want string
	}{
		{instrument{name: "kretrieve.messaging.queue_wait.duration", unit: "s", kind: "histogram"}, "kretrieve_messaging_queue_wait_duration_seconds_bucket"},
		{instrument{name: "kretrieve.consumer.lag.seconds", unit: "s", kind: "gauge"}, "kretrieve_consumer_lag_seconds"},
		{instrument{name: "kretrieve.consumer.lag", unit: "{message}", kind: "gauge"}, "kretrieve_consumer_lag"},
		{instrument{name: "kretrieve.consumer.lag.status", unit: "{status}", kind: "gauge"}, "kretrieve_consumer_lag_status"},
		{instrument{name: "kretrieve.consumer.lag.velocity", unit: "{message}/s", kind: "gauge"}, "kretrieve_consumer_lag_velocity_per_second"},
		{instrument{name: "kretrieve.consumer.retention.headroom", unit: "s", kind: "gauge"}, "kretrieve_consumer_retention_headroom_seconds"},
		{instrument{name: "messaging.client.sent.messages", unit: "{message}", kind: "counter"}, "messaging_client_sent_messages_total"},
	} {
		if got := promNames(tc.in)[0]; got != tc.want {
			t.Errorf("promNames(%s) = %s, want %s", tc.in.name, got, tc.want)
		}
	}
}

func TestEmittedMetricsAreInTheCode(t *testing.T) {
	for _, in := range emitted() {
		if !sourceContains(t, in.source) {
			t.Errorf("%s: %s not found in the module's code; update emitted() and the dashboard", in.name, in.source)
		}
	}
}

var (
	promString   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	promVariable = regexp.MustCompile(`\$\{?\w+\}?`)
	promMatchers = regexp.MustCompile(`\{[^}]*\}`)
	promRange    = regexp.MustCompile(`\[[^\]]*\]`)
	promGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promIdent    = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
	promKeywords = []string{"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "offset", "inf", "nan"}
)

// promMetrics returns the metric names a PromQL expression selects: what is
// left after removing strings, Grafana variables, label matchers, ranges,
// grouping clauses, function calls, keywords and numbers.
func promMetrics(expr string) []string {
	s := promString.ReplaceAllString(expr, `""`)
	s = promVariable.ReplaceAllString(s, "")
	s = promMatchers.ReplaceAllString(s, " ")
	s = promRange.ReplaceAllString(s, " ")
	s = promGrouping.ReplaceAllString(s, " ")
	var out []string
	for _, loc := range promIdent.FindAllStringIndex(s, -1) {
		id := s[loc[0]:loc[1]]
		rest := strings.TrimLeft(s[loc[1]:], " \t\n")
		if strings.HasPrefix(rest, "(") || slices.Contains(promKeywords, strings.ToLower(id)) {
			continue
		}
		if loc[0] > 0 && strings.ContainsRune("0123456789.", rune(s[loc[0]-1])) {
			continue // the exponent of a number
		}
		out = append(out, id)
	}
	return out
}

func TestPromMetrics(t *testing.T) {
	got := promMetrics(`histogram_quantile(0.95, sum by (le, messaging_destination_name) (rate(a_bucket{x=~"y.+", z="1"}[$__rate_interval]))) / on(job) group_left b_total + 1e3`)
	if want := []string{"a_bucket", "b_total"}; !slices.Equal(got, want) {
		t.Errorf("promMetrics = %v, want %v", got, want)
	}
}

type datasource struct {
	Name string `yaml:"name"`
	UID  string `yaml:"uid"`
	Type string `yaml:"type"`
	URL  string `yaml:"url"`
}

// grafanaFiles returns the YAML files of a provisioning directory.
func grafanaFiles(t *testing.T, s service, dir string) [][]byte {
	t.Helper()
	host, ok := s.hostPath(t, dir)
	if !ok {
		t.Fatalf("%s is not bind-mounted into Grafana", dir)
	}
	names, err := filepath.Glob(filepath.Join(host, "*.y*ml"))
	if err != nil || len(names) == 0 {
		t.Fatalf("%s (%s): no YAML files (%v)", dir, host, err)
	}
	var out [][]byte
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// datasources returns the provisioned data sources by uid, checking that
// each URL is a compose service listening on that port.
func datasources(t *testing.T, p *project) map[string]datasource {
	t.Helper()
	_, s := p.only(t, grafanaImage)
	out := map[string]datasource{}
	for _, b := range grafanaFiles(t, s, grafanaDatasources) {
		var f struct {
			Datasources []datasource `yaml:"datasources"`
		}
		if err := yaml.Unmarshal(b, &f); err != nil {
			t.Fatal(err)
		}
		for _, ds := range f.Datasources {
			if ds.UID == "" || hasKey(out, ds.UID) {
				t.Errorf("data source %q: want a unique uid, the dashboards refer to it (uid %q)", ds.Name, ds.UID)
			}
			out[ds.UID] = ds
			u, err := url.Parse(ds.URL)
			if err != nil || u.Port() == "" {
				t.Errorf("data source %s: url %q: want http://SERVICE:PORT", ds.Name, ds.URL)
				continue
			}
			checkTarget(t, p, "data source "+ds.Name, u.Host)
		}
	}
	return out
}

func TestGrafanaDatasources(t *testing.T) {
	p := load(t)
	ds := datasources(t, p)
	types := map[string]string{}
	for _, d := range ds {
		types[d.Type] = d.URL
	}
	for typ, repo := range map[string]string{"prometheus": prometheusImage, "tempo": tempoImage, "jaeger": jaegerImage} {
		u, ok := types[typ]
		if !ok {
			t.Errorf("no %s data source", typ)
			continue
		}
		host, _, _ := net.SplitHostPort(strings.TrimPrefix(u, "http://"))
		if r, _ := splitImage(p.service(t, host).Image); r != repo {
			t.Errorf("the %s data source points at %s, which runs %s", typ, host, r)
		}
	}
}

// dashboardFiles returns the dashboards the provisioning loads, by file name.
func dashboardFiles(t *testing.T, p *project) map[string][]byte {
	t.Helper()
	_, s := p.only(t, grafanaImage)
	out := map[string][]byte{}
	for _, b := range grafanaFiles(t, s, grafanaDashboards) {
		var f struct {
			Providers []struct {
				Name    string `yaml:"name"`
				Type    string `yaml:"type"`
				Options struct {
					Path string `yaml:"path"`
				} `yaml:"options"`
			} `yaml:"providers"`
		}
		if err := yaml.Unmarshal(b, &f); err != nil {
			t.Fatal(err)
		}
		for _, pr := range f.Providers {
			host, ok := s.hostPath(t, pr.Options.Path)
			if pr.Type != "file" || !ok {
				t.Errorf("dashboard provider %s: path %q is not a bind-mounted directory", pr.Name, pr.Options.Path)
				continue
			}
			names, _ := filepath.Glob(filepath.Join(host, "*.json"))
			for _, n := range names {
				b, err := os.ReadFile(n)
				if err != nil {
					t.Fatal(err)
				}
				out[filepath.Base(n)] = b
			}
		}
	}
	if !hasKey(out, "kretrieve.json") {
		t.Fatalf("the dashboard providers do not load kretrieve.json (found %v)", slices.Sorted(maps.Keys(out)))
	}
	return out
}

type panel struct {
	Title      string           `json:"title"`
	Type       string           `json:"type"`
	Datasource *dashboardSource `json:"datasource"`
	Targets    []struct {
		Datasource *dashboardSource `json:"datasource"`
		Expr       string           `json:"expr"`
		Query      string           `json:"query"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // of a collapsed row
}

type dashboardSource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// dashboard is a Grafana dashboard: its panels and template variables.
type dashboard struct {
	UID        string  `json:"uid"`
	Title      string  `json:"title"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []variable `json:"list"`
	} `json:"templating"`
	Inputs []json.RawMessage `json:"__inputs"`
}

// variable is a dashboard template variable: a data source variable
// (Type "datasource", Query the plugin type) or a query variable.
type variable struct {
	Name       string           `json:"name"`
	Type       string           `json:"type"`
	Query      any              `json:"query"`
	Definition string           `json:"definition"`
	Datasource *dashboardSource `json:"datasource"`
	IncludeAll bool             `json:"includeAll"`
	AllValue   string           `json:"allValue"`
	Current    struct {
		Value any `json:"value"`
	} `json:"current"`
}

// variableRef matches a reference to a template variable, as a whole value.
var variableRef = regexp.MustCompile(`^\$\{?(\w+)\}?$`)

// variable returns the dashboard's variable name.
func (d dashboard) variable(name string) (variable, bool) {
	for _, v := range d.Templating.List {
		if v.Name == name {
			return v, true
		}
	}
	return variable{}, false
}

// resolve returns src with a data source variable replaced by its
// default (current) value, as Grafana opens the provisioned dashboard; a
// reference to a missing variable, or one of another plugin type, stays
// unresolved (and is no provisioned data source).
func (d dashboard) resolve(src *dashboardSource) *dashboardSource {
	if src == nil {
		return nil
	}
	m := variableRef.FindStringSubmatch(src.UID)
	if m == nil {
		return src
	}
	v, ok := d.variable(m[1])
	if !ok || v.Type != "datasource" || v.Query != src.Type {
		return src
	}
	uid, _ := v.Current.Value.(string)
	return &dashboardSource{Type: src.Type, UID: uid}
}

func TestDashboardQueriesUseEmittedMetrics(t *testing.T) {
	p := load(t)
	ds := datasources(t, p)
	known := map[string]bool{}
	for _, in := range emitted() {
		for _, n := range promNames(in) {
			known[n] = true
		}
	}
	for file, b := range dashboardFiles(t, p) {
		t.Run(file, func(t *testing.T) {
			var d dashboard
			if err := json.Unmarshal(b, &d); err != nil {
				t.Fatal(err)
			}
			if d.UID == "" || d.Title == "" || len(d.Panels) == 0 {
				t.Fatal("want a uid, a title and panels")
			}
			used := map[string]bool{}
			var check func(ps []panel)
			check = func(ps []panel) {
				for _, pn := range ps {
					check(pn.Panels)
					if pn.Type == "row" {
						continue
					}
					if src := d.resolve(pn.Datasource); src != nil && (!hasKey(ds, src.UID) || ds[src.UID].Type != src.Type) {
						t.Errorf("panel %q: data source %+v is not provisioned", pn.Title, src)
					}
					for _, tg := range pn.Targets {
						src := tg.Datasource
						if src == nil {
							src = pn.Datasource
						}
						src = d.resolve(src)
						if src == nil || !hasKey(ds, src.UID) || ds[src.UID].Type != src.Type {
							t.Errorf("panel %q: data source %+v is not provisioned", pn.Title, src)
							continue
						}
						if src.Type != "prometheus" {
							continue
						}
						if strings.TrimSpace(tg.Expr) == "" {
							t.Errorf("panel %q: empty expression", pn.Title)
						}
						for _, m := range promMetrics(tg.Expr) {
							used[m] = true
							if !known[m] {
								t.Errorf("panel %q: %s is not a metric kretrieve emits (%s)", pn.Title, m, tg.Expr)
							}
						}
					}
				}
			}
			check(d.Panels)
			if file != "kretrieve.json" {
				return
			}
			// The panels the dashboard exists for.
			for _, in := range emitted() {
				switch in.name {
				case otelnames.MetricQueueWait, messagingconv.ProcessDuration{}.Name(), otelnames.MetricLagRecords, otelnames.MetricLagSeconds, otelnames.MetricPathwayLatency,
					otelnames.MetricIndexLagRecords, otelnames.MetricIndexLagSeconds:
					if n := promNames(in)[0]; !used[n] {
						t.Errorf("no panel queries %s (%s)", n, in.name)
					}
				}
			}
		})
	}
}

// promLabel is the Prometheus label of an attribute key, as Prometheus's
// OTLP receiver translates it: every other character than letters and digits
// becomes _.
func promLabel(k string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, k)
}

var (
	promLabelName  = regexp.MustCompile(`\bkretrieve_pathway_[a-z_]+\b`)
	promMeasureVal = regexp.MustCompile(`kretrieve_pathway_measure\s*=~?\s*"([^"]*)"`)
)

// TestPathwayPanelsUseTheMetricsLabels: the pathway panels group and
// filter by labels kretrieve.pathway.latency really has, and select the
// measures it records, and they need the explicit-bucket histograms that
// compose.yaml asks for.
func TestPathwayPanelsUseTheMetricsLabels(t *testing.T) {
	p := load(t)
	labels := map[string]bool{}
	for _, k := range []string{string(otelnames.PathwayHash), string(otelnames.PathwayParentHash), string(otelnames.PathwayEdge),
		string(otelnames.PathwayDirection), string(otelnames.PathwayMeasure)} {
		labels[promLabel(k)] = true
	}
	metric := promNames(instrument{name: otelnames.MetricPathwayLatency, unit: "s", kind: "histogram"})[0]
	metric = strings.TrimSuffix(metric, "_bucket")
	var d struct {
		Panels []panel `json:"panels"`
	}
	if err := json.Unmarshal(dashboardFiles(t, p)["kretrieve.json"], &d); err != nil {
		t.Fatal(err)
	}
	measures := map[string]bool{}
	n := 0
	for _, pn := range d.Panels {
		for _, tg := range pn.Targets {
			if !strings.Contains(tg.Expr, metric) {
				continue
			}
			n++
			for _, l := range promLabelName.FindAllString(promString.ReplaceAllString(tg.Expr, `""`), -1) {
				if !strings.HasPrefix(l, metric) && !labels[l] {
					t.Errorf("panel %q: kretrieve.pathway.latency has no label %s (%s)", pn.Title, l, tg.Expr)
				}
			}
			for _, m := range promMeasureVal.FindAllStringSubmatch(tg.Expr, -1) {
				measures[m[1]] = true
				if m[1] != otelnames.MeasureEdge && m[1] != otelnames.MeasureOrigin {
					t.Errorf("panel %q: measure %q is neither %s nor %s", pn.Title, m[1], otelnames.MeasureEdge, otelnames.MeasureOrigin)
				}
			}
		}
	}
	if n == 0 || !measures[otelnames.MeasureEdge] || !measures[otelnames.MeasureOrigin] {
		t.Errorf("%d pathway queries, measures %v: want panels of both measures", n, measures)
	}
	for _, pr := range p.procs(t) {
		if pr.svc.Image != localImage || pr.cmd() == "index" {
			continue
		}
		if v := pr.svc.env("OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION"); v != "explicit_bucket_histogram" {
			t.Errorf("%s: OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION=%q: the dashboard's pathway panels read classic buckets: explicit_bucket_histogram", pr.service, v)
		}
	}
}

// jobMatcher is the selector every PromQL query of the dashboard carries.
const jobMatcher = `job=~"$job"`

// TestDashboardImportsIntoAnyGrafana: the dashboard names no data source of
// the compose stack. Every panel and query uses the data source variable of
// its type (${datasource} for Prometheus, ${tempo} for Tempo), whose
// default is the provisioned one, and every PromQL selector filters on the
// job variable, whose values come from a metric every kretrieve process
// emits. Grafana's import asks for nothing (no __inputs: provisioning does
// not fill them in); the variables pick the importer's data sources.
func TestDashboardImportsIntoAnyGrafana(t *testing.T) {
	p := load(t)
	var d dashboard
	if err := json.Unmarshal(dashboardFiles(t, p)["kretrieve.json"], &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Inputs) > 0 {
		t.Errorf("__inputs %s: Grafana's provisioning would not fill them in; use data source variables", d.Inputs)
	}
	sourceVar := map[string]string{"prometheus": "datasource", "tempo": "tempo"}
	for typ, name := range sourceVar {
		if v, ok := d.variable(name); !ok || v.Type != "datasource" || v.Query != typ {
			t.Errorf("no data source variable %s of type %s (got %+v)", name, typ, v)
		}
	}
	job, ok := d.variable("job")
	if !ok || job.Type != "query" || job.Datasource == nil || job.Datasource.UID != "${datasource}" || !job.IncludeAll || job.AllValue == "" {
		t.Errorf("job: want a query variable over ${datasource} with an All value, got %+v", job)
	}
	known := map[string]bool{}
	for _, in := range emitted() {
		for _, n := range promNames(in) {
			known[n] = true
		}
	}
	if m := regexp.MustCompile(`^label_values\((\w+), job\)$`).FindStringSubmatch(job.Definition); m == nil || !known[m[1]] {
		t.Errorf("job variable %q: want label_values(<a metric kretrieve emits>, job)", job.Definition)
	}

	uses := func(title string, src *dashboardSource) {
		if src == nil || src.UID != "${"+sourceVar[src.Type]+"}" {
			t.Errorf("panel %q: data source %+v, want the variable of its type", title, src)
		}
	}
	queries := 0
	var check func([]panel)
	check = func(ps []panel) {
		for _, pn := range ps {
			check(pn.Panels)
			if pn.Type == "row" {
				continue
			}
			uses(pn.Title, pn.Datasource)
			for _, tg := range pn.Targets {
				uses(pn.Title, tg.Datasource)
				if tg.Datasource == nil || tg.Datasource.Type != "prometheus" {
					continue
				}
				queries++
				for _, sel := range promSelectors(tg.Expr) {
					if !strings.Contains(sel, jobMatcher) {
						t.Errorf("panel %q: selector %s lacks %s (%s)", pn.Title, sel, jobMatcher, tg.Expr)
					}
				}
			}
		}
	}
	check(d.Panels)
	if queries < 10 {
		t.Errorf("%d PromQL queries checked; the dashboard has more", queries)
	}
}

// promSelectors returns every series selector of a PromQL expression: each
// metric name promMetrics finds, with its label matchers ("" when none).
func promSelectors(expr string) []string {
	var out []string
	for _, m := range slices.Compact(slices.Sorted(slices.Values(promMetrics(expr)))) {
		re := regexp.MustCompile(`(?:^|[^A-Za-z0-9_:])(` + regexp.QuoteMeta(m) + `(?:\{[^}]*\})?)`)
		for _, sm := range re.FindAllStringSubmatch(expr, -1) {
			out = append(out, sm[1])
		}
	}
	return out
}

func TestPromSelectors(t *testing.T) {
	got := promSelectors(`sum(rate(a_total{job=~"$job", x="1"}[1m])) / sum(b_total) + sum(a_total)`)
	want := []string{`a_total{job=~"$job", x="1"}`, `a_total`, `b_total`}
	if !slices.Equal(got, want) {
		t.Errorf("promSelectors = %q, want %q", got, want)
	}
}
