// SPDX-License-Identifier: Apache-2.0

package k8s_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// labelSelector is a PodDisruptionBudget's or NetworkPolicy's pod selector
// (matchLabels only: matchExpressions are refused, so the checks below see
// the whole selector).
type labelSelector struct {
	MatchLabels      map[string]string `yaml:"matchLabels"`
	MatchExpressions []any             `yaml:"matchExpressions"`
}

type pdb struct {
	header `yaml:",inline"`
	Spec   struct {
		MinAvailable   *intOrString  `yaml:"minAvailable"`
		MaxUnavailable *intOrString  `yaml:"maxUnavailable"`
		Selector       labelSelector `yaml:"selector"`
	} `yaml:"spec"`
}

// policyPort is a NetworkPolicy rule's port.
type policyPort struct {
	Port     intOrString `yaml:"port"`
	Protocol string      `yaml:"protocol"`
}

// peer is a NetworkPolicy rule's peer.
type peer struct {
	NamespaceSelector *labelSelector `yaml:"namespaceSelector"`
	PodSelector       *labelSelector `yaml:"podSelector"`
	IPBlock           *struct {
		CIDR string `yaml:"cidr"`
	} `yaml:"ipBlock"`
}

type networkPolicy struct {
	header `yaml:",inline"`
	Spec   struct {
		PodSelector labelSelector `yaml:"podSelector"`
		PolicyTypes []string      `yaml:"policyTypes"`
		Ingress     []struct {
			From  []peer       `yaml:"from"`
			Ports []policyPort `yaml:"ports"`
		} `yaml:"ingress"`
		Egress []struct {
			To    []peer       `yaml:"to"`
			Ports []policyPort `yaml:"ports"`
		} `yaml:"egress"`
	} `yaml:"spec"`
}

type triggerAuthentication struct {
	header `yaml:",inline"`
	Spec   struct {
		SecretTargetRef []struct {
			Parameter string `yaml:"parameter"`
			Name      string `yaml:"name"`
			Key       string `yaml:"key"`
		} `yaml:"secretTargetRef"`
	} `yaml:"spec"`
}

type secret struct {
	header     `yaml:",inline"`
	StringData map[string]str `yaml:"stringData"`
	Data       map[string]str `yaml:"data"`
}

// policies are the documents of kinds that guard the workloads.
type policies struct {
	pdbs         []pdb
	netpols      []networkPolicy
	triggerAuths map[string]triggerAuthentication
	secrets      map[string]secret
}

func (p *policies) add(kind string, doc *yaml.Node) error {
	if p.triggerAuths == nil {
		p.triggerAuths, p.secrets = map[string]triggerAuthentication{}, map[string]secret{}
	}
	var err error
	switch kind {
	case "PodDisruptionBudget":
		var v pdb
		err = doc.Decode(&v)
		p.pdbs = append(p.pdbs, v)
	case "NetworkPolicy":
		var v networkPolicy
		err = doc.Decode(&v)
		p.netpols = append(p.netpols, v)
	case "TriggerAuthentication":
		var v triggerAuthentication
		err = doc.Decode(&v)
		p.triggerAuths[v.Metadata.Name] = v
	case "Secret":
		var v secret
		err = doc.Decode(&v)
		p.secrets[v.Metadata.Name] = v
	}
	return err
}

// workloads are the Deployments and Jobs.
func (m *manifests) workloads() []deployment {
	return append(slices.Clone(m.deployments), m.jobs...)
}

// selecting returns the names of the selectors of sels that select the
// pods of d, failing t on a selector it cannot judge.
func selecting(t *testing.T, d deployment, names []string, sels []labelSelector) []string {
	t.Helper()
	var out []string
	for i, s := range sels {
		if len(s.MatchExpressions) > 0 {
			t.Errorf("%s: matchExpressions: use matchLabels, which these checks read", names[i])
		}
		if selects(s.MatchLabels, d.Spec.Template.Metadata.Labels) {
			out = append(out, names[i])
		}
	}
	return out
}

// TestImagesArePinned: every container runs a pinned image (a version tag
// or a digest, never :latest or no tag, which move under a running
// Deployment), and every kretrieve container the same one, so an overlay's
// images: sets the release for all at once.
func TestImagesArePinned(t *testing.T) {
	m := load(t)
	images := map[string]bool{}
	m.eachContainer(t, func(t *testing.T, _ deployment, c container) {
		images[c.Image] = true
		ref := c.Image
		if _, digest, ok := strings.Cut(ref, "@"); ok {
			if !strings.HasPrefix(digest, "sha256:") {
				t.Errorf("image %q: a digest is sha256:...", ref)
			}
			return
		}
		repo, tag := ref, ""
		if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
			repo, tag = ref[:i], ref[i+1:]
		}
		switch {
		case repo == "":
			t.Error("no image")
		case tag == "" || tag == "latest" || !strings.ContainsAny(tag, "0123456789"):
			t.Errorf("image %q: pin a version tag (%s:X.Y.Z) or a digest", ref, repo)
		}
	})
	if len(images) != 1 {
		t.Errorf("images %v: every workload runs the one kretrieve image, at one version", slices.Sorted(maps.Keys(images)))
	}
}

// TestEveryDeploymentHasADisruptionBudget: each Deployment is selected by
// exactly one PodDisruptionBudget, which selects no other workload and
// never blocks a drain (minAvailable below the least replica count: KEDA's
// minReplicaCount for a scaled Deployment).
func TestEveryDeploymentHasADisruptionBudget(t *testing.T) {
	m := load(t)
	names := make([]string, len(m.pdbs))
	sels := make([]labelSelector, len(m.pdbs))
	for i, p := range m.pdbs {
		names[i], sels[i] = p.Metadata.Name, p.Spec.Selector
		if (p.Spec.MinAvailable == nil) == (p.Spec.MaxUnavailable == nil) {
			t.Errorf("PodDisruptionBudget %s: set one of minAvailable and maxUnavailable", p.Metadata.Name)
		}
	}
	for _, d := range m.deployments {
		t.Run(d.Metadata.Name, func(t *testing.T) {
			got := selecting(t, d, names, sels)
			if len(got) != 1 {
				t.Fatalf("selected by PodDisruptionBudgets %v, want exactly one", got)
			}
			p := m.pdbs[slices.Index(names, got[0])]
			least := 1
			if d.Spec.Replicas != nil {
				least = *d.Spec.Replicas
			}
			for _, so := range m.scaledObjects {
				if so.Spec.ScaleTargetRef.Name == d.Metadata.Name && so.Spec.MinReplicaCount != nil {
					least = *so.Spec.MinReplicaCount
				}
			}
			if v := p.Spec.MinAvailable; v != nil && (v.name != "" || v.num >= least) {
				t.Errorf("%s: minAvailable %s with as few as %d replicas blocks every drain: use maxUnavailable", p.Metadata.Name, v, least)
			}
			if v := p.Spec.MaxUnavailable; v != nil && v.name == "" && v.num < 1 {
				t.Errorf("%s: maxUnavailable %d blocks every drain", p.Metadata.Name, v.num)
			}
		})
	}
	for _, j := range m.jobs {
		if got := selecting(t, j, names, sels); len(got) > 0 {
			t.Errorf("Job %s: selected by PodDisruptionBudgets %v (a Job's evicted pod is retried)", j.Metadata.Name, got)
		}
	}
}

// endpoint is a namespace and port a workload connects to.
type endpoint struct {
	namespace string
	port      int
	protocol  string
}

func (e endpoint) String() string {
	return fmt.Sprintf("%s/%d/%s", e.namespace, e.port, e.protocol)
}

// serviceEndpoint returns the namespace and port of host:port, host a
// Service's cluster name (NAME.NAMESPACE.svc...).
func serviceEndpoint(hostport string) (endpoint, error) {
	host, portText, err := net.SplitHostPort(hostport)
	if err != nil {
		return endpoint{}, err
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return endpoint{}, err
	}
	labels := strings.Split(host, ".")
	if len(labels) < 3 || labels[2] != "svc" {
		return endpoint{}, fmt.Errorf("%s: want a Service's name, NAME.NAMESPACE.svc.cluster.local", host)
	}
	return endpoint{labels[1], port, "TCP"}, nil
}

// needs returns where a container connects: every broker of
// KRETRIEVE_BROKERS, the OTLP endpoint's host, and DNS.
func needs(env map[string]string) ([]endpoint, error) {
	out := []endpoint{{"kube-system", 53, "UDP"}, {"kube-system", 53, "TCP"}}
	for b := range strings.SplitSeq(envOr(env, "KRETRIEVE_BROKERS", defaultBrokers), ",") {
		e, err := serviceEndpoint(strings.TrimSpace(b))
		if err != nil {
			return nil, fmt.Errorf("KRETRIEVE_BROKERS: %w", err)
		}
		out = append(out, e)
	}
	if v := env["OTEL_EXPORTER_OTLP_ENDPOINT"]; v != "" {
		u, err := url.Parse(v)
		if err != nil {
			return nil, err
		}
		e, err := serviceEndpoint(u.Host)
		if err != nil {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: %w", err)
		}
		out = append(out, e)
	}
	return out, nil
}

// TestEveryWorkloadHasANetworkPolicy: each Deployment and Job is selected
// by exactly one NetworkPolicy, which governs both directions, admits
// connections only on the ports its containers declare, and lets it
// connect to its brokers, its OTLP collector and DNS, and nowhere else.
func TestEveryWorkloadHasANetworkPolicy(t *testing.T) {
	m := load(t)
	names := make([]string, len(m.netpols))
	sels := make([]labelSelector, len(m.netpols))
	for i, p := range m.netpols {
		names[i], sels[i] = p.Metadata.Name, p.Spec.PodSelector
	}
	for _, d := range m.workloads() {
		t.Run(d.Metadata.Name, func(t *testing.T) {
			got := selecting(t, d, names, sels)
			if len(got) != 1 {
				t.Fatalf("selected by NetworkPolicies %v, want exactly one", got)
			}
			np := m.netpols[slices.Index(names, got[0])]
			if !slices.Contains(np.Spec.PolicyTypes, "Ingress") || !slices.Contains(np.Spec.PolicyTypes, "Egress") {
				t.Errorf("%s: policyTypes %v, want Ingress and Egress", np.Metadata.Name, np.Spec.PolicyTypes)
			}
			checkIngress(t, d, np)
			checkEgress(t, m, d, np)
		})
	}
}

// checkIngress: np admits exactly the pod's container ports, on TCP.
func checkIngress(t *testing.T, d deployment, np networkPolicy) {
	t.Helper()
	var served, admitted []int
	containers := d.Spec.Template.Spec.Containers
	for _, c := range containers {
		for _, p := range c.Ports {
			served = append(served, p.ContainerPort)
		}
	}
	for _, rule := range np.Spec.Ingress {
		if len(rule.Ports) == 0 {
			t.Errorf("%s: an ingress rule without ports admits every port", np.Metadata.Name)
		}
		for _, p := range rule.Ports {
			n := -1
			for _, c := range containers {
				if n = resolvePort(c, p.Port); n >= 0 {
					break
				}
			}
			if p.Protocol != "" && p.Protocol != "TCP" {
				t.Errorf("%s: ingress port %s/%s: kretrieve serves TCP only", np.Metadata.Name, p.Port, p.Protocol)
			}
			admitted = append(admitted, n)
		}
	}
	slices.Sort(served)
	slices.Sort(admitted)
	if !slices.Equal(served, admitted) {
		t.Errorf("%s: ingress admits ports %v, the pod serves %v", np.Metadata.Name, admitted, served)
	}
}

// checkEgress: every rule of np names its ports and namespaces, and
// together they reach what every container of d connects to.
func checkEgress(t *testing.T, m *manifests, d deployment, np networkPolicy) {
	t.Helper()
	allowed := map[endpoint]bool{}
	for _, rule := range np.Spec.Egress {
		if len(rule.Ports) == 0 || len(rule.To) == 0 {
			t.Errorf("%s: an egress rule without ports or peers allows too much", np.Metadata.Name)
		}
		for _, to := range rule.To {
			ns := ""
			if to.NamespaceSelector != nil {
				ns = to.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"]
			}
			if ns == "" || to.IPBlock != nil {
				t.Errorf("%s: egress peer %+v: select the namespace by kubernetes.io/metadata.name", np.Metadata.Name, to)
				continue
			}
			for _, p := range rule.Ports {
				allowed[endpoint{ns, p.Port.num, cmp.Or(p.Protocol, "TCP")}] = true
			}
		}
	}
	spec := d.Spec.Template.Spec
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers...) {
		env, err := m.env(c)
		if err != nil {
			t.Fatal(err)
		}
		want, err := needs(env)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		for _, e := range want {
			if !allowed[e] {
				t.Errorf("%s: no egress to %s, which %s connects to", np.Metadata.Name, e, c.Name)
			}
		}
	}
}

// kedaKafkaAuth are the parameters of KEDA's kafka scaler a
// TriggerAuthentication may set, and the values it accepts where they are
// a choice.
var kedaKafkaAuth = map[string][]string{
	"sasl":     {"none", "plaintext", "scram_sha256", "scram_sha512"},
	"username": nil, "password": nil,
	"tls": {"enable", "disable"},
	"ca":  nil, "cert": nil, "key": nil, "keyPassword": nil,
}

// TestKafkaTriggersAuthenticate: every kafka trigger takes SASL and TLS
// from a TriggerAuthentication whose every parameter comes from a Secret
// key, covering sasl, username, password, tls and ca; the Secret shipped
// here says what configmap.yaml's workers do (no SASL, no TLS) and has
// every key.
func TestKafkaTriggersAuthenticate(t *testing.T) {
	m := load(t)
	for _, so := range m.scaledObjects {
		for _, tr := range so.Spec.Triggers {
			if tr.Type != "kafka" {
				continue
			}
			t.Run(so.Metadata.Name, func(t *testing.T) {
				ref := tr.AuthenticationRef
				if ref == nil || (ref.Kind != "" && ref.Kind != "TriggerAuthentication") {
					t.Fatalf("authenticationRef %+v: want a TriggerAuthentication", ref)
				}
				ta, ok := m.triggerAuths[ref.Name]
				if !ok {
					t.Fatalf("authenticationRef %s: no such TriggerAuthentication", ref.Name)
				}
				checkTriggerAuthentication(t, m, ta)
			})
		}
	}
}

func checkTriggerAuthentication(t *testing.T, m *manifests, ta triggerAuthentication) {
	t.Helper()
	var params []string
	for _, r := range ta.Spec.SecretTargetRef {
		params = append(params, r.Parameter)
		choices, ok := kedaKafkaAuth[r.Parameter]
		if !ok {
			t.Errorf("parameter %q: not one of the kafka scaler's %v", r.Parameter, slices.Sorted(maps.Keys(kedaKafkaAuth)))
			continue
		}
		s, ok := m.secrets[r.Name]
		if !ok {
			t.Errorf("parameter %s: no Secret %s here", r.Parameter, r.Name)
			continue
		}
		v, ok := s.StringData[r.Key]
		if !ok {
			t.Errorf("parameter %s: Secret %s has no key %q", r.Parameter, r.Name, r.Key)
		}
		if choices != nil && !slices.Contains(choices, string(v)) {
			t.Errorf("Secret %s: %s = %q, want one of %v", r.Name, r.Key, v, choices)
		}
		// The workers of configmap.yaml speak plaintext Kafka; KEDA
		// must connect to the same brokers the same way.
		plain := map[string]string{"sasl": "none", "tls": "disable"}
		if want, ok := plain[r.Parameter]; ok && m.configMaps["kretrieve"].Data["KRETRIEVE_SASL_MECHANISM"] == "" && string(v) != want {
			t.Errorf("Secret %s: %s = %q, but the workers connect without SASL or TLS (%s)", r.Name, r.Key, v, want)
		}
	}
	for _, want := range []string{"sasl", "username", "password", "tls", "ca"} {
		if !slices.Contains(params, want) {
			t.Errorf("TriggerAuthentication %s: no %s parameter", ta.Metadata.Name, want)
		}
	}
}

// TestEnvVarsAreSettings: a container sets KRETRIEVE_* and OTEL_*
// variables (TestEnvVarsAreDocumented checks they are real), and others
// only to expand them with $(VAR).
func TestEnvVarsAreSettings(t *testing.T) {
	m := load(t)
	m.eachContainer(t, func(t *testing.T, _ deployment, c container) {
		var refs []string
		for _, e := range c.Env {
			if e.Value != nil {
				for _, sm := range envRef.FindAllStringSubmatch(string(*e.Value), -1) {
					refs = append(refs, sm[1])
				}
			}
		}
		for _, e := range c.Env {
			if !strings.HasPrefix(e.Name, "KRETRIEVE_") && !strings.HasPrefix(e.Name, "OTEL_") && !slices.Contains(refs, e.Name) {
				t.Errorf("env %s: not a kretrieve setting (KRETRIEVE_*, OTEL_*) and used by no $(%s)", e.Name, e.Name)
			}
		}
	})
}

// dockerfile is the image's Dockerfile, whose staged context `make
// image-context` writes.
const dockerfile = "../../Dockerfile"

// TestIngestPublishesTheImageCorpus: the ingest Job publishes the demo
// corpus the image carries (the file the Dockerfile copies from the
// context `make image-context` stages), so it needs no Go installation;
// the binary is on the image's PATH for `kubectl exec … -- kretrieve`.
func TestIngestPublishesTheImageCorpus(t *testing.T) {
	b, err := os.ReadFile(dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	copies := map[string]string{} // destination -> context file
	var entrypoint []string
	var pathDirs []string
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		switch {
		case len(f) == 3 && f[0] == "COPY":
			copies[f[2]] = f[1]
		case len(f) >= 2 && f[0] == "ENTRYPOINT":
			if err := json.Unmarshal([]byte(strings.Join(f[1:], " ")), &entrypoint); err != nil {
				t.Fatalf("ENTRYPOINT: %v", err)
			}
		case len(f) == 2 && f[0] == "ENV" && strings.HasPrefix(f[1], "PATH="):
			pathDirs = strings.Split(strings.TrimPrefix(f[1], "PATH="), ":")
		}
	}
	if len(entrypoint) != 1 || !slices.Contains(pathDirs, path.Dir(entrypoint[0])) || copies[entrypoint[0]] != "kretrieve" {
		t.Errorf("ENTRYPOINT %v, PATH %v: want the kretrieve binary in a PATH directory", entrypoint, pathDirs)
	}
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := load(t)
	var found bool
	m.eachContainer(t, func(t *testing.T, _ deployment, c container) {
		if cmd, _ := subcommand(c); cmd != "ingest" {
			return
		}
		found = true
		i := slices.Index(c.Args, "--jsonl")
		if i < 0 || i+1 >= len(c.Args) {
			t.Fatalf("args %q: no --jsonl FILE: the default corpus needs a Go installation, which the image has not", c.Args)
		}
		file := c.Args[i+1]
		src, ok := copies[file]
		if !ok {
			t.Fatalf("--jsonl %s: the Dockerfile copies nothing there (%v)", file, copies)
		}
		if !strings.Contains(string(makefile), "-o $(IMAGE_CONTEXT)/"+src) {
			t.Errorf("the image's %s comes from the context's %s, which make image-context does not write", file, src)
		}
	})
	if !found {
		t.Error("no container runs ingest")
	}
}
