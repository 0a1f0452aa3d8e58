// SPDX-License-Identifier: Apache-2.0

//go:build integration

package integration

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	mobynet "github.com/moby/moby/api/types/network"
	"github.com/testcontainers/testcontainers-go"
	tcexec "github.com/testcontainers/testcontainers-go/exec"
	"github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"
	"go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/kretrieve/kretrieve/internal/testutil/poll"
)

// k8sDir holds the Kubernetes manifests whose containers this file runs.
const k8sDir = "../deploy/k8s"

// podSpec is the part of a Deployment's or Job's pod template that says
// how its containers run.
type podSpec struct {
	TerminationGracePeriodSeconds *int `yaml:"terminationGracePeriodSeconds"`
	SecurityContext               struct {
		RunAsUser  *int `yaml:"runAsUser"`
		RunAsGroup *int `yaml:"runAsGroup"`
	} `yaml:"securityContext"`
	InitContainers []k8sContainer `yaml:"initContainers"`
	Containers     []k8sContainer `yaml:"containers"`
	Volumes        []struct {
		Name     string `yaml:"name"`
		EmptyDir *struct {
			SizeLimit string `yaml:"sizeLimit"`
		} `yaml:"emptyDir"`
	} `yaml:"volumes"`
}

type k8sProbe struct {
	HTTPGet *struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	} `yaml:"httpGet"`
	TCPSocket *struct {
		Port string `yaml:"port"`
	} `yaml:"tcpSocket"`
}

type k8sContainer struct {
	Name    string   `yaml:"name"`
	Image   string   `yaml:"image"`
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
	Ports   []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	EnvFrom []struct {
		ConfigMapRef *struct {
			Name string `yaml:"name"`
		} `yaml:"configMapRef"`
		SecretRef *struct {
			Name     string `yaml:"name"`
			Optional bool   `yaml:"optional"`
		} `yaml:"secretRef"`
	} `yaml:"envFrom"`
	Env []struct {
		Name      string  `yaml:"name"`
		Value     *string `yaml:"value"`
		ValueFrom *struct {
			FieldRef *struct {
				FieldPath string `yaml:"fieldPath"`
			} `yaml:"fieldRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	Resources struct {
		Limits map[string]string `yaml:"limits"`
	} `yaml:"resources"`
	StartupProbe    *k8sProbe `yaml:"startupProbe"`
	LivenessProbe   *k8sProbe `yaml:"livenessProbe"`
	ReadinessProbe  *k8sProbe `yaml:"readinessProbe"`
	SecurityContext struct {
		ReadOnlyRootFilesystem bool `yaml:"readOnlyRootFilesystem"`
	} `yaml:"securityContext"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

// workload is a Deployment or a Job of the manifests.
type workload struct {
	kind, name string
	pod        podSpec
	// aliases are the cluster names of the Services that select its
	// pods, by which other containers reach it.
	aliases []string
}

// podName is the made-up name of the workload's pod: its host name, and
// what the downward API's metadata.name gives.
func (w workload) podName() string { return w.name + "-0" }

// k8sManifests are the manifests' workloads, in file order, and their
// ConfigMaps' data.
type k8sManifests struct {
	workloads  []workload
	configMaps map[string]map[string]string
}

// kustomizeBuild renders a kustomization directory as `kubectl kustomize
// DIR` does (kustomize's own library, at its default options).
func kustomizeBuild(t *testing.T, dir string) []byte {
	t.Helper()
	rm, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	b, err := rm.AsYaml()
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	return b
}

// k8sObject is one rendered object, by the fields these tests read.
type k8sObject struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name      string `yaml:"name"`
		Namespace string `yaml:"namespace"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec struct {
		// A Service's selector (a workload's is a matchLabels map).
		Selector map[string]any `yaml:"selector"`
		Template struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec podSpec `yaml:"spec"`
		} `yaml:"template"`
		Triggers []struct {
			Type              string `yaml:"type"`
			AuthenticationRef *struct {
				Name string `yaml:"name"`
			} `yaml:"authenticationRef"`
		} `yaml:"triggers"`
	} `yaml:"spec"`
}

// renderK8s renders the kustomization in dir into its objects.
func renderK8s(t *testing.T, dir string) []k8sObject {
	t.Helper()
	dec := yaml.NewDecoder(bytes.NewReader(kustomizeBuild(t, dir)))
	var out []k8sObject
	for {
		var o k8sObject
		if err := dec.Decode(&o); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("kustomize build %s: %v", dir, err)
		}
		out = append(out, o)
	}
}

// readK8sManifests renders the kustomization in dir as `kubectl apply -k`
// would.
func readK8sManifests(t *testing.T, dir string) k8sManifests {
	t.Helper()
	m := k8sManifests{configMaps: map[string]map[string]string{}}
	objects := renderK8s(t, dir)
	for _, o := range objects {
		switch o.Kind {
		case "ConfigMap":
			m.configMaps[o.Metadata.Name] = o.Data
		case "Deployment", "Job":
			w := workload{kind: o.Kind, name: o.Metadata.Name, pod: o.Spec.Template.Spec}
			for _, svc := range objects {
				if svc.Kind == "Service" && selectsLabels(svc.Spec.Selector, o.Spec.Template.Metadata.Labels) {
					w.aliases = append(w.aliases, svc.Metadata.Name+"."+cmp.Or(svc.Metadata.Namespace, "default")+".svc.cluster.local")
				}
			}
			m.workloads = append(m.workloads, w)
		}
	}
	if len(m.workloads) == 0 {
		t.Fatal("no Deployment or Job in " + dir)
	}
	return m
}

// selectsLabels reports whether a Service's non-empty selector matches
// labels.
func selectsLabels(selector map[string]any, labels map[string]string) bool {
	for k, v := range selector {
		if s, ok := v.(string); !ok || labels[k] != s {
			return false
		}
	}
	return len(selector) > 0
}

// envRefPattern is a $(VAR) reference Kubernetes expands.
var envRefPattern = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// containerEnv is c's environment as the kubelet builds it: envFrom
// ConfigMaps, then env entries with $(VAR) expanded and fieldRef values
// made up for a pod of workload w. Kafka's address becomes brokers,
// unless that is empty (the manifests' broker runs too);
// optional Secrets (absent here, as on a cluster without SASL) add
// nothing.
func (m k8sManifests) containerEnv(t *testing.T, w workload, c k8sContainer, brokers string) map[string]string {
	t.Helper()
	env := map[string]string{}
	for _, from := range c.EnvFrom {
		switch {
		case from.ConfigMapRef != nil:
			data, ok := m.configMaps[from.ConfigMapRef.Name]
			if !ok {
				t.Fatalf("%s: envFrom: no ConfigMap %s", c.Name, from.ConfigMapRef.Name)
			}
			for k, v := range data {
				env[k] = v
			}
		case from.SecretRef != nil && !from.SecretRef.Optional:
			t.Fatalf("%s: envFrom: Secret %s is required: the pod would not start without it", c.Name, from.SecretRef.Name)
		}
	}
	fields := map[string]string{
		"metadata.name":      w.podName(),
		"metadata.namespace": "kretrieve",
		"spec.nodeName":      "node-0",
	}
	for _, e := range c.Env {
		switch {
		case e.Value != nil:
			env[e.Name] = envRefPattern.ReplaceAllStringFunc(*e.Value, func(ref string) string {
				return env[ref[2:len(ref)-1]]
			})
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil:
			env[e.Name] = fields[e.ValueFrom.FieldRef.FieldPath]
		default:
			t.Fatalf("%s: env %s: a source this test does not know", c.Name, e.Name)
		}
	}
	if brokers != "" {
		if env["KRETRIEVE_BROKERS"] == "" {
			t.Fatalf("%s: no KRETRIEVE_BROKERS", c.Name)
		}
		env["KRETRIEVE_BROKERS"] = brokers
	}
	return env
}

// memoryBytes parses a Kubernetes memory quantity in Mi or Gi.
func memoryBytes(q string) (int64, error) {
	for suffix, unit := range map[string]int64{"Mi": 1 << 20, "Gi": 1 << 30} {
		if v, ok := strings.CutSuffix(q, suffix); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			return n * unit, err
		}
	}
	return 0, fmt.Errorf("memory %q: want Mi or Gi", q)
}

// containerOpts are the options that run c as its pod would: the image's
// entrypoint with the manifest's args (or its command), the environment,
// the pod's user, a read-only root file system with every emptyDir on a
// tmpfs, no capabilities, the memory limit, and the container ports
// published on 127.0.0.1.
func containerOpts(t *testing.T, w workload, c k8sContainer, env map[string]string, nw *testcontainers.DockerNetwork) []testcontainers.ContainerCustomizer {
	t.Helper()
	tmpfs := map[string]string{}
	for _, vm := range c.VolumeMounts {
		i := slices.IndexFunc(w.pod.Volumes, func(v struct {
			Name     string `yaml:"name"`
			EmptyDir *struct {
				SizeLimit string `yaml:"sizeLimit"`
			} `yaml:"emptyDir"`
		}) bool {
			return v.Name == vm.Name
		})
		if i < 0 || w.pod.Volumes[i].EmptyDir == nil {
			t.Fatalf("%s: volume %s is not an emptyDir, which this test mounts as a tmpfs", c.Name, vm.Name)
		}
		size := "256m"
		if n, err := memoryBytes(w.pod.Volumes[i].EmptyDir.SizeLimit); err == nil {
			size = strconv.FormatInt(n, 10)
		}
		tmpfs[vm.MountPath] = "rw,mode=1777,size=" + size
	}
	var memory int64
	if q := c.Resources.Limits["memory"]; q != "" {
		n, err := memoryBytes(q)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		memory = n
	}
	var ports []string
	bindings := mobynet.PortMap{}
	for _, p := range c.Ports {
		port := fmt.Sprintf("%d/tcp", p.ContainerPort)
		parsed, err := mobynet.ParsePort(port)
		if err != nil {
			t.Fatal(err)
		}
		ports = append(ports, port)
		bindings[parsed] = []mobynet.PortBinding{{HostIP: netip.MustParseAddr("127.0.0.1")}}
	}
	user := ""
	if sc := w.pod.SecurityContext; sc.RunAsUser != nil {
		user = strconv.Itoa(*sc.RunAsUser)
		if sc.RunAsGroup != nil {
			user += ":" + strconv.Itoa(*sc.RunAsGroup)
		}
	}
	return []testcontainers.ContainerCustomizer{
		testcontainers.WithCmd(c.Args...),
		testcontainers.WithEnv(env),
		testcontainers.WithExposedPorts(ports...),
		network.WithNetwork(w.aliases, nw),
		testcontainers.WithConfigModifier(func(cfg *container.Config) {
			// The kubelet's /etc/hosts resolves the pod's name to its
			// address; Docker's does the same for the host name.
			cfg.Hostname = w.podName()
			if len(c.Command) > 0 {
				cfg.Entrypoint = c.Command
			}
			if user != "" {
				cfg.User = user
			}
		}),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.ReadonlyRootfs = c.SecurityContext.ReadOnlyRootFilesystem
			hc.Tmpfs = tmpfs
			hc.CapDrop = []string{"ALL"}
			hc.SecurityOpt = []string{"no-new-privileges"}
			hc.Memory = memory
			hc.PortBindings = bindings
		}),
	}
}

// containerLogs returns a container's output, for failure messages.
func containerLogs(t *testing.T, c *testcontainers.DockerContainer) string {
	t.Helper()
	r, err := c.Logs(t.Context())
	if err != nil {
		return err.Error()
	}
	b, _ := io.ReadAll(r)
	return string(b)
}

// publishedAddr returns the 127.0.0.1 address that c's port (a number or
// a container port's name) is published on.
func publishedAddr(t *testing.T, ctr *testcontainers.DockerContainer, c k8sContainer, portRef string) string {
	t.Helper()
	port, err := strconv.Atoi(portRef)
	for _, cp := range c.Ports {
		if cp.Name == portRef {
			port, err = cp.ContainerPort, nil
		}
	}
	if err != nil {
		t.Fatalf("%s: probe port %q: no such port", c.Name, portRef)
	}
	mapped, err := ctr.MappedPort(t.Context(), strconv.Itoa(port)+"/tcp")
	if err != nil {
		t.Fatalf("%s: port %d not published: %v", c.Name, port, err)
	}
	return "127.0.0.1:" + mapped.Port()
}

// probeURL returns the URL of an HTTP probe of c on its published port.
func probeURL(t *testing.T, ctr *testcontainers.DockerContainer, c k8sContainer, p *k8sProbe) string {
	t.Helper()
	if p.HTTPGet == nil {
		t.Fatalf("%s: a probe that is not httpGet", c.Name)
	}
	return "http://" + publishedAddr(t, ctr, c, p.HTTPGet.Port) + p.HTTPGet.Path
}

// checkProbe waits until a probe of the manifest succeeds as the
// kubelet's would: an httpGet answered 200, a tcpSocket accepting.
func checkProbe(t *testing.T, ctr *testcontainers.DockerContainer, c k8sContainer, p *k8sProbe) {
	t.Helper()
	const timeout = 2 * time.Minute
	switch {
	case p.HTTPGet != nil:
		answers200(t, ctr, probeURL(t, ctr, c, p), timeout)
	case p.TCPSocket != nil:
		addr := publishedAddr(t, ctr, c, p.TCPSocket.Port)
		var err error
		if !poll.WaitEvery(timeout, 250*time.Millisecond, func() bool {
			var conn net.Conn
			if conn, err = net.DialTimeout("tcp", addr, 2*time.Second); err == nil {
				conn.Close()
			}
			return err == nil
		}) {
			t.Fatalf("%s: tcpSocket %s: not accepting after %v: %v\n%s", c.Name, addr, timeout, err, containerLogs(t, ctr))
		}
	default:
		t.Fatalf("%s: a probe that is neither httpGet nor tcpSocket", c.Name)
	}
}

// answers200 polls url until it answers 200, or fails t after timeout.
func answers200(t *testing.T, ctr *testcontainers.DockerContainer, url string, timeout time.Duration) {
	t.Helper()
	client := &http.Client{Timeout: 2 * time.Second}
	last := "no answer"
	ok := poll.WaitEvery(timeout, 250*time.Millisecond, func() bool {
		resp, err := client.Get(url)
		if err != nil {
			last = err.Error()
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		last = fmt.Sprintf("%d %s", resp.StatusCode, b)
		return resp.StatusCode == http.StatusOK
	})
	if !ok {
		t.Fatalf("GET %s: not 200 after %v (last: %s)\n%s", url, timeout, last, containerLogs(t, ctr))
	}
}

// startK8sBroker starts the development broker on its own network, as the
// Kafka the manifests' pods reach by name: it advertises the address its
// host name resolves to, which every container of the network reaches.
func startK8sBroker(t *testing.T) (brokers string, nw *testcontainers.DockerNetwork) {
	t.Helper()
	nw = newK8sNetwork(t)
	const host = "kafka"
	runOnNetwork(t, kretrieveImage,
		testcontainers.WithCmd("broker", "--listen", host+":9092"),
		network.WithNetwork(nil, nw),
		testcontainers.WithConfigModifier(func(cfg *container.Config) { cfg.Hostname = host }),
		testcontainers.WithWaitStrategy(wait.ForLog("broker listening").WithStartupTimeout(30*time.Second)),
	)
	return host + ":9092", nw
}

// runK8sJob runs each container of a Job and fails t unless it exits 0.
func runK8sJob(t *testing.T, m k8sManifests, w workload, brokers string, nw *testcontainers.DockerNetwork) {
	t.Helper()
	for _, c := range append(slices.Clone(w.pod.InitContainers), w.pod.Containers...) {
		env := m.containerEnv(t, w, c, brokers)
		opts := append(containerOpts(t, w, c, env, nw),
			testcontainers.WithWaitStrategy(wait.ForExit().WithExitTimeout(3*time.Minute)))
		start := time.Now()
		ctr := runOnNetwork(t, c.Image, opts...)
		st, err := ctr.State(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		logs := containerLogs(t, ctr)
		if st.ExitCode != 0 {
			t.Fatalf("%s/%s %q exited %d:\n%s", w.name, c.Name, c.Args, st.ExitCode, logs)
		}
		t.Logf("%s/%s %q exited 0 in %v: %s", w.name, c.Name, c.Args, time.Since(start).Round(time.Millisecond), summaryLine(logs))
	}
}

// summaryLine is the line of a command's output that is not a JSON log
// record (ingest's summary), or the last line.
func summaryLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for _, l := range lines {
		if !strings.HasPrefix(l, "{") {
			return l
		}
	}
	return lines[len(lines)-1]
}

// runOnNetwork starts a container of the image under test, in place of
// the manifests' kretrieve image img, with cleanup registered first.
func runOnNetwork(t *testing.T, img string, opts ...testcontainers.ContainerCustomizer) *testcontainers.DockerContainer {
	t.Helper()
	if repo, _, _ := strings.Cut(img, ":"); repo != "kretrieve/kretrieve" && img != kretrieveImage {
		t.Fatalf("image %q: this test runs the kretrieve image only", img)
	}
	c, err := testcontainers.Run(t.Context(), kretrieveImage, opts...)
	testcontainers.CleanupContainer(t, c)
	if err != nil {
		t.Fatalf("start %s (for %s): %v", kretrieveImage, img, err)
	}
	return c
}

// startK8sDeployment starts a Deployment's containers (init containers
// first, each to exit 0) and waits until every probe of the manifest
// answers 200 on its published port.
func startK8sDeployment(t *testing.T, m k8sManifests, w workload, brokers string, nw *testcontainers.DockerNetwork) []*testcontainers.DockerContainer {
	t.Helper()
	if len(w.pod.InitContainers) > 0 {
		init := w
		init.pod.Containers, init.pod.InitContainers = w.pod.InitContainers, nil
		runK8sJob(t, m, init, brokers, nw)
	}
	var out []*testcontainers.DockerContainer
	for _, c := range w.pod.Containers {
		start := time.Now()
		env := m.containerEnv(t, w, c, brokers)
		ctr := runOnNetwork(t, c.Image, containerOpts(t, w, c, env, nw)...)
		probes := 0
		for _, p := range []*k8sProbe{c.StartupProbe, c.ReadinessProbe, c.LivenessProbe} {
			if p != nil {
				checkProbe(t, ctr, c, p)
				probes++
			}
		}
		if probes == 0 {
			t.Errorf("%s/%s: no probe", w.name, c.Name)
		}
		t.Logf("%s/%s %q: %d probes succeed after %v", w.name, c.Name, c.Args, probes, time.Since(start).Round(time.Millisecond))
		out = append(out, ctr)
	}
	return out
}

// TestManifestsRunOnTheImage runs every container of deploy/k8s on the
// built image as its pod would (TestManifestsRunOnTheImage's helpers read
// command, args, environment with configmap.yaml's values, user,
// read-only root, emptyDirs and memory limit from the YAML; Kafka's
// address is the test broker's), so the manifests cannot drift from the
// binary: each Job's container exits 0 (the ingest Job publishes the
// image's demo corpus), each Deployment's container answers every probe
// path of the manifest with 200, the documented `kretrieve lag` runs in
// every running container and exits 0, and each container stops with
// status 0 within its terminationGracePeriodSeconds.
func TestManifestsRunOnTheImage(t *testing.T) {
	brokers, nw := startK8sBroker(t)
	runManifests(t, readK8sManifests(t, k8sDir), brokers, nw)
}

// TestDevOverlayRunsOnTheImage runs deploy/overlays/dev the same way, its
// own broker included and nothing substituted: every container reaches
// the broker by its Service's cluster name (a network alias here).
func TestDevOverlayRunsOnTheImage(t *testing.T) {
	runManifests(t, readK8sManifests(t, "../deploy/overlays/dev"), "", newK8sNetwork(t))
}

// newK8sNetwork creates a Docker network, the cluster network of one
// test, removed after it (its removal registered before the error check).
func newK8sNetwork(t *testing.T) *testcontainers.DockerNetwork {
	t.Helper()
	nw, err := network.New(t.Context())
	testcontainers.CleanupNetwork(t, nw)
	if err != nil {
		t.Fatal(err)
	}
	return nw
}

// runManifests runs the workloads of m on nw: Deployments running the
// broker first, then Jobs, then the other Deployments; then it checks
// `kretrieve lag` in every running container and a search through the
// gateway, and stops every container.
func runManifests(t *testing.T, m k8sManifests, brokers string, nw *testcontainers.DockerNetwork) {
	start := time.Now()
	isBroker := func(w workload) bool {
		return w.kind == "Deployment" && slices.ContainsFunc(w.pod.Containers, func(c k8sContainer) bool {
			return len(c.Args) > 0 && c.Args[0] == "broker"
		})
	}
	running := map[string][]*testcontainers.DockerContainer{}
	var order []workload
	for _, phase := range []func(workload) bool{
		isBroker,
		func(w workload) bool { return w.kind == "Job" },
		func(w workload) bool { return w.kind == "Deployment" && !isBroker(w) },
	} {
		for _, w := range m.workloads {
			switch {
			case !phase(w):
			case w.kind == "Job":
				runK8sJob(t, m, w, brokers, nw)
			default:
				running[w.name] = startK8sDeployment(t, m, w, brokers, nw)
				order = append(order, w)
			}
		}
	}
	for _, w := range order {
		if isBroker(w) {
			continue // it is the Kafka `kretrieve lag` asks
		}
		for i, ctr := range running[w.name] {
			checkLagExec(t, w, ctr)
			if c := w.pod.Containers[i]; len(c.Args) > 0 && c.Args[0] == "gateway" {
				checkSearch(t, ctr, c)
			}
		}
	}
	// The broker last: the others' shutdown still talks to it.
	for _, w := range slices.Backward(order) {
		for _, ctr := range running[w.name] {
			checkGracefulStop(t, w, ctr)
		}
	}
	t.Logf("%d workloads in %v", len(m.workloads), time.Since(start).Round(time.Millisecond))
}

// checkLagExec runs `kretrieve lag` in a running container, as
// `kubectl exec deploy/NAME -- kretrieve lag` does (the binary found on
// PATH, the pod's environment), and fails t unless it exits 0.
func checkLagExec(t *testing.T, w workload, ctr *testcontainers.DockerContainer) {
	t.Helper()
	code, out, err := ctr.Exec(t.Context(), []string{"kretrieve", "lag", "--window", "0"}, tcexec.Multiplexed())
	if err != nil {
		t.Fatalf("%s: exec kretrieve lag: %v", w.name, err)
	}
	b, _ := io.ReadAll(out)
	if code != 0 {
		t.Errorf("%s: kretrieve lag exited %d:\n%s", w.name, code, b)
		return
	}
	t.Logf("%s: kretrieve lag exited 0 (%d lines)", w.name, strings.Count(string(b), "\n"))
}

// checkGracefulStop stops a container with SIGTERM, as the kubelet does,
// and fails t unless it exits 0 within the pod's grace period.
func checkGracefulStop(t *testing.T, w workload, ctr *testcontainers.DockerContainer) {
	t.Helper()
	grace := 30 * time.Second
	if g := w.pod.TerminationGracePeriodSeconds; g != nil {
		grace = time.Duration(*g) * time.Second
	}
	start := time.Now()
	if err := ctr.Stop(t.Context(), &grace); err != nil {
		t.Fatalf("%s: stop: %v", w.name, err)
	}
	st, err := ctr.State(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); st.ExitCode != 0 || took >= grace {
		t.Errorf("%s: exited %d after %v on SIGTERM (grace %v):\n%s", w.name, st.ExitCode, took.Round(time.Millisecond), grace, containerLogs(t, ctr))
		return
	}
	t.Logf("%s: exited 0 in %v after SIGTERM", w.name, time.Since(start).Round(time.Millisecond))
}

// checkSearch searches the demo corpus through a gateway container's
// published port: the pipeline the manifests make answers from the
// documents the ingest Job published.
func checkSearch(t *testing.T, ctr *testcontainers.DockerContainer, c k8sContainer) {
	t.Helper()
	url := strings.TrimSuffix(probeURL(t, ctr, c, c.ReadinessProbe), c.ReadinessProbe.HTTPGet.Path)
	r := gatewaySearch(t, url, queries[0])
	if r.status != http.StatusOK || len(r.Documents) == 0 {
		t.Fatalf("search %q through the gateway: %d, %d documents (%s)", queries[0], r.status, len(r.Documents), r.Error)
	}
	t.Logf("search %q through the gateway: %d documents, first %s", queries[0], len(r.Documents), r.Documents[0].ID)
}

// TestKustomizeOverlaysRender renders deploy/k8s and its secured overlay
// with kustomize's library, as `kubectl apply -k` would (no cluster), and
// checks what the overlay promises: every workload's own Secret required,
// TLS to the brokers, the plaintext KEDA Secret gone while the kafka
// triggers still authenticate through the TriggerAuthentication, and
// nothing else dropped.
func TestKustomizeOverlaysRender(t *testing.T) {
	base := renderK8s(t, k8sDir)
	secured := renderK8s(t, "../deploy/overlays/secured")
	key := func(o k8sObject) string { return o.Kind + "/" + o.Metadata.Name }
	got := map[string]k8sObject{}
	for _, o := range secured {
		got[key(o)] = o
	}
	for _, o := range base {
		if _, ok := got[key(o)]; !ok && key(o) != "Secret/kretrieve-keda-kafka" {
			t.Errorf("the secured overlay drops %s", key(o))
		}
	}
	if _, ok := got["Secret/kretrieve-keda-kafka"]; ok {
		t.Error("the secured overlay keeps the plaintext KEDA Secret")
	}
	if v := got["ConfigMap/kretrieve"].Data["KRETRIEVE_TLS"]; v != "true" {
		t.Errorf("ConfigMap kretrieve: KRETRIEVE_TLS = %q, want true", v)
	}
	var workloads, triggers int
	for _, o := range secured {
		switch o.Kind {
		case "Deployment", "Job":
			workloads++
			for _, c := range o.Spec.Template.Spec.Containers {
				var own int
				for _, from := range c.EnvFrom {
					if r := from.SecretRef; r != nil && r.Name == o.Metadata.Name && !r.Optional {
						own++
					}
				}
				if own != 1 {
					t.Errorf("%s/%s: its own Secret %s is not required", key(o), c.Name, o.Metadata.Name)
				}
			}
		case "ScaledObject":
			for _, tr := range o.Spec.Triggers {
				triggers++
				if tr.AuthenticationRef == nil {
					t.Errorf("%s: a %s trigger without authenticationRef", key(o), tr.Type)
				} else if _, ok := got["TriggerAuthentication/"+tr.AuthenticationRef.Name]; !ok {
					t.Errorf("%s: authenticationRef %s: no such TriggerAuthentication", key(o), tr.AuthenticationRef.Name)
				}
			}
		}
	}
	if workloads == 0 || triggers == 0 {
		t.Fatalf("%d workloads, %d triggers rendered", workloads, triggers)
	}
	t.Logf("base %d objects, secured %d: %d workloads, %d kafka triggers", len(base), len(secured), workloads, triggers)
}
