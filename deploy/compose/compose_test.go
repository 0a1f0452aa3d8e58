// SPDX-License-Identifier: Apache-2.0

package compose_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/pathwaytopic"
	kpipeline "github.com/kretrieve/kretrieve/pipeline"
)

// localImage is the kretrieve image `make image` builds from the
// repository's Dockerfile; compose never pulls or builds it.
const localImage = "kretrieve:local"

// Defaults of the binary the checks fall back to when a variable is unset.
const (
	defaultShutdownTimeout = 10 * time.Second // retrieval, enrichment --shutdown-timeout
	defaultGatewayTimeout  = 10 * time.Second // gateway --timeout
	gatewayFlushTimeout    = 10 * time.Second // cmd_gateway.go: comp.shutdown(10*time.Second)
	defaultStopGrace       = 10 * time.Second // compose stop_grace_period
)

// str is an environment value: compose turns an unquoted true into "true"
// but yes or 010 surprise, so every value must be a YAML string.
type str string

func (s *str) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		return fmt.Errorf("line %d: %q must be a string (quote it)", n.Line, n.Value)
	}
	*s = str(n.Value)
	return nil
}

type dependency struct {
	Condition string `yaml:"condition"`
}

// service is the part of a compose service the checks read. Lists are in
// compose's short syntax only (command and entrypoint as lists,
// environment as a map, depends_on in the long form).
type service struct {
	Image           string                `yaml:"image"`
	PullPolicy      string                `yaml:"pull_policy"`
	Build           *yaml.Node            `yaml:"build"`
	ContainerName   string                `yaml:"container_name"`
	Hostname        string                `yaml:"hostname"`
	User            string                `yaml:"user"`
	Entrypoint      []string              `yaml:"entrypoint"`
	Command         []string              `yaml:"command"`
	Environment     map[string]str        `yaml:"environment"`
	Ports           []string              `yaml:"ports"`
	Volumes         []string              `yaml:"volumes"`
	Tmpfs           []string              `yaml:"tmpfs"`
	DependsOn       map[string]dependency `yaml:"depends_on"`
	Healthcheck     *struct{ Test []string }
	Restart         string `yaml:"restart"`
	StopGracePeriod string `yaml:"stop_grace_period"`
	Profiles        []string
}

// knownKeys are the service keys this file may use; anything else is
// probably a typo compose would reject or, worse, ignore.
var knownKeys = []string{
	"image", "pull_policy", "build", "container_name", "hostname", "user",
	"entrypoint", "command", "working_dir", "environment", "ports", "volumes",
	"depends_on", "healthcheck", "restart", "stop_grace_period", "profiles",
	"read_only", "cap_drop", "security_opt", "mem_limit", "tmpfs", "init",
	"labels", "stop_signal",
}

type project struct {
	Name     string                `yaml:"name"`
	Services map[string]service    `yaml:"services"`
	Volumes  map[string]*yaml.Node `yaml:"volumes"`
}

// load parses compose.yaml (anchors and merge keys resolved).
func load(t *testing.T) *project {
	t.Helper()
	b, err := os.ReadFile(composePath)
	if err != nil {
		t.Fatal(err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		t.Fatalf("%s: %v", composePath, err)
	}
	var p project
	if err := root.Decode(&p); err != nil {
		t.Fatalf("%s: %v", composePath, err)
	}
	var raw struct {
		Services map[string]map[string]yaml.Node `yaml:"services"`
	}
	if err := root.Decode(&raw); err != nil {
		t.Fatalf("%s: %v", composePath, err)
	}
	for name, keys := range raw.Services {
		for k := range keys {
			if !slices.Contains(knownKeys, k) {
				t.Errorf("service %s: unexpected key %q", name, k)
			}
		}
	}
	if len(p.Services) == 0 {
		t.Fatalf("%s: no services", composePath)
	}
	return &p
}

// service returns the named service or fails.
func (p *project) service(t *testing.T, name string) service {
	t.Helper()
	s, ok := p.Services[name]
	if !ok {
		t.Fatalf("no service %q", name)
	}
	return s
}

// byImage returns the names of the services whose image repository is repo
// (e.g. "grafana/tempo"), sorted.
func (p *project) byImage(repo string) []string {
	var out []string
	for name, s := range p.Services {
		if r, _ := splitImage(s.Image); r == repo {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// only returns the one service with image repository repo, or fails.
func (p *project) only(t *testing.T, repo string) (string, service) {
	t.Helper()
	names := p.byImage(repo)
	if len(names) != 1 {
		t.Fatalf("want one %s service, have %v", repo, names)
	}
	return names[0], p.Services[names[0]]
}

func (s service) env(name string) string { return string(s.Environment[name]) }

// envOr returns the variable, or def when unset or empty (kretrieve treats
// an empty variable as unset).
func (s service) envOr(name, def string) string {
	if v := s.env(name); v != "" {
		return v
	}
	return def
}

// splitImage splits an image reference into repository and tag (empty when
// there is none; the digest is dropped).
func splitImage(ref string) (repo, tag string) {
	ref, _, _ = strings.Cut(ref, "@")
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		return ref[:i], ref[i+1:]
	}
	return ref, ""
}

// mount is one entry of a service's volumes (short syntax).
type mount struct {
	source   string // a named volume, or a path relative to the repository root
	target   string
	readOnly bool
	bind     bool
}

func parseMount(v string) (mount, error) {
	parts := strings.Split(v, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return mount{}, fmt.Errorf("volume %q: want SOURCE:TARGET[:MODE]", v)
	}
	m := mount{source: parts[0], target: parts[1]}
	m.bind = strings.HasPrefix(m.source, ".") || strings.HasPrefix(m.source, "/")
	if len(parts) == 3 {
		for mode := range strings.SplitSeq(parts[2], ",") {
			m.readOnly = m.readOnly || mode == "ro"
		}
	}
	if !path.IsAbs(m.target) {
		return m, fmt.Errorf("volume %q: the target must be absolute", v)
	}
	return m, nil
}

func (s service) mounts(t *testing.T) []mount {
	t.Helper()
	var out []mount
	for _, v := range s.Volumes {
		m, err := parseMount(v)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// within returns the mount a container path lies in (the deepest) and the
// path relative to its target.
func (s service) within(t *testing.T, p string) (mount, string, bool) {
	t.Helper()
	var (
		best mount
		rel  string
		ok   bool
	)
	for _, m := range s.mounts(t) {
		r, err := filepath.Rel(m.target, p)
		if err != nil || r == ".." || strings.HasPrefix(r, "../") {
			continue
		}
		if !ok || len(m.target) > len(best.target) {
			best, rel, ok = m, r, true
		}
	}
	return best, rel, ok
}

// hostPath maps a container path through the service's bind mounts to a
// path in this repository.
func (s service) hostPath(t *testing.T, p string) (string, bool) {
	t.Helper()
	m, rel, ok := s.within(t, p)
	if !ok || !m.bind {
		return "", false
	}
	return filepath.Join(repoRoot, filepath.FromSlash(m.source), filepath.FromSlash(rel)), true
}

// published is a port of the short syntax [IP:]HOST:CONTAINER[/PROTO].
type published struct {
	ip              string
	host, container int
}

func parsePort(v string) (published, error) {
	spec, _, _ := strings.Cut(v, "/")
	parts := strings.Split(spec, ":")
	var p published
	switch len(parts) {
	case 3:
		p.ip = parts[0]
		parts = parts[1:]
	case 2:
	default:
		return p, fmt.Errorf("port %q: want [IP:]HOST:CONTAINER (a lone port publishes on a random host port)", v)
	}
	var err1, err2 error
	p.host, err1 = strconv.Atoi(parts[0])
	p.container, err2 = strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return p, fmt.Errorf("port %q: want numbers", v)
	}
	return p, nil
}

// proc is a kretrieve process a service runs: the kretrieve:local image
// with its command, or `go run ./cmd/kretrieve` in a shell script.
type proc struct {
	service string
	svc     service
	argv    []string // subcommand, then its arguments
}

func (p proc) cmd() string { return p.argv[0] }

// script returns the shell script a service runs with sh -c or bash -c,
// with compose's $$ escapes undone.
func (s service) script() (string, bool) {
	argv := append(slices.Clone(s.Entrypoint), s.Command...)
	for i := 0; i+2 < len(argv); i++ {
		if sh := path.Base(argv[i]); (sh == "sh" || sh == "bash") && argv[i+1] == "-c" {
			return strings.ReplaceAll(argv[i+2], "$$", "$"), true
		}
	}
	return "", false
}

// procs returns every kretrieve process of the project.
func (p *project) procs(t *testing.T) []proc {
	t.Helper()
	var out []proc
	for _, name := range slices.Sorted(maps.Keys(p.Services)) {
		s := p.Services[name]
		if s.Image == localImage {
			if len(s.Entrypoint) > 0 {
				t.Errorf("service %s: entrypoint overrides the image's kretrieve", name)
			}
			if len(s.Command) == 0 {
				t.Errorf("service %s: no command: the subcommand is required", name)
				continue
			}
			out = append(out, proc{name, s, s.Command})
			continue
		}
		sc, ok := s.script()
		if !ok {
			continue
		}
		for line := range strings.Lines(sc) {
			f := strings.Fields(line)
			i := slices.Index(f, "./cmd/kretrieve")
			if i < 0 || !slices.Contains(f[:i], "go") {
				continue
			}
			if i+1 == len(f) {
				t.Errorf("service %s: %q runs kretrieve without a subcommand", name, strings.TrimSpace(line))
				continue
			}
			out = append(out, proc{name, s, f[i+1:]})
		}
	}
	if len(out) == 0 {
		t.Fatal("no service runs kretrieve")
	}
	return out
}

// procOf returns the process of the service that runs cmd (exactly one).
func (p *project) procOf(t *testing.T, cmd string) proc {
	t.Helper()
	var found []proc
	for _, pr := range p.procs(t) {
		if pr.cmd() == cmd {
			found = append(found, pr)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one service running %q, have %d", cmd, len(found))
	}
	return found[0]
}

// flagValue returns the value of --name in a process's arguments.
func (p proc) flagValue(name string) (string, bool) {
	args := p.argv[1:]
	for i, a := range args {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		a = "--" + strings.TrimLeft(a, "-")
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
		if a == "--"+name && i+1 < len(args) {
			return args[i+1], true
		}
	}
	return "", false
}

func TestNoInterpolation(t *testing.T) {
	// compose replaces $VAR and ${VAR} from the shell that runs it, before
	// any container sees the value; a script's $topic must be $$topic.
	b, err := os.ReadFile(composePath)
	if err != nil {
		t.Fatal(err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		t.Fatal(err)
	}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode && strings.Contains(strings.ReplaceAll(n.Value, "$$", ""), "$") {
			t.Errorf("line %d: %q: a single $ is interpolated by compose; write $$", n.Line, n.Value)
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&root)
}

func TestImagesArePinned(t *testing.T) {
	p := load(t)
	for _, name := range slices.Sorted(maps.Keys(p.Services)) {
		s := p.Services[name]
		repo, tag := splitImage(s.Image)
		switch {
		case s.Image == "":
			t.Errorf("service %s: no image", name)
		case s.Build != nil:
			t.Errorf("service %s: builds with compose; kretrieve:local comes from `make image` (the Dockerfile's context is staged there)", name)
		case s.Image == localImage:
			if s.PullPolicy != "never" {
				t.Errorf("service %s: %s is a local image: pull_policy must be never, or compose tries Docker Hub", name, localImage)
			}
		case strings.Contains(s.Image, "@sha256:"):
		case tag == "" || tag == "latest" || !strings.ContainsAny(tag, "0123456789"):
			t.Errorf("service %s: image %q: pin a version tag (%s:X.Y.Z) or a digest", name, s.Image, repo)
		}
	}
}

func TestDockerfileEntrypointIsKretrieve(t *testing.T) {
	// The kretrieve services give the subcommand as their whole command.
	b, err := os.ReadFile(dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	var entrypoint []string
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "ENTRYPOINT "); ok {
			entrypoint = nil
			if err := json.Unmarshal([]byte(v), &entrypoint); err != nil {
				t.Fatalf("%s: ENTRYPOINT %s: want the exec form [\"/usr/local/bin/kretrieve\"]: %v", dockerfile, v, err)
			}
		}
	}
	if len(entrypoint) != 1 || path.Base(entrypoint[0]) != "kretrieve" {
		t.Errorf("%s: ENTRYPOINT %q, want the kretrieve binary alone", dockerfile, entrypoint)
	}
}

func TestDependencies(t *testing.T) {
	p := load(t)
	for _, name := range slices.Sorted(maps.Keys(p.Services)) {
		for dep, d := range p.Services[name].DependsOn {
			target, ok := p.Services[dep]
			switch {
			case !ok:
				t.Errorf("service %s depends on %q: no such service", name, dep)
			case d.Condition == "service_started":
			case d.Condition == "service_healthy":
				if target.Healthcheck == nil {
					t.Errorf("service %s waits for %s to be healthy, which has no healthcheck", name, dep)
				}
			case d.Condition == "service_completed_successfully":
				if target.Restart != "" && target.Restart != "no" {
					t.Errorf("service %s waits for %s to complete, which restarts (%s)", name, dep, target.Restart)
				}
			default:
				t.Errorf("service %s depends on %s with condition %q", name, dep, d.Condition)
			}
		}
	}
}

func TestMountsAndPorts(t *testing.T) {
	p := load(t)
	hostPorts := map[int]string{}
	for _, name := range slices.Sorted(maps.Keys(p.Services)) {
		s := p.Services[name]
		t.Run(name, func(t *testing.T) {
			for _, m := range s.mounts(t) {
				switch {
				case m.bind:
					if _, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(m.source))); err != nil {
						t.Errorf("bind mount %s: %v", m.source, err)
					}
				case p.Volumes == nil || !hasKey(p.Volumes, m.source):
					t.Errorf("volume %q is not declared under the top-level volumes", m.source)
				}
			}
			// Files the service is told to read must be mounted.
			refs := slices.Clone(s.Command)
			for _, v := range s.Environment {
				refs = append(refs, string(v))
			}
			for _, r := range refs {
				_, v, ok := strings.Cut(r, "=")
				if !ok {
					v = r
				}
				if !path.IsAbs(v) || !slices.Contains([]string{".yaml", ".yml", ".json"}, path.Ext(v)) {
					continue
				}
				host, ok := s.hostPath(t, v)
				if !ok {
					t.Errorf("%s: not in a bind mount", v)
					continue
				}
				if fi, err := os.Stat(host); err != nil || fi.IsDir() {
					t.Errorf("%s: mounted from %s, which is not a file (%v)", v, host, err)
				}
			}
			for _, v := range s.Ports {
				pp, err := parsePort(v)
				if err != nil {
					t.Error(err)
					continue
				}
				// Grafana is anonymous admin and Kafka unauthenticated.
				if pp.ip != "127.0.0.1" {
					t.Errorf("port %q: publish on 127.0.0.1 only", v)
				}
				if other, dup := hostPorts[pp.host]; dup {
					t.Errorf("host port %d is published by %s too", pp.host, other)
				}
				hostPorts[pp.host] = name
			}
		})
	}
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

func TestKretrieveRunsRealSubcommandsAndFlags(t *testing.T) {
	p := load(t)
	cmds := subcommands(t)
	flags := declaredFlags(t)
	vars, _ := documentedVars(t, cmds)
	for _, pr := range p.procs(t) {
		t.Run(pr.service, func(t *testing.T) {
			if !slices.Contains(cmds, pr.cmd()) {
				t.Fatalf("%q is not a kretrieve subcommand %v", pr.cmd(), cmds)
			}
			args := pr.argv[1:]
			for i := 0; i < len(args); i++ {
				a := args[i]
				if !strings.HasPrefix(a, "-") {
					continue
				}
				flag, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
				kind, ok := flags[flag]
				if !ok {
					t.Errorf("flag --%s: not declared by cmd/kretrieve", flag)
					continue
				}
				if !hasValue && kind != "bool" {
					i++ // its value
				}
				if documented := vars[envName(flag)]; !slices.Contains(documented, pr.cmd()) {
					t.Errorf("flag --%s: a flag of %v (docs/configuration.md), not of %q", flag, documented, pr.cmd())
				}
			}
		})
	}
}

func TestEnvVarsAreDocumented(t *testing.T) {
	p := load(t)
	cmds := subcommands(t)
	vars, otel := documentedVars(t, cmds)
	flags := declaredFlags(t)
	for _, pr := range p.procs(t) {
		t.Run(pr.service, func(t *testing.T) {
			for _, name := range slices.Sorted(maps.Keys(pr.svc.Environment)) {
				switch {
				case strings.HasPrefix(name, "KRETRIEVE_"):
					documented, ok := vars[name]
					if !ok {
						t.Errorf("%s is not in the Flags table of docs/configuration.md", name)
					} else if !slices.Contains(documented, pr.cmd()) {
						t.Errorf("%s applies to %v, not to %q: it would be ignored", name, documented, pr.cmd())
					}
					if !slices.ContainsFunc(slices.Collect(maps.Keys(flags)), func(f string) bool { return envName(f) == name }) {
						t.Errorf("%s: no flag of cmd/kretrieve binds it", name)
					}
				case strings.HasPrefix(name, "OTEL_") && !otel[name]:
					t.Errorf("%s is not in the tracing table of docs/configuration.md", name)
				}
			}
			if pr.svc.Image == localImage && !strings.HasPrefix(pr.svc.env("OTEL_SERVICE_NAME"), "kretrieve-") {
				t.Errorf("OTEL_SERVICE_NAME=%q: want kretrieve-<role>, the name Jaeger and the dashboard list", pr.svc.env("OTEL_SERVICE_NAME"))
			}
		})
	}
}

func TestGatewayListensOnThePublishedPort(t *testing.T) {
	p := load(t)
	pr := p.procOf(t, "gateway")
	listen := pr.svc.env("KRETRIEVE_HTTP_LISTEN")
	host, portText, err := net.SplitHostPort(listen)
	if err != nil {
		t.Fatalf("KRETRIEVE_HTTP_LISTEN=%q: %v (the default 127.0.0.1:8080 is unreachable from outside the container)", listen, err)
	}
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		t.Errorf("KRETRIEVE_HTTP_LISTEN=%s: a loopback address is unreachable through a published port", listen)
	}
	port, _ := strconv.Atoi(portText)
	var ok bool
	for _, v := range pr.svc.Ports {
		pp, err := parsePort(v)
		if err != nil {
			t.Fatal(err)
		}
		ok = ok || pp.container == port
	}
	if !ok {
		t.Errorf("no published port targets %d (KRETRIEVE_HTTP_LISTEN=%s); ports %v", port, listen, pr.svc.Ports)
	}
}

// listeners parses a Kafka listener list "NAME://HOST:PORT,…".
func listeners(v string) map[string]string {
	out := map[string]string{}
	for l := range strings.SplitSeq(v, ",") {
		if name, addr, ok := strings.Cut(strings.TrimSpace(l), "://"); ok {
			out[name] = addr
		}
	}
	return out
}

// kafkaListener returns the name of the listener a Kafka service advertises
// as addr (host:port), checking that it also binds that port.
func kafkaListener(t *testing.T, p *project, addr string) (name string, svc string) {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("broker %q: %v", addr, err)
	}
	s, ok := p.Services[host]
	if !ok {
		t.Fatalf("broker %s: %q is not a compose service", addr, host)
	}
	if r, _ := splitImage(s.Image); r != "apache/kafka" || !strings.Contains(s.env("KAFKA_PROCESS_ROLES"), "broker") {
		t.Fatalf("broker %s: service %s is not a Kafka broker", addr, host)
	}
	for n, a := range listeners(s.env("KAFKA_ADVERTISED_LISTENERS")) {
		if a != addr {
			continue
		}
		_, bound, err := net.SplitHostPort(listeners(s.env("KAFKA_LISTENERS"))[n])
		if err != nil || bound != port {
			t.Errorf("broker %s: listener %s is advertised on port %s but KAFKA_LISTENERS binds %q", addr, n, port, listeners(s.env("KAFKA_LISTENERS"))[n])
		}
		// kretrieve has no TLS or SASL.
		proto := n
		for m := range strings.SplitSeq(s.env("KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"), ",") {
			if k, v, _ := strings.Cut(m, ":"); k == n {
				proto = v
			}
		}
		if proto != "PLAINTEXT" {
			t.Errorf("broker %s: listener %s speaks %s; kretrieve speaks PLAINTEXT only", addr, n, proto)
		}
		return n, host
	}
	t.Fatalf("broker %s: service %s does not advertise it (KAFKA_ADVERTISED_LISTENERS=%s)", addr, host, s.env("KAFKA_ADVERTISED_LISTENERS"))
	return "", ""
}

func TestBrokersPointAtKafka(t *testing.T) {
	p := load(t)
	for _, pr := range p.procs(t) {
		if pr.cmd() == "index" || pr.cmd() == "broker" {
			continue
		}
		t.Run(pr.service, func(t *testing.T) {
			brokers := pr.svc.env("KRETRIEVE_BROKERS")
			if brokers == "" {
				t.Fatal("KRETRIEVE_BROKERS unset: the default 127.0.0.1:9092 is the container itself")
			}
			for b := range strings.SplitSeq(brokers, ",") {
				_, svc := kafkaListener(t, p, b)
				if d, ok := pr.svc.DependsOn[svc]; !ok || d.Condition != "service_healthy" {
					t.Errorf("does not wait for %s to be healthy", svc)
				}
			}
		})
	}
}

func TestKafkaInitCreatesTheTopics(t *testing.T) {
	p := load(t)
	s := p.service(t, "kafka-init")
	sc, ok := s.script()
	if !ok {
		t.Fatal("kafka-init runs no shell script")
	}
	for _, want := range []string{"kafka-topics.sh", "--create", "--if-not-exists", "$TOPICS", `--partitions "$PARTITIONS"`} {
		if !strings.Contains(sc, want) {
			t.Errorf("kafka-init's script lacks %q", want)
		}
	}
	var bootstrap string
	if f := strings.Fields(sc); slices.Contains(f, "--bootstrap-server") {
		bootstrap = f[slices.Index(f, "--bootstrap-server")+1]
	}
	_, kafka := kafkaListener(t, p, bootstrap)
	if d := s.DependsOn[kafka]; d.Condition != "service_healthy" {
		t.Errorf("kafka-init does not wait for %s to be healthy", kafka)
	}
	compacted := strings.Fields(s.env("COMPACTED_TOPICS"))
	created := append(strings.Fields(s.env("TOPICS")), compacted...)
	checkCompactedLoop(t, sc)
	for _, pr := range p.procs(t) {
		if pr.cmd() == "index" {
			continue
		}
		t.Run(pr.service, func(t *testing.T) {
			env := pr.svc
			topics := messages.Topics{
				Requests:   env.envOr("KRETRIEVE_TOPIC_REQUESTS", messages.DefaultRequestsTopic),
				Candidates: env.envOr("KRETRIEVE_TOPIC_CANDIDATES", messages.DefaultCandidatesTopic),
				Results:    env.envOr("KRETRIEVE_TOPIC_RESULTS", messages.DefaultResultsTopic),
				Documents:  env.envOr("KRETRIEVE_TOPIC_DOCUMENTS", messages.DefaultDocumentsTopic),
			}
			// kretrieve refuses a documents topic that is not compacted.
			if !slices.Equal(compacted, []string{topics.Documents}) {
				t.Errorf("kafka-init creates %v compacted, want the documents topic %s alone", compacted, topics.Documents)
			}
			if want := topics.All(); !sameSet(created, want) {
				t.Errorf("kafka-init creates %v, the service uses %v", created, want)
			}
			want := env.envOr("KRETRIEVE_PARTITIONS", strconv.Itoa(kafkaclient.DefaultPartitions))
			if got := s.env("PARTITIONS"); got != want {
				t.Errorf("kafka-init creates %s partitions, the service's KRETRIEVE_PARTITIONS is %s", got, want)
			}
			if d := pr.svc.DependsOn["kafka-init"]; d.Condition != "service_completed_successfully" {
				t.Error("does not wait for kafka-init to complete (the topics would be created with kretrieve's defaults, racing it)")
			}
		})
	}
}

// checkCompactedLoop checks that kafka-init's script creates each topic of
// $COMPACTED_TOPICS with cleanup.policy=compact, and the others without.
func checkCompactedLoop(t *testing.T, script string) {
	t.Helper()
	compact := "--config " + kafkaclient.CleanupPolicy + "=compact"
	var loop string
	var found bool
	for line := range strings.Lines(script) {
		f := strings.Fields(line)
		if len(f) >= 4 && f[0] == "for" && f[2] == "in" {
			loop = strings.TrimSuffix(f[3], ";")
			continue
		}
		if !strings.Contains(line, "kafka-topics.sh") || !strings.Contains(line, "--create") {
			continue
		}
		switch has := strings.Contains(line, compact); {
		case loop == "$COMPACTED_TOPICS" && has:
			found = true
		case loop == "$COMPACTED_TOPICS" || has:
			t.Errorf("kafka-init: %q in the loop over %s: want %q exactly for $COMPACTED_TOPICS", strings.TrimSpace(line), loop, compact)
		}
	}
	if !found {
		t.Errorf("kafka-init's script creates no topic of $COMPACTED_TOPICS with %s", compact)
	}
}

func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

func TestOTLPEndpointIsTheCollector(t *testing.T) {
	p := load(t)
	name, _ := p.only(t, collectorImage)
	cfg := loadCollector(t, p)
	httpPort := port(t, cfg.receiverEndpoint(t, "http"))
	for _, pr := range p.procs(t) {
		if pr.svc.Image != localImage {
			continue
		}
		t.Run(pr.service, func(t *testing.T) {
			v := pr.svc.env("OTEL_EXPORTER_OTLP_ENDPOINT")
			u, err := url.Parse(v)
			if err != nil || v == "" {
				t.Fatalf("OTEL_EXPORTER_OTLP_ENDPOINT=%q: want the collector's OTLP/HTTP URL (%v)", v, err)
			}
			if u.Scheme != "http" || u.Hostname() != name || u.Port() != strconv.Itoa(httpPort) {
				t.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT=%s: want http://%s:%d, the collector's OTLP/HTTP receiver", v, name, httpPort)
			}
			if u.Path != "" && u.Path != "/" {
				t.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT=%s: a base URL, /v1/traces is appended", v)
			}
			if _, ok := pr.svc.DependsOn[name]; !ok {
				t.Errorf("does not depend on %s", name)
			}
		})
	}
}

// TestWorkersFollowTheDocumentsTopic: no service builds an index; each
// worker follows the documents topic into a directory of its own
// container (a tmpfs: the image is read-only and has no /tmp), serves
// /readyz for when it has caught up, and waits for Kafka only.
func TestWorkersFollowTheDocumentsTopic(t *testing.T) {
	p := load(t)
	for _, pr := range p.procs(t) {
		if pr.cmd() == "index" {
			t.Errorf("service %s builds an index: workers take their documents from the topic", pr.service)
		}
	}
	for _, role := range stages {
		t.Run(role, func(t *testing.T) {
			w := p.procOf(t, role)
			checkWorkerIndexDir(t, w.svc)
			listen := w.svc.env("KRETRIEVE_HEALTH_LISTEN")
			host, _, err := net.SplitHostPort(listen)
			if err != nil {
				t.Errorf("KRETRIEVE_HEALTH_LISTEN=%q: %v (the worker's /readyz says when its index has caught up)", listen, err)
			} else if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
				t.Errorf("KRETRIEVE_HEALTH_LISTEN=%s: a loopback address is unreachable from the other containers", listen)
			}
			for dep := range w.svc.DependsOn {
				for _, pr := range p.procs(t) {
					if pr.service == dep && (pr.cmd() == "ingest" || pr.cmd() == "index") {
						t.Errorf("depends on %s (kretrieve %s): a worker needs only Kafka, documents arrive live", dep, pr.cmd())
					}
				}
			}
		})
	}
}

// checkWorkerIndexDir checks that a worker's index directory,
// KRETRIEVE_INDEX or else a new directory in the temporary directory, is
// on a tmpfs of the container: per container, so scaled replicas do not
// share it (each worker opens its index exclusively), and writable in a
// read-only image.
func checkWorkerIndexDir(t *testing.T, s service) {
	t.Helper()
	dir := s.env("KRETRIEVE_INDEX")
	parent := dir
	if dir == "" {
		parent = s.envOr("TMPDIR", "/tmp") // os.TempDir in the image
	}
	if m, _, ok := s.within(t, parent); ok {
		t.Errorf("the index directory %s is on volume %s: scaled replicas would share it; use a tmpfs", parent, m.source)
	}
	var mount string
	for _, v := range s.Tmpfs {
		target, _, _ := strings.Cut(v, ":")
		if r, err := filepath.Rel(target, parent); err == nil && r != ".." && !strings.HasPrefix(r, "../") && len(target) > len(mount) {
			mount = target
		}
	}
	switch {
	case mount == "":
		t.Errorf("the index directory %s is on no tmpfs (tmpfs: %v): the image's root is read-only and has no /tmp", parent, s.Tmpfs)
	case dir != "" && path.Clean(dir) == path.Clean(mount):
		// The index is created next to its place and renamed into it,
		// which a mount point refuses.
		t.Errorf("KRETRIEVE_INDEX=%s is the tmpfs mount point: use a subdirectory", dir)
	}
}

// TestIngestService: a one-shot service publishes the documents with
// `kretrieve ingest` to the documents topic the workers follow; the Go
// docs need a Go installation, which the kretrieve image lacks, so the
// kretrieve image publishes the JSONL corpus it carries.
func TestIngestService(t *testing.T) {
	p := load(t)
	in := p.procOf(t, "ingest")
	if r := in.svc.Restart; r != "no" {
		t.Errorf("service %s: restart %q: want \"no\", a one-shot (ingest exits when it has published)", in.service, r)
	}
	file, jsonl := in.flagValue("jsonl")
	if repo, _ := splitImage(in.svc.Image); repo == "kretrieve" {
		if want := imageCorpus(t); file != want {
			t.Errorf("service %s runs the kretrieve image with --jsonl %q: want the corpus it carries, %s", in.service, file, want)
		}
	}
	if !jsonl && in.svc.env("KRETRIEVE_JSONL") == "" {
		repo, _ := splitImage(in.svc.Image)
		_, goroot := in.flagValue("goroot")
		if repo != "golang" || !goroot && in.svc.env("KRETRIEVE_GOROOT") == "" {
			t.Errorf("service %s publishes the Go docs: want the golang image and --goroot (the kretrieve image has no Go installation)", in.service)
		}
	}
	topic := in.svc.envOr("KRETRIEVE_TOPIC_DOCUMENTS", messages.DefaultDocumentsTopic)
	for _, role := range stages {
		w := p.procOf(t, role)
		if got := w.svc.envOr("KRETRIEVE_TOPIC_DOCUMENTS", messages.DefaultDocumentsTopic); got != topic {
			t.Errorf("%s follows %s, %s publishes to %s", w.service, got, in.service, topic)
		}
	}
}

// imageCorpus is where the Dockerfile copies the demo corpus (a .jsonl).
func imageCorpus(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "COPY" && strings.HasSuffix(f[1], ".jsonl") {
			return f[2]
		}
	}
	t.Fatal("the Dockerfile copies no .jsonl corpus")
	return ""
}

func TestWorkersScale(t *testing.T) {
	// docker compose up --scale retrieval=3: fixed names and host ports
	// would collide.
	p := load(t)
	for _, role := range stages {
		w := p.procOf(t, role)
		if w.svc.ContainerName != "" || w.svc.Hostname != "" || len(w.svc.Ports) > 0 {
			t.Errorf("service %s: container_name, hostname or ports prevent --scale", w.service)
		}
	}
}

func TestStopGracePeriods(t *testing.T) {
	p := load(t)
	for _, pr := range p.procs(t) {
		var need time.Duration
		switch {
		case slices.Contains(stages, pr.cmd()):
			// Finishing the batch, committing and leaving the group, and
			// the span flush are each bounded by the shutdown timeout; the
			// last pathways window has its own bound.
			d, err := time.ParseDuration(pr.svc.envOr("KRETRIEVE_SHUTDOWN_TIMEOUT", defaultShutdownTimeout.String()))
			if err != nil {
				t.Fatalf("%s: KRETRIEVE_SHUTDOWN_TIMEOUT: %v", pr.service, err)
			}
			need = 3*d + pathwaytopic.FinalTimeout
		case pr.cmd() == "gateway":
			// In-flight requests get the timeout plus a second, then the
			// span flush.
			d, err := time.ParseDuration(pr.svc.envOr("KRETRIEVE_TIMEOUT", defaultGatewayTimeout.String()))
			if err != nil {
				t.Fatalf("%s: KRETRIEVE_TIMEOUT: %v", pr.service, err)
			}
			need = d + time.Second + gatewayFlushTimeout
		default:
			continue
		}
		grace := defaultStopGrace
		if v := pr.svc.StopGracePeriod; v != "" {
			var err error
			if grace, err = time.ParseDuration(v); err != nil {
				t.Fatalf("%s: stop_grace_period: %v", pr.service, err)
			}
		}
		if grace <= need {
			t.Errorf("%s: stop_grace_period %v must exceed %v, or compose kills it mid-shutdown", pr.service, grace, need)
		}
	}
}

// stages are the names of the pipeline's stages (pipeline.DefaultStages):
// each runs as a worker command of its name, and the project must run it.
var stages = kpipeline.Config{}.Topology().Names()
