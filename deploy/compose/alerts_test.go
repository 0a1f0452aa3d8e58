// SPDX-License-Identifier: Apache-2.0

package compose_test

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/yamlfile"
	"github.com/kretrieve/kretrieve/otelnames"
)

// The alerting rules' one copy and their promtool unit tests (`make
// alerts`); compose mounts the file, deploy/k8s ships it as a ConfigMap.
const (
	alertsDir       = repoRoot + "/deploy/alerts"
	alertRulesFile  = alertsDir + "/kretrieve.rules.yaml"
	alertTestsFile  = alertsDir + "/kretrieve.rules.test.yaml"
	operationsDoc   = repoRoot + "/docs/operations.md"
	promRulesInPod  = "/etc/prometheus/rules/kretrieve.rules.yaml"
	alertsResource  = "../alerts"
	alertsConfigMap = "kretrieve-prometheus-rules"
	explicitBuckets = "OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION"
)

// ruleFile is a Prometheus rule file.
type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Record      string            `yaml:"record"`
			Alert       string            `yaml:"alert"`
			Expr        string            `yaml:"expr"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

func alertRules(t *testing.T) ruleFile {
	t.Helper()
	var f ruleFile
	yamlfile.Read(t, alertRulesFile, &f)
	if len(f.Groups) == 0 {
		t.Fatalf("%s: no rule groups", alertRulesFile)
	}
	return f
}

// TestAlertRulesAreShipped: compose's Prometheus loads the rules file
// itself, and the Kubernetes kustomization generates its ConfigMap from
// the same file; no other file in deploy/ holds a copy.
func TestAlertRulesAreShipped(t *testing.T) {
	p := load(t)
	host, ok := p.Services["prometheus"].hostPath(t, promRulesInPod)
	if !ok {
		t.Fatalf("compose's prometheus mounts nothing at %s", promRulesInPod)
	}
	if want, _ := filepath.Abs(alertRulesFile); !sameFile(t, host, want) {
		t.Errorf("compose mounts %s at %s, want %s", host, promRulesInPod, alertRulesFile)
	}
	var prom struct {
		RuleFiles []string `yaml:"rule_files"`
	}
	yamlfile.Read(t, repoRoot+"/deploy/compose/prometheus.yaml", &prom)
	if !slices.ContainsFunc(prom.RuleFiles, func(g string) bool { ok, _ := path.Match(g, promRulesInPod); return ok }) {
		t.Errorf("prometheus.yaml rule_files %v do not load %s", prom.RuleFiles, promRulesInPod)
	}

	var k8s struct {
		Resources []string `yaml:"resources"`
	}
	yamlfile.Read(t, repoRoot+"/deploy/k8s/kustomization.yaml", &k8s)
	if !slices.Contains(k8s.Resources, alertsResource) {
		t.Errorf("deploy/k8s/kustomization.yaml resources %v lack %s", k8s.Resources, alertsResource)
	}
	var gen struct {
		ConfigMapGenerator []struct {
			Name  string   `yaml:"name"`
			Files []string `yaml:"files"`
		} `yaml:"configMapGenerator"`
	}
	yamlfile.Read(t, alertsDir+"/kustomization.yaml", &gen)
	if len(gen.ConfigMapGenerator) != 1 || gen.ConfigMapGenerator[0].Name != alertsConfigMap ||
		!slices.Equal(gen.ConfigMapGenerator[0].Files, []string{filepath.Base(alertRulesFile)}) {
		t.Errorf("deploy/alerts/kustomization.yaml generates %+v, want %s from %s", gen.ConfigMapGenerator, alertsConfigMap, filepath.Base(alertRulesFile))
	}

	// The latency SLO reads classic buckets: Kubernetes' pods export
	// explicit-bucket histograms too (compose's services do, see
	// TestPathwayPanelsUseTheMetricsLabels).
	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	yamlfile.Read(t, repoRoot+"/deploy/k8s/configmap.yaml", &cm)
	if v := cm.Data[explicitBuckets]; v != "explicit_bucket_histogram" {
		t.Errorf("deploy/k8s/configmap.yaml: %s = %q, want explicit_bucket_histogram (the SLO rules read le buckets)", explicitBuckets, v)
	}

	// One home: no other YAML under deploy/ or at the root defines an alert.
	alert := regexp.MustCompile(`(?m)^\s*-?\s*alert:\s*Kretrieve`)
	err := filepath.WalkDir(repoRoot, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "bin") {
			return filepath.SkipDir
		}
		if d.IsDir() || !(strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) || sameFile(t, p, alertRulesFile) {
			return nil
		}
		if b, err := os.ReadFile(p); err == nil && alert.Match(b) {
			t.Errorf("%s defines kretrieve alerts: the one copy is %s", p, alertRulesFile)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func sameFile(t *testing.T, a, b string) bool {
	t.Helper()
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// tools names what an alert's description may point the operator at.
var tools = []string{"kretrieve pathways", "kretrieve lag", "kretrieve dlq", "the console"}

// TestAlertRulesAreDocumented: every alert has a severity, a summary, a
// description that says what to look at, and a runbook that is a heading
// of docs/operations.md.
func TestAlertRulesAreDocumented(t *testing.T) {
	doc, err := os.ReadFile(operationsDoc)
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^#+ +(.+)$`).FindAllStringSubmatch(string(doc), -1) {
		anchors[strings.ToLower(strings.Join(strings.Fields(strings.Trim(m[1], "`")), "-"))] = true
	}
	n := 0
	for _, g := range alertRules(t).Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			n++
			if s := r.Labels["severity"]; s != "critical" && s != "warning" {
				t.Errorf("%s: severity %q, want critical or warning", r.Alert, s)
			}
			if r.Annotations["summary"] == "" {
				t.Errorf("%s: no summary", r.Alert)
			}
			if d := r.Annotations["description"]; !slices.ContainsFunc(tools, func(s string) bool { return strings.Contains(d, s) }) {
				t.Errorf("%s: the description names none of %q", r.Alert, tools)
			}
			want := "docs/operations.md#" + strings.ToLower(r.Alert)
			if rb := r.Annotations["runbook"]; rb != want {
				t.Errorf("%s: runbook %q, want %q", r.Alert, rb, want)
			}
			if !anchors[strings.ToLower(r.Alert)] {
				t.Errorf("%s: docs/operations.md has no heading %s (its runbook)", r.Alert, r.Alert)
			}
		}
	}
	if n == 0 {
		t.Fatal("no alerts")
	}
}

// TestAlertRulesAreUnitTested: kretrieve.rules.test.yaml (promtool test
// rules, `make alerts`) has, for every alert, a case where it fires and
// one where it does not, and tests nothing but this rules file.
func TestAlertRulesAreUnitTested(t *testing.T) {
	var f struct {
		RuleFiles []string `yaml:"rule_files"`
		Tests     []struct {
			AlertRuleTest []struct {
				Alertname string `yaml:"alertname"`
				ExpAlerts []any  `yaml:"exp_alerts"`
			} `yaml:"alert_rule_test"`
		} `yaml:"tests"`
	}
	yamlfile.Read(t, alertTestsFile, &f)
	if !slices.Equal(f.RuleFiles, []string{filepath.Base(alertRulesFile)}) {
		t.Errorf("%s tests %v, want %s", alertTestsFile, f.RuleFiles, filepath.Base(alertRulesFile))
	}
	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range f.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				quiet[a.Alertname] = true
			}
		}
	}
	for _, g := range alertRules(t).Groups {
		for _, r := range g.Rules {
			if r.Alert != "" && (!fires[r.Alert] || !quiet[r.Alert]) {
				t.Errorf("%s: tested firing %v, not firing %v; want both", r.Alert, fires[r.Alert], quiet[r.Alert])
			}
		}
	}
}

// TestAlertRulesUseEmittedMetrics: every series a rule selects is a metric
// the code emits, named as Prometheus's OTLP translation names it, or a
// recording rule of the file.
func TestAlertRulesUseEmittedMetrics(t *testing.T) {
	known := map[string]bool{}
	for _, in := range emitted() {
		for _, n := range promNames(in) {
			known[n] = true
		}
	}
	rules := alertRules(t)
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			known[r.Record] = true
		}
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			for _, m := range promMetrics(r.Expr) {
				if !known[m] {
					t.Errorf("%s%s: %s is no metric kretrieve emits", r.Alert, r.Record, m)
				}
			}
		}
	}
	// The latency SLO reads the pathway histogram's labels.
	for _, k := range []string{string(otelnames.PathwayMeasure), string(otelnames.PathwayDirection), string(otelnames.PathwayEdge)} {
		b, _ := os.ReadFile(alertRulesFile)
		if !strings.Contains(string(b), promLabel(k)+"=") {
			t.Errorf("the latency SLO does not select on %s", promLabel(k))
		}
	}
}
