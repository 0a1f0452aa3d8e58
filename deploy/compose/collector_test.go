// SPDX-License-Identifier: Apache-2.0

package compose_test

import (
	"bytes"
	"maps"
	"net"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Image repositories of the telemetry services.
const (
	collectorImage  = "otel/opentelemetry-collector-contrib"
	jaegerImage     = "jaegertracing/jaeger"
	tempoImage      = "grafana/tempo"
	prometheusImage = "prom/prometheus"
	grafanaImage    = "grafana/grafana"
)

// Ports the images serve without configuration from this directory.
var imagePorts = map[string][]int{
	jaegerImage:     {4317, 4318, 16686}, // cmd/jaeger/internal/all-in-one.yaml: OTLP gRPC, OTLP HTTP, UI
	prometheusImage: {9090},
	grafanaImage:    {3000},
}

// User data that must not leave the collector (README: the record key is
// never recorded, the query text only with --record-query-text).
var redactedKeys = []string{"kretrieve.query.text", "messaging.kafka.message.key"}

type pipeline struct {
	Receivers  []string `yaml:"receivers"`
	Processors []string `yaml:"processors"`
	Exporters  []string `yaml:"exporters"`
}

type collectorConfig struct {
	Receivers  map[string]yaml.Node `yaml:"receivers"`
	Processors map[string]yaml.Node `yaml:"processors"`
	Exporters  map[string]yaml.Node `yaml:"exporters"`
	Extensions map[string]yaml.Node `yaml:"extensions"`
	Connectors map[string]yaml.Node `yaml:"connectors"`
	Service    struct {
		Extensions []string            `yaml:"extensions"`
		Pipelines  map[string]pipeline `yaml:"pipelines"`
		Telemetry  yaml.Node           `yaml:"telemetry"`
	} `yaml:"service"`
}

// kind is a component's type: "otlp" for "otlp/jaeger".
func kind(id string) string {
	k, _, _ := strings.Cut(id, "/")
	return k
}

// configArg returns the value of a command argument -name=VALUE or
// --name=VALUE.
func configArg(s service, name string) (string, bool) {
	for _, a := range s.Command {
		if v, ok := strings.CutPrefix(strings.TrimLeft(a, "-"), name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// mountedFile reads the repository file a service sees at container path p.
func mountedFile(t *testing.T, s service, p string) []byte {
	t.Helper()
	host, ok := s.hostPath(t, p)
	if !ok {
		t.Fatalf("%s is not bind-mounted", p)
	}
	b, err := os.ReadFile(host)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// loadCollector reads the configuration the collector service is started
// with (--config through its bind mount).
func loadCollector(t *testing.T, p *project) *collectorConfig {
	t.Helper()
	_, s := p.only(t, collectorImage)
	path, ok := configArg(s, "config")
	if !ok {
		t.Fatal("the collector runs without --config: it would use the image's default configuration")
	}
	var c collectorConfig
	if err := yaml.Unmarshal(expandDefaults(t, withoutComments(mountedFile(t, s, path))), &c); err != nil {
		t.Fatalf("collector configuration: %v", err)
	}
	if len(c.Service.Pipelines) == 0 {
		t.Fatal("collector configuration: no pipelines")
	}
	return &c
}

// collectorVariable is a ${env:NAME:-default} reference of the collector
// configuration.
var collectorVariable = regexp.MustCompile(`\$\{([^}]*)\}`)

// endpointVariable is the only form of reference the configuration may
// use: an endpoint's environment variable with compose's value as default.
var endpointVariable = regexp.MustCompile(`^env:([A-Z][A-Z0-9_]*_(LISTEN|ENDPOINT)):-(.+)$`)

// expandDefaults replaces every ${env:NAME:-default} in the collector
// configuration by its default: what compose runs, which sets none of them.
func expandDefaults(t *testing.T, b []byte) []byte {
	t.Helper()
	return collectorVariable.ReplaceAllFunc(b, func(ref []byte) []byte {
		m := endpointVariable.FindSubmatch(collectorVariable.FindSubmatch(ref)[1])
		if m == nil {
			t.Errorf("collector configuration: %s: only ${env:NAME_ENDPOINT:-default} or ${env:NAME_LISTEN:-default} (an address, with compose's as default) may be read from the environment", ref)
			return ref
		}
		return m[3]
	})
}

// withoutComments drops the lines of b that hold only a YAML comment.
func withoutComments(b []byte) []byte {
	var out [][]byte
	for line := range bytes.Lines(b) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line)
		}
	}
	return bytes.Join(out, nil)
}

// TestCollectorReadsOnlyEndpointsFromTheEnvironment: the integration tier
// runs the configuration file unchanged and overrides only addresses; a
// variable that changed a policy or a limit would let the tier test
// something other than what compose runs.
func TestCollectorReadsOnlyEndpointsFromTheEnvironment(t *testing.T) {
	p := load(t)
	_, s := p.only(t, collectorImage)
	path, _ := configArg(s, "config")
	raw := withoutComments(mountedFile(t, s, path))
	refs := collectorVariable.FindAll(raw, -1)
	if len(refs) == 0 {
		t.Fatal("the collector configuration reads no endpoint from the environment: the integration tier cannot run it unchanged on the host network")
	}
	expandDefaults(t, raw) // reports every reference of another form
	if n := len(regexp.MustCompile(`\$[A-Za-z_{]`).FindAll(raw, -1)); n != len(refs) {
		t.Errorf("%d $NAME or ${ but %d ${...} references: a bare $NAME would read the environment too", n, len(refs))
	}
}

// receiverEndpoint returns the endpoint of the otlp receiver's protocol
// (grpc or http).
func (c *collectorConfig) receiverEndpoint(t *testing.T, protocol string) string {
	t.Helper()
	var r struct {
		Protocols map[string]struct {
			Endpoint string `yaml:"endpoint"`
		} `yaml:"protocols"`
	}
	n, ok := c.Receivers["otlp"]
	if !ok {
		t.Fatal("collector: no otlp receiver")
	}
	if err := n.Decode(&r); err != nil {
		t.Fatal(err)
	}
	proto, ok := r.Protocols[protocol]
	if !ok {
		t.Fatalf("collector: the otlp receiver does not take %s", protocol)
	}
	if proto.Endpoint == "" {
		t.Fatalf("collector: otlp %s has no endpoint; the default listens on localhost only", protocol)
	}
	return proto.Endpoint
}

// port returns the port of HOST:PORT and checks that HOST is not loopback
// (an address other containers could not reach).
func port(t *testing.T, endpoint string) int {
	t.Helper()
	host, p, err := net.SplitHostPort(endpoint)
	if err != nil {
		t.Fatalf("endpoint %q: %v", endpoint, err)
	}
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		t.Errorf("endpoint %s listens on loopback, unreachable from other containers", endpoint)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		t.Fatalf("endpoint %q: %v", endpoint, err)
	}
	return n
}

// listens returns the ports the service with image repository repo serves
// other containers on.
func listens(t *testing.T, p *project, repo string) []int {
	t.Helper()
	switch repo {
	case collectorImage:
		c := loadCollector(t, p)
		return []int{port(t, c.receiverEndpoint(t, "grpc")), port(t, c.receiverEndpoint(t, "http"))}
	case tempoImage:
		tc := loadTempo(t, p)
		return []int{tc.Server.HTTPListenPort, port(t, tc.Distributor.Receivers.OTLP.Protocols.GRPC.Endpoint)}
	}
	ports, ok := imagePorts[repo]
	if !ok {
		t.Fatalf("no known ports for %s", repo)
	}
	return ports
}

// checkTarget checks that HOST:PORT is a compose service listening on PORT.
func checkTarget(t *testing.T, p *project, what, hostport string) {
	t.Helper()
	host, portText, err := net.SplitHostPort(hostport)
	if err != nil {
		t.Errorf("%s %q: %v", what, hostport, err)
		return
	}
	s, ok := p.Services[host]
	if !ok {
		t.Errorf("%s %s: %q is not a compose service", what, hostport, host)
		return
	}
	repo, _ := splitImage(s.Image)
	n, _ := strconv.Atoi(portText)
	if ports := listens(t, p, repo); !slices.Contains(ports, n) {
		t.Errorf("%s %s: %s listens on %v", what, hostport, host, ports)
	}
}

func TestCollectorPipelines(t *testing.T) {
	p := load(t)
	c := loadCollector(t, p)
	declared := map[string]map[string]yaml.Node{
		"receiver":  c.Receivers,
		"processor": c.Processors,
		"exporter":  c.Exporters,
	}
	used := map[string]map[string]bool{"receiver": {}, "processor": {}, "exporter": {}}
	for _, name := range slices.Sorted(maps.Keys(c.Service.Pipelines)) {
		pl := c.Service.Pipelines[name]
		t.Run(name, func(t *testing.T) {
			for role, ids := range map[string][]string{"receiver": pl.Receivers, "processor": pl.Processors, "exporter": pl.Exporters} {
				for _, id := range ids {
					_, ok := declared[role][id]
					if !ok && (role == "processor" || c.Connectors == nil || !hasKey(c.Connectors, id)) {
						t.Errorf("%s %q is not declared", role, id)
					}
					used[role][id] = true
				}
			}
			if len(pl.Receivers) == 0 || len(pl.Exporters) == 0 {
				t.Error("a pipeline needs receivers and exporters")
			}
			procs := pl.Processors
			if len(procs) < 2 || kind(procs[0]) != "memory_limiter" || kind(procs[len(procs)-1]) != "batch" {
				t.Errorf("processors %v: memory_limiter must come first and batch last", procs)
			}
		})
	}
	for role, ids := range declared {
		for id := range ids {
			if !used[role][id] {
				t.Errorf("%s %q is declared but in no pipeline", role, id)
			}
		}
	}
	for _, id := range c.Service.Extensions {
		if !hasKey(c.Extensions, id) {
			t.Errorf("extension %q is not declared", id)
		}
	}
	for id := range c.Extensions {
		if !slices.Contains(c.Service.Extensions, id) {
			t.Errorf("extension %q is declared but not enabled", id)
		}
	}
}

func TestCollectorRedactsUserData(t *testing.T) {
	p := load(t)
	c := loadCollector(t, p)
	var redacting []string
	for id, n := range c.Processors {
		if kind(id) != "redaction" {
			continue
		}
		var r struct {
			AllowAllKeys       bool     `yaml:"allow_all_keys"`
			BlockedKeyPatterns []string `yaml:"blocked_key_patterns"`
			IgnoredKeys        []string `yaml:"ignored_keys"`
		}
		if err := n.Decode(&r); err != nil {
			t.Fatal(err)
		}
		if !r.AllowAllKeys {
			// Without it the processor drops every attribute not listed in
			// allowed_keys: the traces would lose their semantic conventions.
			t.Errorf("%s: allow_all_keys must be true (only the listed user data is masked)", id)
		}
		masked := 0
		for _, key := range redactedKeys {
			if slices.Contains(r.IgnoredKeys, key) {
				t.Errorf("%s ignores %s", id, key)
			}
			if slices.ContainsFunc(r.BlockedKeyPatterns, func(pat string) bool {
				re, err := regexp.Compile(pat)
				if err != nil {
					t.Errorf("%s: blocked key pattern %q: %v", id, pat, err)
					return false
				}
				return re.MatchString(key)
			}) {
				masked++
			}
		}
		if masked == len(redactedKeys) {
			redacting = append(redacting, id)
		}
	}
	if len(redacting) == 0 {
		t.Fatalf("no redaction processor masks every one of %v", redactedKeys)
	}
	// Every signal: the query text must reach neither the trace stores nor
	// Prometheus (a metric attribute) nor the logs.
	for name, pl := range c.Service.Pipelines {
		i := slices.IndexFunc(pl.Processors, func(id string) bool { return slices.Contains(redacting, id) })
		if i < 0 {
			t.Errorf("pipeline %s: none of %v", name, redacting)
			continue
		}
		if j := slices.IndexFunc(pl.Processors, func(id string) bool { return kind(id) == "tail_sampling" }); j >= 0 && j < i {
			t.Errorf("pipeline %s: redact before tail_sampling holds the spans in memory", name)
		}
	}
}

func TestCollectorTailSampling(t *testing.T) {
	p := load(t)
	c := loadCollector(t, p)
	var found bool
	for name, pl := range c.Service.Pipelines {
		for _, id := range pl.Processors {
			if kind(id) != "tail_sampling" {
				continue
			}
			if kind(name) != "traces" {
				t.Errorf("pipeline %s: tail_sampling only applies to traces", name)
			}
			found = true
			var ts struct {
				DecisionWait string `yaml:"decision_wait"`
				Policies     []struct {
					Name       string
					Type       string
					StatusCode struct {
						StatusCodes []string `yaml:"status_codes"`
					} `yaml:"status_code"`
					Latency struct {
						ThresholdMs int `yaml:"threshold_ms"`
					}
					Probabilistic struct {
						SamplingPercentage float64 `yaml:"sampling_percentage"`
					}
				}
			}
			n := c.Processors[id]
			if err := n.Decode(&ts); err != nil {
				t.Fatal(err)
			}
			var errorsKept, slowKept, baseline bool
			for _, pol := range ts.Policies {
				switch pol.Type {
				case "status_code":
					errorsKept = errorsKept || slices.Contains(pol.StatusCode.StatusCodes, "ERROR")
				case "latency":
					slowKept = slowKept || pol.Latency.ThresholdMs > 0
				case "probabilistic":
					pct := pol.Probabilistic.SamplingPercentage
					baseline = baseline || pct > 0 && pct < 100
				}
			}
			if !errorsKept || !slowKept || !baseline {
				t.Errorf("%s: want policies keeping errors (status_code ERROR) %v, slow traces (latency) %v and a share of the rest (probabilistic) %v", id, errorsKept, slowKept, baseline)
			}
		}
	}
	if !found {
		t.Error("no tail_sampling processor in a pipeline")
	}
}

func TestCollectorExportersReachServices(t *testing.T) {
	p := load(t)
	c := loadCollector(t, p)
	for _, id := range slices.Sorted(maps.Keys(c.Exporters)) {
		n := c.Exporters[id]
		var e struct {
			Endpoint string
			TLS      struct{ Insecure bool }
		}
		if err := n.Decode(&e); err != nil {
			t.Fatal(err)
		}
		switch kind(id) {
		case "otlp", "otlp_grpc":
			checkTarget(t, p, "exporter "+id, e.Endpoint)
			if !e.TLS.Insecure {
				t.Errorf("exporter %s: the targets speak plain gRPC: tls.insecure must be true", id)
			}
		case "otlphttp":
			u, err := url.Parse(e.Endpoint)
			if err != nil || u.Scheme != "http" {
				t.Errorf("exporter %s: endpoint %q: want an http:// URL (%v)", id, e.Endpoint, err)
				continue
			}
			checkTarget(t, p, "exporter "+id, u.Host)
		case "debug":
			// Prints in the collector: reaches no service; only the logs
			// pipeline may use it (spans and metrics have real stores).
			for name, pl := range c.Service.Pipelines {
				if slices.Contains(pl.Exporters, id) && name != "logs" {
					t.Errorf("exporter %s in the %s pipeline: only logs go to the collector's output", id, name)
				}
			}
		default:
			t.Errorf("exporter %s: not checked here; add it to the test", id)
		}
	}
}

type tempoConfig struct {
	Server struct {
		HTTPListenPort int `yaml:"http_listen_port"`
	} `yaml:"server"`
	Distributor struct {
		Receivers struct {
			OTLP struct {
				Protocols struct {
					GRPC struct {
						Endpoint string `yaml:"endpoint"`
					} `yaml:"grpc"`
				} `yaml:"protocols"`
			} `yaml:"otlp"`
		} `yaml:"receivers"`
	} `yaml:"distributor"`
	Storage struct {
		Trace struct {
			Backend string `yaml:"backend"`
		} `yaml:"trace"`
	} `yaml:"storage"`
}

// loadTempo reads the configuration the Tempo service is started with.
func loadTempo(t *testing.T, p *project) *tempoConfig {
	t.Helper()
	_, s := p.only(t, tempoImage)
	path, ok := configArg(s, "config.file")
	if !ok {
		t.Fatal("tempo runs without -config.file")
	}
	var c tempoConfig
	if err := yaml.Unmarshal(mountedFile(t, s, path), &c); err != nil {
		t.Fatalf("tempo configuration: %v", err)
	}
	if c.Server.HTTPListenPort == 0 || c.Distributor.Receivers.OTLP.Protocols.GRPC.Endpoint == "" {
		t.Fatal("tempo configuration: want server.http_listen_port and an OTLP gRPC receiver endpoint")
	}
	return &c
}

func TestTempoConfig(t *testing.T) {
	c := loadTempo(t, load(t))
	port(t, c.Distributor.Receivers.OTLP.Protocols.GRPC.Endpoint)
	if c.Storage.Trace.Backend != "local" {
		t.Errorf("storage.trace.backend %q: the compose stack has no object store, want local", c.Storage.Trace.Backend)
	}
}

// TestMetricsArePushedToPrometheus: kretrieve's metrics (the metrics
// pipeline) and the collector's own reach Prometheus's OTLP receiver, which
// the Prometheus service enables, with exemplar storage for the exemplars.
func TestMetricsArePushedToPrometheus(t *testing.T) {
	p := load(t)
	promName, prom := p.only(t, prometheusImage)
	for _, flag := range []string{"--web.enable-otlp-receiver", "--enable-feature=exemplar-storage"} {
		if !slices.Contains(prom.Command, flag) {
			t.Errorf("prometheus runs without %s (command %q)", flag, prom.Command)
		}
	}
	if path, ok := configArg(prom, "config.file"); !ok || path != "/etc/prometheus/prometheus.yml" {
		t.Errorf("prometheus --config.file=%q: want the mounted /etc/prometheus/prometheus.yml", path)
	}
	mountedFile(t, prom, "/etc/prometheus/prometheus.yml")

	c := loadCollector(t, p)
	otlpURL := func(what, endpoint string) {
		u, err := url.Parse(endpoint)
		if err != nil || u.Hostname() != promName || !strings.HasPrefix(u.Path, "/api/v1/otlp") {
			t.Errorf("%s %q: want http://%s:9090/api/v1/otlp…, Prometheus's OTLP receiver", what, endpoint, promName)
		}
	}
	for name, pl := range c.Service.Pipelines {
		if kind(name) != "metrics" {
			continue
		}
		for _, id := range pl.Exporters {
			var e struct{ Endpoint string }
			n := c.Exporters[id]
			if err := n.Decode(&e); err != nil {
				t.Fatal(err)
			}
			otlpURL("metrics exporter "+id, e.Endpoint)
		}
	}
	var telemetry struct {
		Metrics struct {
			Readers []struct {
				Periodic struct {
					Exporter struct {
						OTLP struct{ Endpoint string } `yaml:"otlp"`
					} `yaml:"exporter"`
				} `yaml:"periodic"`
			} `yaml:"readers"`
		} `yaml:"metrics"`
	}
	if err := c.Service.Telemetry.Decode(&telemetry); err != nil {
		t.Fatal(err)
	}
	if len(telemetry.Metrics.Readers) != 1 {
		t.Fatalf("service.telemetry.metrics.readers: %d, want one pushing to Prometheus", len(telemetry.Metrics.Readers))
	}
	otlpURL("the collector's own metrics", telemetry.Metrics.Readers[0].Periodic.Exporter.OTLP.Endpoint)
	if _, ok := p.Services[promName]; ok {
		collector, s := p.only(t, collectorImage)
		if _, ok := s.DependsOn[promName]; !ok {
			t.Errorf("%s does not depend on %s", collector, promName)
		}
	}
}

// manifest is the Collector Builder's manifest of the collector image the
// integration tier builds (tools/otelcol/manifest.yaml).
type manifest struct {
	Dist struct {
		Version string `yaml:"version"`
	} `yaml:"dist"`
	Receivers  []struct{ GoMod string } `yaml:"receivers"`
	Processors []struct{ GoMod string } `yaml:"processors"`
	Exporters  []struct{ GoMod string } `yaml:"exporters"`
	Extensions []struct{ GoMod string } `yaml:"extensions"`
	Connectors []struct{ GoMod string } `yaml:"connectors"`
}

// componentType is the configuration type a component module registers,
// by the collector's naming convention: module .../tailsamplingprocessor
// is type tail_sampling, compared without underscores ("tailsampling").
func componentType(gomod, role string) (typ, version string) {
	path, version, _ := strings.Cut(gomod, " ")
	return strings.TrimSuffix(path[strings.LastIndex(path, "/")+1:], role), version
}

// TestCollectorComponentsAreInTheManifest: the collector image built from
// the manifest must have every component compose's configuration names
// (else it refuses to start), and the manifest holds nothing the
// configuration does not use. Versions: one release for every component,
// the manifest's, the build script's builder and compose's upstream image.
func TestCollectorComponentsAreInTheManifest(t *testing.T) {
	p := load(t)
	c := loadCollector(t, p)
	b, err := os.ReadFile("../../tools/otelcol/manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	release := "v" + m.Dist.Version
	for role, pair := range map[string]struct {
		built []struct{ GoMod string }
		used  map[string]yaml.Node
	}{
		"receiver":  {m.Receivers, c.Receivers},
		"processor": {m.Processors, c.Processors},
		"exporter":  {m.Exporters, c.Exporters},
		"extension": {m.Extensions, c.Extensions},
		"connector": {m.Connectors, c.Connectors},
	} {
		built := map[string]bool{}
		for _, x := range pair.built {
			typ, version := componentType(x.GoMod, role)
			built[typ] = true
			if version != release {
				t.Errorf("manifest: %s at %s, want the manifest's release %s", x.GoMod, version, release)
			}
		}
		used := map[string]bool{}
		for id := range pair.used {
			typ := strings.ReplaceAll(kind(id), "_", "")
			used[typ] = true
			if !built[typ] {
				t.Errorf("the configuration's %s %q is not in tools/otelcol/manifest.yaml: the built collector would not start", role, id)
			}
		}
		for typ := range built {
			if !used[typ] {
				t.Errorf("manifest: %s %q is built but the configuration does not use it", role, typ)
			}
		}
	}

	_, s := p.only(t, collectorImage)
	if _, tag := splitImage(s.Image); "v"+tag != release {
		t.Errorf("compose runs %s, the integration tier builds %s: use the same release", s.Image, release)
	}
	script, err := os.ReadFile("../../tools/otelcol/build.sh")
	if err != nil {
		t.Fatal(err)
	}
	if want := `builder_version="` + release + `"`; !bytes.Contains(script, []byte(want)) {
		t.Errorf("tools/otelcol/build.sh: want %s (the builder of the components' release)", want)
	}
}

// TestComposeRunsTheTestedVersions: Jaeger and Prometheus in compose are the
// releases the integration tier builds from their Go modules and tests
// (tools/jaeger/build.sh, tools/prometheus/build.sh).
func TestComposeRunsTheTestedVersions(t *testing.T) {
	p := load(t)
	for _, c := range []struct {
		repo, script, variable string
	}{
		{jaegerImage, "../../tools/jaeger/build.sh", "pinned_v2"},
		{prometheusImage, "../../tools/prometheus/build.sh", "pinned_release"},
	} {
		b, err := os.ReadFile(c.script)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(c.variable + `="v([0-9.]+)"`).FindSubmatch(b)
		if m == nil {
			t.Fatalf("%s: no %s", c.script, c.variable)
		}
		_, s := p.only(t, c.repo)
		if _, tag := splitImage(s.Image); strings.TrimPrefix(tag, "v") != string(m[1]) {
			t.Errorf("compose runs %s, the integration tier builds and tests %s %s (%s)", s.Image, c.repo, m[1], c.script)
		}
	}
}
