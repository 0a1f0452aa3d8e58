// SPDX-License-Identifier: Apache-2.0

package k8s_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/internal/testutil/configdoc"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/pathwaytopic"
	"github.com/kretrieve/kretrieve/pipeline"

	"go.yaml.in/yaml/v3"
)

// stages are the pipeline's stages (pipeline.DefaultStages): each runs as
// a worker command of its name and needs a manifest.
var stages = pipeline.Config{}.Topology().Stages

// binaryCommands are the kretrieve commands and their flags, as
// cmd/kretrieve lists its command tree (testdata/commands.json, kept equal
// to the tree by its TestCommandsFile).
var binaryCommands, binaryCommandsErr = configdoc.ReadCommands("../../" + configdoc.CommandsPath)

// subcommands are the kretrieve commands, by the argument that selects
// them.
var subcommands = configdoc.Names(binaryCommands)

// Defaults of the binary (cmd/kretrieve) the checks fall back to when a
// variable is not set.
const (
	defaultShutdownTimeout = 10 * time.Second // retrieval, enrichment --shutdown-timeout
	defaultGatewayTimeout  = 10 * time.Second // gateway --timeout
	defaultPartitions      = 6                // --partitions
	defaultBrokers         = "127.0.0.1:9092" // --brokers
	defaultGracePeriod     = 30               // Kubernetes terminationGracePeriodSeconds
	configDocPath          = "../../docs/configuration.md"
)

// topicVars maps each default pipeline topic to the variable that names it.
var topicVars = map[string]string{
	messages.DefaultRequestsTopic:   "KRETRIEVE_TOPIC_REQUESTS",
	messages.DefaultCandidatesTopic: "KRETRIEVE_TOPIC_CANDIDATES",
	messages.DefaultResultsTopic:    "KRETRIEVE_TOPIC_RESULTS",
}

// roles maps a worker command to its default consumer group and the
// variable and default of the topic it consumes, for every stage.
var roles = func() map[string]struct{ group, topicVar, topic string } {
	out := map[string]struct{ group, topicVar, topic string }{}
	for _, st := range stages {
		out[st.Name] = struct{ group, topicVar, topic string }{st.Group, topicVars[st.Input], st.Input}
	}
	return out
}()

// str is a YAML value Kubernetes requires to be a string (ConfigMap data,
// env values, KEDA trigger metadata): an unquoted 6 or false is rejected by
// the API server, so it is rejected here.
type str string

func (s *str) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		return fmt.Errorf("line %d: %q must be a string (quote it)", n.Line, n.Value)
	}
	*s = str(n.Value)
	return nil
}

// intOrString is a port given by number or by name.
type intOrString struct {
	num  int
	name string
}

func (p *intOrString) UnmarshalYAML(n *yaml.Node) error {
	if n.Tag == "!!int" {
		v, err := strconv.Atoi(n.Value)
		p.num = v
		return err
	}
	p.name = n.Value
	return nil
}

func (p intOrString) String() string {
	if p.name != "" {
		return p.name
	}
	return strconv.Itoa(p.num)
}

type meta struct {
	Name   string            `yaml:"name"`
	Labels map[string]string `yaml:"labels"`
}

type header struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   meta   `yaml:"metadata"`
}

type securityContext struct {
	RunAsNonRoot             *bool `yaml:"runAsNonRoot"`
	ReadOnlyRootFilesystem   *bool `yaml:"readOnlyRootFilesystem"`
	AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
	Capabilities             struct {
		Drop []string `yaml:"drop"`
	} `yaml:"capabilities"`
}

type envVar struct {
	Name      string `yaml:"name"`
	Value     *str   `yaml:"value"`
	ValueFrom *struct {
		ConfigMapKeyRef *struct {
			Name string `yaml:"name"`
			Key  string `yaml:"key"`
		} `yaml:"configMapKeyRef"`
		FieldRef *struct {
			FieldPath string `yaml:"fieldPath"`
		} `yaml:"fieldRef"`
		SecretKeyRef *struct {
			Name string `yaml:"name"`
			Key  string `yaml:"key"`
		} `yaml:"secretKeyRef"`
	} `yaml:"valueFrom"`
}

type probe struct {
	HTTPGet *struct {
		Path   string      `yaml:"path"`
		Port   intOrString `yaml:"port"`
		Scheme string      `yaml:"scheme"`
	} `yaml:"httpGet"`
	InitialDelaySeconds int  `yaml:"initialDelaySeconds"`
	PeriodSeconds       *int `yaml:"periodSeconds"`
	FailureThreshold    *int `yaml:"failureThreshold"`
}

// budget is how long a probe lets a container fail before it acts: the
// initial delay plus failureThreshold periods (Kubernetes defaults: 10 s
// and 3).
func (p probe) budget() time.Duration {
	period, failures := 10, 3
	if p.PeriodSeconds != nil {
		period = *p.PeriodSeconds
	}
	if p.FailureThreshold != nil {
		failures = *p.FailureThreshold
	}
	return time.Duration(p.InitialDelaySeconds+period*failures) * time.Second
}

type volumeMount struct {
	Name      string `yaml:"name"`
	MountPath string `yaml:"mountPath"`
	SubPath   string `yaml:"subPath"`
	ReadOnly  bool   `yaml:"readOnly"`
}

type containerPort struct {
	Name          string `yaml:"name"`
	ContainerPort int    `yaml:"containerPort"`
}

type container struct {
	Name    string          `yaml:"name"`
	Image   string          `yaml:"image"`
	Command []string        `yaml:"command"`
	Args    []string        `yaml:"args"`
	Ports   []containerPort `yaml:"ports"`
	EnvFrom []struct {
		ConfigMapRef *struct {
			Name string `yaml:"name"`
		} `yaml:"configMapRef"`
		SecretRef *struct {
			Name     string `yaml:"name"`
			Optional bool   `yaml:"optional"`
		} `yaml:"secretRef"`
	} `yaml:"envFrom"`
	Env       []envVar `yaml:"env"`
	Resources struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	} `yaml:"resources"`
	StartupProbe   *probe `yaml:"startupProbe"`
	LivenessProbe  *probe `yaml:"livenessProbe"`
	ReadinessProbe *probe `yaml:"readinessProbe"`
	Lifecycle      struct {
		PreStop *struct {
			Sleep *struct {
				Seconds int `yaml:"seconds"`
			} `yaml:"sleep"`
		} `yaml:"preStop"`
	} `yaml:"lifecycle"`
	SecurityContext securityContext `yaml:"securityContext"`
	VolumeMounts    []volumeMount   `yaml:"volumeMounts"`
}

type volume struct {
	Name     string `yaml:"name"`
	EmptyDir *struct {
		SizeLimit string `yaml:"sizeLimit"`
	} `yaml:"emptyDir"`
	PersistentVolumeClaim *struct {
		ClaimName string `yaml:"claimName"`
	} `yaml:"persistentVolumeClaim"`
	Secret *struct {
		SecretName string `yaml:"secretName"`
	} `yaml:"secret"`
}

// deployment is a Deployment or a Job: a workload with a pod template.
type deployment struct {
	header `yaml:",inline"`
	Spec   struct {
		Replicas     *int `yaml:"replicas"`
		BackoffLimit *int `yaml:"backoffLimit"`
		Template     struct {
			Metadata meta `yaml:"metadata"`
			Spec     struct {
				TerminationGracePeriodSeconds *int            `yaml:"terminationGracePeriodSeconds"`
				RestartPolicy                 string          `yaml:"restartPolicy"`
				SecurityContext               securityContext `yaml:"securityContext"`
				InitContainers                []container     `yaml:"initContainers"`
				Containers                    []container     `yaml:"containers"`
				Volumes                       []volume        `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type service struct {
	header `yaml:",inline"`
	Spec   struct {
		Selector map[string]string `yaml:"selector"`
		Ports    []struct {
			Port       int          `yaml:"port"`
			TargetPort *intOrString `yaml:"targetPort"`
		} `yaml:"ports"`
	} `yaml:"spec"`
}

type configMap struct {
	header `yaml:",inline"`
	Data   map[string]str `yaml:"data"`
}

type scaledObject struct {
	header `yaml:",inline"`
	Spec   struct {
		ScaleTargetRef struct {
			Kind                   string `yaml:"kind"`
			Name                   string `yaml:"name"`
			EnvSourceContainerName string `yaml:"envSourceContainerName"`
		} `yaml:"scaleTargetRef"`
		MinReplicaCount *int `yaml:"minReplicaCount"`
		MaxReplicaCount *int `yaml:"maxReplicaCount"`
		Triggers        []struct {
			Type              string         `yaml:"type"`
			Metadata          map[string]str `yaml:"metadata"`
			AuthenticationRef *struct {
				Name string `yaml:"name"`
				Kind string `yaml:"kind"`
			} `yaml:"authenticationRef"`
		} `yaml:"triggers"`
	} `yaml:"spec"`
}

// manifests is every document of every YAML file in this directory.
type manifests struct {
	files         []string // YAML files other than kustomization.yaml
	kustomization struct {
		Resources []string `yaml:"resources"`
	}
	deployments   []deployment
	jobs          []deployment
	services      []service
	configMaps    map[string]configMap
	scaledObjects []scaledObject
	policies      // policies_test.go: PDBs, NetworkPolicies, KEDA auth
}

func load(t *testing.T) *manifests {
	t.Helper()
	names, err := filepath.Glob("*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m := &manifests{configMaps: map[string]configMap{}}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if name == "kustomization.yaml" {
			if err := yaml.Unmarshal(b, &m.kustomization); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			continue
		}
		m.files = append(m.files, name)
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for i := 1; ; i++ {
			var doc yaml.Node
			if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: document %d: %v", name, i, err)
			}
			if err := m.add(&doc); err != nil {
				t.Fatalf("%s: document %d: %v", name, i, err)
			}
		}
	}
	if len(m.deployments) == 0 {
		t.Fatal("no Deployment found")
	}
	return m
}

func (m *manifests) add(doc *yaml.Node) error {
	if len(doc.Content) == 0 { // empty document, e.g. a trailing ---
		return nil
	}
	var h header
	if err := doc.Decode(&h); err != nil {
		return err
	}
	if h.Kind == "" || h.APIVersion == "" || h.Metadata.Name == "" {
		return fmt.Errorf("apiVersion, kind and metadata.name are required (line %d)", doc.Line)
	}
	switch h.Kind {
	case "Deployment":
		var d deployment
		if err := doc.Decode(&d); err != nil {
			return err
		}
		m.deployments = append(m.deployments, d)
	case "Job":
		var j deployment
		if err := doc.Decode(&j); err != nil {
			return err
		}
		m.jobs = append(m.jobs, j)
	case "Service":
		var s service
		if err := doc.Decode(&s); err != nil {
			return err
		}
		m.services = append(m.services, s)
	case "ConfigMap":
		var c configMap
		if err := doc.Decode(&c); err != nil {
			return err
		}
		m.configMaps[c.Metadata.Name] = c
	case "ScaledObject":
		var s scaledObject
		if err := doc.Decode(&s); err != nil {
			return err
		}
		m.scaledObjects = append(m.scaledObjects, s)
	default:
		return m.policies.add(h.Kind, doc)
	}
	return nil
}

func (m *manifests) deployment(name string) (deployment, bool) {
	for _, d := range m.deployments {
		if d.Metadata.Name == name {
			return d, true
		}
	}
	return deployment{}, false
}

// subcommand returns the kretrieve command a container runs: the image's
// entrypoint is kretrieve, so it is args[0] (or command[1] when command
// names kretrieve).
func subcommand(c container) (string, error) {
	argv := c.Args
	if len(c.Command) > 0 {
		if path.Base(c.Command[0]) != "kretrieve" {
			return "", fmt.Errorf("command %q does not run kretrieve", c.Command)
		}
		argv = append(slices.Clone(c.Command[1:]), c.Args...)
	}
	if len(argv) == 0 {
		return "", errors.New("no args: the subcommand is required")
	}
	if !slices.Contains(subcommands, argv[0]) {
		return "", fmt.Errorf("args[0] %q is not a kretrieve subcommand %v", argv[0], subcommands)
	}
	return argv[0], nil
}

// envRef matches a $(VAR) reference that Kubernetes expands ($$(VAR) is an
// escaped literal).
var envRef = regexp.MustCompile(`\$?\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// env returns a container's effective environment: envFrom ConfigMaps, then
// env entries, which win, with $(VAR) references expanded as Kubernetes
// does (only variables defined before). fieldRef values are "<fieldPath>".
func (m *manifests) env(c container) (map[string]string, error) {
	out := map[string]string{}
	for _, from := range c.EnvFrom {
		if from.ConfigMapRef == nil {
			continue
		}
		cm, ok := m.configMaps[from.ConfigMapRef.Name]
		if !ok {
			return nil, fmt.Errorf("envFrom: no ConfigMap %q", from.ConfigMapRef.Name)
		}
		for k, v := range cm.Data {
			out[k] = string(v)
		}
	}
	var errs []error
	for _, e := range c.Env {
		switch {
		case e.Value != nil:
			out[e.Name] = envRef.ReplaceAllStringFunc(string(*e.Value), func(ref string) string {
				if strings.HasPrefix(ref, "$$") {
					return ref[1:]
				}
				name := envRef.FindStringSubmatch(ref)[1]
				v, ok := out[name]
				if !ok {
					errs = append(errs, fmt.Errorf("env %s: $(%s) is not defined before it, Kubernetes leaves it unexpanded", e.Name, name))
				}
				return v
			})
		case e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil:
			ref := e.ValueFrom.ConfigMapKeyRef
			v, ok := m.configMaps[ref.Name].Data[ref.Key]
			if !ok {
				errs = append(errs, fmt.Errorf("env %s: no key %q in ConfigMap %q", e.Name, ref.Key, ref.Name))
			}
			out[e.Name] = string(v)
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil:
			out[e.Name] = "<" + e.ValueFrom.FieldRef.FieldPath + ">"
		default:
			out[e.Name] = ""
		}
	}
	return out, errors.Join(errs...)
}

// envOr returns env[name], or def when unset or empty (kretrieve treats an
// empty variable as unset).
func envOr(env map[string]string, name, def string) string {
	if v := env[name]; v != "" {
		return v
	}
	return def
}

// documentedVars reads the variables documented in docs/configuration.md.
func documentedVars(t *testing.T) (kretrieve map[string][]string, otel map[string]bool) {
	t.Helper()
	kretrieve, otel, err := configdoc.Read(configDocPath, subcommands)
	if err != nil {
		t.Fatal(err)
	}
	return kretrieve, otel
}

// envName is the variable bound to a flag.
func envName(flag string) string { return configdoc.EnvName(flag) }

// eachContainer calls f for every init and regular container of every
// Deployment and Job.
func (m *manifests) eachContainer(t *testing.T, f func(t *testing.T, d deployment, c container)) {
	for _, d := range append(slices.Clone(m.deployments), m.jobs...) {
		spec := d.Spec.Template.Spec
		for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
			t.Run(d.Metadata.Name+"/"+c.Name, func(t *testing.T) { f(t, d, c) })
		}
	}
}

func TestKustomizationListsEveryManifest(t *testing.T) {
	m := load(t)
	var listed []string
	for _, r := range m.kustomization.Resources {
		// Another directory's kustomization (../alerts: the alerting
		// rules' ConfigMap); its files are checked there.
		if strings.HasPrefix(r, "../") {
			if _, err := os.Stat(filepath.Join(r, "kustomization.yaml")); err != nil {
				t.Errorf("kustomization.yaml resource %s: %v", r, err)
			}
			continue
		}
		listed = append(listed, r)
	}
	slices.Sort(listed)
	if !slices.Equal(listed, m.files) {
		t.Errorf("kustomization.yaml resources = %v, files in the directory = %v", listed, m.files)
	}
}

func TestContainersRunSubcommandsWithRealFlags(t *testing.T) {
	m := load(t)
	vars, _ := documentedVars(t)
	m.eachContainer(t, func(t *testing.T, _ deployment, c container) {
		cmd, err := subcommand(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range c.Args {
			if !strings.HasPrefix(a, "-") {
				continue
			}
			flag, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
			cmds, ok := vars[envName(flag)]
			switch {
			case !ok:
				t.Errorf("flag --%s: no such flag (%s is not in docs/configuration.md)", flag, envName(flag))
			case !slices.Contains(cmds, cmd):
				t.Errorf("flag --%s: a flag of %v, not of %q", flag, cmds, cmd)
			}
		}
	})
}

func TestEnvVarsAreDocumented(t *testing.T) {
	m := load(t)
	vars, otel := documentedVars(t)
	check := func(name string, cmds ...string) error {
		switch {
		case strings.HasPrefix(name, "KRETRIEVE_"):
			documented, ok := vars[name]
			if !ok {
				return fmt.Errorf("%s is not in the Flags table of docs/configuration.md", name)
			}
			if !slices.ContainsFunc(cmds, func(c string) bool { return slices.Contains(documented, c) }) {
				return fmt.Errorf("%s applies to %v, not to %v: it would be ignored", name, documented, cmds)
			}
		case strings.HasPrefix(name, "OTEL_") && !otel[name]:
			return fmt.Errorf("%s is not in the tracing table of docs/configuration.md", name)
		}
		return nil
	}
	users := map[string][]string{} // ConfigMap name -> commands reading it
	m.eachContainer(t, func(t *testing.T, _ deployment, c container) {
		cmd, err := subcommand(c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.env(c); err != nil {
			t.Error(err)
		}
		for _, from := range c.EnvFrom {
			if from.ConfigMapRef != nil {
				users[from.ConfigMapRef.Name] = append(users[from.ConfigMapRef.Name], cmd)
			}
		}
		for _, e := range c.Env {
			if err := check(e.Name, cmd); err != nil {
				t.Error(err)
			}
		}
	})
	for name, cm := range m.configMaps {
		for _, k := range slices.Sorted(maps.Keys(cm.Data)) {
			if err := check(k, users[name]...); err != nil {
				t.Errorf("ConfigMap %s: %v", name, err)
			}
		}
	}
}

func TestGatewayPortsProbesAndService(t *testing.T) {
	m := load(t)
	var found bool
	m.eachContainer(t, func(t *testing.T, d deployment, c container) {
		if cmd, _ := subcommand(c); cmd != "gateway" {
			return
		}
		found = true
		env, err := m.env(c)
		if err != nil {
			t.Fatal(err)
		}
		port := listenPort(t, c, env, "KRETRIEVE_HTTP_LISTEN")
		checkProbes(t, c, port, false)
		resolve := func(p intOrString) int { return resolvePort(c, p) }
		labels := d.Spec.Template.Metadata.Labels
		var served bool
		for _, s := range m.services {
			if !selects(s.Spec.Selector, labels) {
				continue
			}
			served = true
			for _, sp := range s.Spec.Ports {
				target := intOrString{num: sp.Port}
				if sp.TargetPort != nil {
					target = *sp.TargetPort
				}
				if resolve(target) != port {
					t.Errorf("Service %s: port %d targets %s, want the gateway port %d", s.Metadata.Name, sp.Port, target, port)
				}
			}
			for _, other := range m.deployments {
				if other.Metadata.Name != d.Metadata.Name && selects(s.Spec.Selector, other.Spec.Template.Metadata.Labels) {
					t.Errorf("Service %s also selects the pods of %s", s.Metadata.Name, other.Metadata.Name)
				}
			}
		}
		if !served {
			t.Error("no Service selects the gateway pods")
		}
	})
	if !found {
		t.Error("no gateway Deployment")
	}
}

// listenPort returns the port of the address in the container's variable
// listenVar, checking that it is reachable from outside the pod (not
// loopback) and a containerPort.
func listenPort(t *testing.T, c container, env map[string]string, listenVar string) int {
	t.Helper()
	listen := env[listenVar]
	host, portText, err := net.SplitHostPort(listen)
	if err != nil {
		t.Fatalf("%s=%q: %v (the default 127.0.0.1 is unreachable from outside the pod)", listenVar, listen, err)
	}
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		t.Errorf("%s=%s: a loopback address is unreachable from the kubelet's probes", listenVar, listen)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		t.Fatalf("%s=%s: %v", listenVar, listen, err)
	}
	if !slices.ContainsFunc(c.Ports, func(p containerPort) bool { return p.ContainerPort == port }) {
		t.Errorf("no containerPort %d (%s=%s)", port, listenVar, listen)
	}
	return port
}

// resolvePort turns a port number or container port name into a number
// (-1: no such name).
func resolvePort(c container, p intOrString) int {
	if p.name == "" {
		return p.num
	}
	for _, cp := range c.Ports {
		if cp.Name == p.name {
			return cp.ContainerPort
		}
	}
	return -1
}

// checkProbes checks a container's HTTP probes on port: readiness on
// /readyz, liveness on /healthz, and startup (required when
// startupRequired) on either.
func checkProbes(t *testing.T, c container, port int, startupRequired bool) {
	t.Helper()
	for _, p := range []struct {
		kind  string
		probe *probe
		paths []string
	}{
		{"readinessProbe", c.ReadinessProbe, []string{"/readyz"}},
		{"livenessProbe", c.LivenessProbe, []string{"/healthz"}},
		{"startupProbe", c.StartupProbe, []string{"/healthz", "/readyz"}},
	} {
		if p.probe == nil {
			if p.kind != "startupProbe" || startupRequired {
				t.Errorf("%s: missing", p.kind)
			}
			continue
		}
		g := p.probe.HTTPGet
		if g == nil {
			t.Errorf("%s: want an httpGet probe", p.kind)
			continue
		}
		if !slices.Contains(p.paths, g.Path) || resolvePort(c, g.Port) != port || (g.Scheme != "" && g.Scheme != "HTTP") {
			t.Errorf("%s: GET %s on port %s (%s), want %v on port %d over HTTP", p.kind, g.Path, g.Port, g.Scheme, p.paths, port)
		}
	}
}

// selects reports whether a non-empty selector matches labels.
func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// minWorkerStartup is the least a worker's startup probe must allow
// before liveness takes over: the wait for Kafka at start and the catch-up
// with the documents topic (about 2 s for the 8,352 documents of the Go
// corpus on one machine; minutes for a corpus a hundred times larger over
// a network).
const minWorkerStartup = 5 * time.Minute

// TestWorkersServeHealthAndHaveProbes: every worker serves /healthz and
// /readyz on KRETRIEVE_HEALTH_LISTEN, exposed as a containerPort, is not
// ready until its index has caught up (/readyz) and gets a startup probe
// long enough for the catch-up.
func TestWorkersServeHealthAndHaveProbes(t *testing.T) {
	m := load(t)
	var found int
	m.eachContainer(t, func(t *testing.T, _ deployment, c container) {
		if cmd, _ := subcommand(c); roles[cmd].group == "" {
			return
		}
		found++
		env, err := m.env(c)
		if err != nil {
			t.Fatal(err)
		}
		if env["KRETRIEVE_HEALTH_LISTEN"] == "" {
			t.Fatal("KRETRIEVE_HEALTH_LISTEN unset: the worker serves no /readyz to say when its index has caught up")
		}
		port := listenPort(t, c, env, "KRETRIEVE_HEALTH_LISTEN")
		checkProbes(t, c, port, true)
		if p := c.StartupProbe; p != nil && p.budget() < minWorkerStartup {
			t.Errorf("startupProbe allows %v: want at least %v for the wait for Kafka and the catch-up with the documents topic", p.budget(), minWorkerStartup)
		}
	})
	if found < len(stages) {
		t.Errorf("%d worker containers, want one per stage (%d)", found, len(stages))
	}
}

func TestProbesOnlyWhereHTTPIsServed(t *testing.T) {
	// A probe on a container that serves no HTTP could only be made up:
	// the gateway serves KRETRIEVE_HTTP_LISTEN, workers
	// KRETRIEVE_HEALTH_LISTEN, the console KRETRIEVE_LISTEN, and nothing
	// else (the ingest Job) has a port.
	m := load(t)
	m.eachContainer(t, func(t *testing.T, _ deployment, c container) {
		if c.StartupProbe == nil && c.LivenessProbe == nil && c.ReadinessProbe == nil {
			return
		}
		env, err := m.env(c)
		if err != nil {
			t.Fatal(err)
		}
		cmd, _ := subcommand(c)
		_, worker := roles[cmd]
		serves := cmd == "gateway" && env["KRETRIEVE_HTTP_LISTEN"] != "" || worker && env["KRETRIEVE_HEALTH_LISTEN"] != "" ||
			cmd == "console" && env["KRETRIEVE_LISTEN"] != ""
		if !serves {
			t.Errorf("%s has probes but serves no HTTP endpoint; it is supervised by its exit status", cmd)
		}
	})
}

func TestTerminationGracePeriods(t *testing.T) {
	m := load(t)
	for _, d := range m.deployments {
		spec := d.Spec.Template.Spec
		grace := defaultGracePeriod
		if spec.TerminationGracePeriodSeconds != nil {
			grace = *spec.TerminationGracePeriodSeconds
		}
		for _, c := range spec.Containers {
			t.Run(d.Metadata.Name+"/"+c.Name, func(t *testing.T) {
				cmd, err := subcommand(c)
				if err != nil {
					t.Fatal(err)
				}
				env, err := m.env(c)
				if err != nil {
					t.Fatal(err)
				}
				var preStop time.Duration
				if p := c.Lifecycle.PreStop; p != nil && p.Sleep != nil {
					preStop = time.Duration(p.Sleep.Seconds) * time.Second
				}
				var need time.Duration
				switch {
				case roles[cmd].group != "":
					// consumers.Worker.Run and cmd_worker.go: finishing
					// the batch, committing and leaving the group, and the
					// span flush are each bounded by the shutdown timeout;
					// the last pathways window has its own bound.
					d, err := time.ParseDuration(envOr(env, "KRETRIEVE_SHUTDOWN_TIMEOUT", defaultShutdownTimeout.String()))
					if err != nil {
						t.Fatalf("KRETRIEVE_SHUTDOWN_TIMEOUT: %v", err)
					}
					need = 3*d + pathwaytopic.FinalTimeout
				case cmd == "gateway":
					// cmd_gateway.go: in-flight requests get the timeout
					// plus a second; the preStop sleep runs first.
					d, err := time.ParseDuration(envOr(env, "KRETRIEVE_TIMEOUT", defaultGatewayTimeout.String()))
					if err != nil {
						t.Fatalf("KRETRIEVE_TIMEOUT: %v", err)
					}
					need = d + time.Second
				default:
					return
				}
				need += preStop
				if time.Duration(grace)*time.Second <= need {
					t.Errorf("terminationGracePeriodSeconds %d: must exceed %v (preStop %v included)", grace, need, preStop)
				}
			})
		}
	}
}

func TestScaledObjects(t *testing.T) {
	m := load(t)
	if len(m.scaledObjects) == 0 {
		t.Fatal("no ScaledObject")
	}
	for _, so := range m.scaledObjects {
		t.Run(so.Metadata.Name, func(t *testing.T) {
			ref := so.Spec.ScaleTargetRef
			if ref.Kind != "" && ref.Kind != "Deployment" {
				t.Fatalf("scaleTargetRef.kind %q: want Deployment", ref.Kind)
			}
			d, ok := m.deployment(ref.Name)
			if !ok {
				t.Fatalf("scaleTargetRef.name %q: no such Deployment", ref.Name)
			}
			if d.Spec.Replicas != nil {
				t.Errorf("Deployment %s sets replicas: KEDA owns the count, every apply would reset it", d.Metadata.Name)
			}
			containers := d.Spec.Template.Spec.Containers
			c := containers[0] // KEDA's default envSourceContainerName
			if n := ref.EnvSourceContainerName; n != "" {
				i := slices.IndexFunc(containers, func(c container) bool { return c.Name == n })
				if i < 0 {
					t.Fatalf("envSourceContainerName %q: no such container", n)
				}
				c = containers[i]
			}
			cmd, err := subcommand(c)
			if err != nil {
				t.Fatal(err)
			}
			role, ok := roles[cmd]
			if !ok {
				t.Fatalf("target runs %q, not a consumer-group worker", cmd)
			}
			env, err := m.env(c)
			if err != nil {
				t.Fatal(err)
			}
			partitions, err := strconv.Atoi(envOr(env, "KRETRIEVE_PARTITIONS", strconv.Itoa(defaultPartitions)))
			if err != nil {
				t.Fatalf("KRETRIEVE_PARTITIONS: %v", err)
			}
			lo, hi := so.Spec.MinReplicaCount, so.Spec.MaxReplicaCount
			switch {
			case hi == nil:
				t.Error("maxReplicaCount unset (KEDA default 100)")
			case *hi > partitions:
				t.Errorf("maxReplicaCount %d > %d partitions: a group cannot use more consumers than partitions", *hi, partitions)
			case lo == nil || *lo < 1 || *lo > *hi:
				t.Errorf("minReplicaCount %v: want 1..maxReplicaCount", lo)
			}
			want := map[string]string{
				"bootstrapServers": envOr(env, "KRETRIEVE_BROKERS", defaultBrokers),
				"consumerGroup":    envOr(env, "KRETRIEVE_GROUP", role.group),
				"topic":            envOr(env, role.topicVar, role.topic),
			}
			var kafka int
			for _, tr := range so.Spec.Triggers {
				if tr.Type != "kafka" {
					continue
				}
				kafka++
				md := tr.Metadata
				for _, k := range slices.Sorted(maps.Keys(want)) {
					got := string(md[k])
					if fromEnv := string(md[k+"FromEnv"]); fromEnv != "" {
						got = env[fromEnv]
					}
					if got != want[k] {
						t.Errorf("trigger %s = %q, want %q (the worker's setting)", k, got, want[k])
					}
				}
				if v := string(md["allowIdleConsumers"]); v != "false" {
					t.Errorf("allowIdleConsumers = %q, want \"false\"", v)
				}
				if n, err := strconv.Atoi(string(md["lagThreshold"])); err != nil || n < 1 {
					t.Errorf("lagThreshold = %q: want a positive integer", md["lagThreshold"])
				}
				// A new group starts at the beginning of the topic
				// (franz-go's default start offset): KEDA must count
				// that backlog as lag.
				if v := string(md["offsetResetPolicy"]); v != "earliest" {
					t.Errorf("offsetResetPolicy = %q, want earliest", v)
				}
			}
			if kafka == 0 {
				t.Error("no kafka trigger")
			}
		})
	}
}

// TestWorkersCacheTheIndexOnTheirOwnVolume: no pod builds the index (no
// init container runs `kretrieve index`); each worker follows the
// documents topic into KRETRIEVE_INDEX, a subdirectory of a writable
// volume of its own pod.
func TestWorkersCacheTheIndexOnTheirOwnVolume(t *testing.T) {
	m := load(t)
	for _, d := range m.deployments {
		spec := d.Spec.Template.Spec
		for _, ic := range spec.InitContainers {
			if cmd, _ := subcommand(ic); cmd == "index" {
				t.Errorf("%s: init container %s builds the index in every pod: workers take their documents from the topic", d.Metadata.Name, ic.Name)
			}
		}
		for _, c := range spec.Containers {
			if cmd, _ := subcommand(c); roles[cmd].group == "" {
				continue
			}
			t.Run(d.Metadata.Name+"/"+c.Name, func(t *testing.T) {
				env, err := m.env(c)
				if err != nil {
					t.Fatal(err)
				}
				checkIndexCache(t, d, c, env["KRETRIEVE_INDEX"])
			})
		}
	}
}

// checkIndexCache checks that dir, a worker's KRETRIEVE_INDEX, is a
// subdirectory of a writable volume of the pod that no other pod shares.
func checkIndexCache(t *testing.T, d deployment, c container, dir string) {
	t.Helper()
	if dir == "" {
		// The worker would follow into a temporary directory, which a
		// read-only root file system does not have.
		t.Fatal("KRETRIEVE_INDEX unset: the worker needs a writable directory for its index")
	}
	var (
		mount volumeMount
		found bool
	)
	for _, v := range c.VolumeMounts {
		rel, err := filepath.Rel(v.MountPath, dir)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || (found && len(v.MountPath) <= len(mount.MountPath)) {
			continue
		}
		mount, found = v, true
	}
	switch {
	case !found:
		t.Fatalf("KRETRIEVE_INDEX=%s is not on a volume", dir)
	case mount.ReadOnly:
		t.Errorf("KRETRIEVE_INDEX=%s is on the read-only mount %s: the worker writes its index", dir, mount.MountPath)
	case path.Clean(mount.MountPath) == path.Clean(dir):
		// The index is created next to its place and renamed into it,
		// and removed and created again to rebuild: a mount point
		// refuses both.
		t.Errorf("KRETRIEVE_INDEX=%s is the mount point itself: use a subdirectory", dir)
	}
	i := slices.IndexFunc(d.Spec.Template.Spec.Volumes, func(v volume) bool { return v.Name == mount.Name })
	if i < 0 {
		t.Fatalf("volume %q is not declared", mount.Name)
	}
	v := d.Spec.Template.Spec.Volumes[i]
	switch {
	case v.PersistentVolumeClaim != nil:
		// Every replica of a Deployment mounts the same claim; each
		// worker opens its index exclusively.
		t.Errorf("volume %s: claim %s would be shared by the Deployment's replicas: an emptyDir, or a StatefulSet's volumeClaimTemplates", v.Name, v.PersistentVolumeClaim.ClaimName)
	case v.EmptyDir == nil:
		t.Errorf("volume %s: want an emptyDir for the index cache", v.Name)
	}
}

// TestIngestJob: one Job publishes the documents with `kretrieve ingest`
// to the brokers and documents topic the workers follow, as a one-shot pod,
// with Kafka credentials of its own (the ingest ACL role) that no other
// workload reads.
func TestIngestJob(t *testing.T) {
	m := load(t)
	var ingest []deployment
	for _, j := range m.jobs {
		for _, c := range j.Spec.Template.Spec.Containers {
			if cmd, _ := subcommand(c); cmd == "ingest" {
				ingest = append(ingest, j)
			}
		}
	}
	if len(ingest) != 1 {
		t.Fatalf("%d Jobs run `kretrieve ingest`, want 1: nothing else puts documents in the topic", len(ingest))
	}
	job := ingest[0]
	spec := job.Spec.Template.Spec
	if p := spec.RestartPolicy; p != "Never" && p != "OnFailure" {
		t.Errorf("restartPolicy %q: a Job's pods need Never or OnFailure", p)
	}
	if len(spec.Containers) != 1 {
		t.Fatalf("%d containers, want the ingest one alone", len(spec.Containers))
	}
	c := spec.Containers[0]
	env, err := m.env(c)
	if err != nil {
		t.Fatal(err)
	}
	documentsTopic := func(env map[string]string) string {
		return envOr(env, "KRETRIEVE_TOPIC_DOCUMENTS", messages.DefaultDocumentsTopic)
	}
	for _, d := range m.deployments {
		for _, w := range d.Spec.Template.Spec.Containers {
			if cmd, _ := subcommand(w); roles[cmd].group == "" {
				continue
			}
			wenv, err := m.env(w)
			if err != nil {
				t.Fatal(err)
			}
			if a, b := envOr(env, "KRETRIEVE_BROKERS", defaultBrokers), envOr(wenv, "KRETRIEVE_BROKERS", defaultBrokers); a != b {
				t.Errorf("ingest publishes to brokers %s, %s/%s reads %s", a, d.Metadata.Name, w.Name, b)
			}
			if a, b := documentsTopic(env), documentsTopic(wenv); a != b {
				t.Errorf("ingest publishes to topic %s, %s/%s follows %s", a, d.Metadata.Name, w.Name, b)
			}
		}
	}
	own := secretsOf(job)
	if len(own) == 0 {
		t.Error("no Secret: ingest must run with the ingest role's Kafka credentials, not a shared identity")
	}
	for _, from := range c.EnvFrom {
		if from.SecretRef != nil && !from.SecretRef.Optional {
			t.Errorf("secretRef %s is not optional: the Job would not start on a cluster without SASL", from.SecretRef.Name)
		}
	}
	for _, other := range append(slices.Clone(m.deployments), m.jobs...) {
		if other.Metadata.Name == job.Metadata.Name {
			continue
		}
		for name := range secretsOf(other) {
			if own[name] {
				t.Errorf("Secret %s is read by %s too: each role has its own credentials (least privilege)", name, other.Metadata.Name)
			}
		}
	}
}

// secretsOf returns the names of the Secrets a workload's pods read.
func secretsOf(d deployment) map[string]bool {
	out := map[string]bool{}
	spec := d.Spec.Template.Spec
	for _, v := range spec.Volumes {
		if v.Secret != nil {
			out[v.Secret.SecretName] = true
		}
	}
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		for _, from := range c.EnvFrom {
			if from.SecretRef != nil {
				out[from.SecretRef.Name] = true
			}
		}
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				out[e.ValueFrom.SecretKeyRef.Name] = true
			}
		}
	}
	return out
}

func TestSecurityAndResources(t *testing.T) {
	m := load(t)
	m.eachContainer(t, func(t *testing.T, d deployment, c container) {
		pod, sc := d.Spec.Template.Spec.SecurityContext, c.SecurityContext
		if !isTrue(sc.RunAsNonRoot) && !isTrue(pod.RunAsNonRoot) {
			t.Error("runAsNonRoot not set")
		}
		if !isTrue(sc.ReadOnlyRootFilesystem) {
			t.Error("readOnlyRootFilesystem not set")
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Error("allowPrivilegeEscalation must be false")
		}
		if !slices.Contains(sc.Capabilities.Drop, "ALL") {
			t.Error("capabilities must drop ALL")
		}
		for _, r := range []string{"cpu", "memory"} {
			if c.Resources.Requests[r] == "" {
				t.Errorf("no %s request", r)
			}
		}
		if c.Resources.Limits["memory"] == "" {
			t.Error("no memory limit")
		}
	})
}

func isTrue(b *bool) bool { return b != nil && *b }

// TestEveryStageIsDeployedAndScaled: each stage of the pipeline has a
// Deployment running its worker command and a ScaledObject scaling it,
// so a stage added to the table fails here until it has manifests.
func TestEveryStageIsDeployedAndScaled(t *testing.T) {
	m := load(t)
	deployed := map[string]string{} // command -> Deployment
	m.eachContainer(t, func(t *testing.T, d deployment, c container) {
		if cmd, err := subcommand(c); err == nil {
			deployed[cmd] = d.Metadata.Name
		}
	})
	scaled := map[string]bool{}
	for _, so := range m.scaledObjects {
		scaled[so.Spec.ScaleTargetRef.Name] = true
	}
	for _, st := range stages {
		d, ok := deployed[st.Name]
		switch {
		case !ok:
			t.Errorf("stage %s: no Deployment runs `kretrieve %s`", st.Name, st.Name)
		case !scaled[d]:
			t.Errorf("stage %s: no ScaledObject scales Deployment %s", st.Name, d)
		}
	}
}

// TestBinaryCommands: the command list reads, has every stage's worker
// command, and the defaults the checks fall back to are the binary's.
func TestBinaryCommands(t *testing.T) {
	if binaryCommandsErr != nil {
		t.Fatal(binaryCommandsErr)
	}
	for _, st := range stages {
		if !slices.Contains(subcommands, st.Name) {
			t.Errorf("no worker command %q among %v", st.Name, subcommands)
		}
	}
	defaults := map[[2]string]string{
		{"retrieval", "shutdown-timeout"}: defaultShutdownTimeout.String(),
		{"gateway", "timeout"}:            defaultGatewayTimeout.String(),
		{"gateway", "partitions"}:         strconv.Itoa(defaultPartitions),
		{"gateway", "brokers"}:            defaultBrokers,
	}
	for _, c := range binaryCommands {
		for _, f := range c.Flags {
			if want, ok := defaults[[2]string{c.Command, f.Name}]; ok {
				if f.Default != want {
					t.Errorf("%s --%s: the binary's default is %q, the checks assume %q", c.Command, f.Name, f.Default, want)
				}
				delete(defaults, [2]string{c.Command, f.Name})
			}
		}
	}
	if len(defaults) > 0 {
		t.Errorf("flags not found: %v", defaults)
	}
}
