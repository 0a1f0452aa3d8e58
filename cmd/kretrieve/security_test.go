// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/internal/testutil/tlstest"
	"github.com/kretrieve/kretrieve/kafkaacl"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/ops/dlq"
	"github.com/kretrieve/kretrieve/pipeline"
)

// TestACLDefaultsMatchTheCode keeps kafkaacl's default topology and
// groups equal to the ones the commands use.
func TestACLDefaultsMatchTheCode(t *testing.T) {
	n := kafkaacl.DefaultNames()
	if !slices.Equal(n.Topology.Stages, (pipeline.Config{}).Topology().Stages) || n.ReplayGroup != dlq.DefaultReplayGroup {
		t.Fatalf("kafkaacl defaults %+v", n)
	}
}

const testPassword = "Pa55-w0rd-never-shown"

func TestLoadSecurityConfig(t *testing.T) {
	dir := t.TempDir()
	passFile := filepath.Join(dir, "pw")
	if err := os.WriteFile(passFile, []byte(testPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"KRETRIEVE_TLS":                "true",
		"KRETRIEVE_TLS_SERVER_NAME":    "kafka.internal",
		"KRETRIEVE_SASL_MECHANISM":     "plain",
		"KRETRIEVE_SASL_USERNAME":      "svc-retrieval",
		"KRETRIEVE_SASL_PASSWORD_FILE": passFile,
	}
	cfg, err := loadWorkerConfig("retrieval", nil, mapEnv(env), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	kc := cfg.kafkaConfig()
	if !kc.TLS.Enabled || kc.TLS.ServerName != "kafka.internal" || kc.SASL.Mechanism != "plain" || kc.SASL.Username != "svc-retrieval" || kc.SASL.PasswordFile != passFile {
		t.Fatalf("kafka config %+v", kc)
	}

	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"plain without tls", map[string]string{"KRETRIEVE_SASL_MECHANISM": "PLAIN", "KRETRIEVE_SASL_USERNAME": "u", "KRETRIEVE_SASL_PASSWORD": testPassword}, nil, "PLAIN without TLS"},
		{"two mechanisms", map[string]string{"KRETRIEVE_SASL_MECHANISM": "SCRAM-SHA-256,SCRAM-SHA-512", "KRETRIEVE_SASL_USERNAME": "u", "KRETRIEVE_SASL_PASSWORD": testPassword}, nil, "exactly one mechanism"},
		{"password flag and file", map[string]string{"KRETRIEVE_SASL_MECHANISM": "SCRAM-SHA-256", "KRETRIEVE_SASL_USERNAME": "u", "KRETRIEVE_SASL_PASSWORD_FILE": passFile}, []string{"--sasl-password", testPassword}, "not both"},
		{"no user", map[string]string{"KRETRIEVE_SASL_MECHANISM": "SCRAM-SHA-256", "KRETRIEVE_SASL_PASSWORD": testPassword}, nil, "sasl-username"},
		{"bad tls variable", map[string]string{"KRETRIEVE_TLS": "sure"}, nil, "KRETRIEVE_TLS"},
		{"missing ca", map[string]string{"KRETRIEVE_TLS_CA_FILE": filepath.Join(dir, "nope")}, nil, "tls-ca-file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadWorkerConfig("enrichment", tt.args, mapEnv(tt.env), &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
			if strings.Contains(err.Error(), testPassword) {
				t.Fatalf("error shows the password: %v", err)
			}
		})
	}
	if _, err := loadRunConfig([]string{"--sasl-mechanism", "SCRAM-SHA-256", "--sasl-username", "u", "--sasl-password-file", passFile}, mapEnv(nil), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "need --brokers") {
		t.Fatalf("run with SASL and its embedded broker: %v", err)
	}
}

func TestLoadBrokerSecurityConfig(t *testing.T) {
	ca := tlstest.NewCA(t, "test")
	srv := ca.Server("broker")
	users := filepath.Join(t.TempDir(), "users")
	if err := os.WriteFile(users, []byte("# dev users\nadmin:"+testPassword+"\n\nsvc-retrieval:r-"+testPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"KRETRIEVE_SASL_USERS": "svc-lag:l-" + testPassword, "KRETRIEVE_SASL_USERS_FILE": users}
	cfg, err := loadBrokerConfig([]string{"--superusers", "admin", "--acls", "--acl-roles", "retrieval=svc-retrieval, lag=svc-lag",
		"--listen-tls-cert-file", srv.CertFile, "--listen-tls-key-file", srv.KeyFile, "--listen-tls-client-ca-file", ca.CertFile}, mapEnv(env), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	b := cfg.broker
	if len(b.Users) != 3 || !b.EnforceACLs || b.TLSClientCAFile != ca.CertFile || len(b.Topics) != 8 || b.Topics[7] != "kretrieve.pathways" || !slices.Equal(b.CompactedTopics, []string{"retrieval.documents"}) {
		t.Fatalf("broker config %+v", b)
	}
	for _, u := range b.Users {
		want := map[string]string{"admin": "superuser", "svc-retrieval": "retrieval", "svc-lag": "lag"}[u.Name]
		switch {
		case want == "superuser" && (!u.Superuser || len(u.ACLs) != 0):
			t.Errorf("%s: %+v", u.Name, u)
		case want != "superuser" && (u.Superuser || fmt.Sprint(u.ACLs) != fmt.Sprint(mustRole(t, want).Rules)):
			t.Errorf("%s: %+v", u.Name, u)
		}
	}
	if s := fmt.Sprintf("%v %+v %#v", cfg, cfg, cfg); strings.Contains(s, testPassword) {
		t.Fatalf("broker config prints a password: %s", s)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--sasl-users", "alice"}, "entry 1: want USER:PASSWORD"},
		{[]string{"--sasl-users", "alice:" + testPassword, "--acl-roles", "admin=alice", "--acls"}, `unknown role "admin"`},
		{[]string{"--sasl-users", "alice:" + testPassword, "--acl-roles", "retrieval=bob", "--acls"}, `"bob" is not a SASL user`},
		{[]string{"--sasl-users", "alice:" + testPassword, "--acl-roles", "retrieval=alice"}, "ACLs are not enforced"},
		{[]string{"--acls"}, "needs SASL users"},
		{[]string{"--sasl-users", "alice:" + testPassword, "--superusers", "root"}, `"root" is not a SASL user`},
		{[]string{"--listen-tls-cert-file", srv.CertFile}, "give both"},
		{[]string{"--sasl-users-file", users + ".nope"}, "sasl-users-file"},
	} {
		_, err := loadBrokerConfig(tt.args, mapEnv(nil), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), testPassword) {
			t.Errorf("%q: err = %v, want it to mention %q", tt.args, err, tt.want)
		}
	}
}

func mustRole(t *testing.T, name string) kafkaacl.Role {
	t.Helper()
	r, err := kafkaacl.Lookup(name, kafkaacl.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestHelpNeverShowsSecrets: -h prints every default on stdout and
// succeeds, but does not show a password taken from a variable.
func TestHelpNeverShowsSecrets(t *testing.T) {
	env := mapEnv(map[string]string{"KRETRIEVE_SASL_PASSWORD": testPassword, "KRETRIEVE_SASL_USERS": "alice:" + testPassword, "KRETRIEVE_SASL_USERNAME": "alice"})
	for _, cmd := range []string{"retrieval", "gateway", "produce", "broker", "lag"} {
		var stdout, stderr bytes.Buffer
		err := run(t.Context(), []string{cmd, "-h"}, env, &stdout, &stderr)
		out := stdout.String() + stderr.String()
		if err != nil || !strings.Contains(stdout.String(), "KRETRIEVE_SASL_") || strings.Contains(out, testPassword) {
			t.Fatalf("%s -h (err %v):\n%s", cmd, err, out)
		}
	}
}

// secureCluster is a `kretrieve broker` speaking mutual TLS only, with SASL
// users, ACLs enforced, and one user per role holding exactly that role's
// ACLs (kafkaacl).
type secureCluster struct {
	addr    string
	ca      *tlstest.CA
	dir     string
	users   map[string]string // role -> user
	clients map[string]tlstest.Pair
}

func startSecureCluster(t *testing.T) *secureCluster {
	t.Helper()
	sc := &secureCluster{addr: freeAddr(t), ca: tlstest.NewCA(t, "kretrieve-dev"), dir: t.TempDir(), users: map[string]string{}, clients: map[string]tlstest.Pair{}}
	srv := sc.ca.Server("broker")
	lines := []string{"admin:" + sc.password("admin")}
	var roles []string
	for _, r := range kafkaacl.RoleNames() {
		user := "svc-" + r
		sc.users[r] = user
		sc.clients[r] = sc.ca.Client(user)
		lines = append(lines, user+":"+sc.password(user))
		roles = append(roles, r+"="+user)
	}
	usersFile := filepath.Join(sc.dir, "users")
	if err := os.WriteFile(usersFile, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := mapEnv(map[string]string{
		"KRETRIEVE_LISTEN":                    sc.addr,
		"KRETRIEVE_PARTITIONS":                "3",
		"KRETRIEVE_LOG_LEVEL":                 "warn",
		"KRETRIEVE_LISTEN_TLS_CERT_FILE":      srv.CertFile,
		"KRETRIEVE_LISTEN_TLS_KEY_FILE":       srv.KeyFile,
		"KRETRIEVE_LISTEN_TLS_CLIENT_CA_FILE": sc.ca.CertFile,
		"KRETRIEVE_SASL_USERS_FILE":           usersFile,
		"KRETRIEVE_SUPERUSERS":                "admin",
		"KRETRIEVE_ACLS":                      "true",
		"KRETRIEVE_ACL_ROLES":                 strings.Join(roles, ","),
	})
	startCommands(t, env, "broker")
	admin := sc.kafkaConfig("admin", sc.ca.Client("admin"), kafkaclient.MechanismSCRAMSHA512)
	var err error
	if !poll.Wait(20*time.Second, func() bool {
		err = kafkaclient.Check(t.Context(), admin, slog.New(slog.DiscardHandler), 2*time.Second)
		return err == nil
	}) {
		t.Fatalf("secure broker: %v", err)
	}
	return sc
}

// password returns user's password: derived, so tests can also get it wrong.
func (sc *secureCluster) password(user string) string { return user + "-" + testPassword }

// passwordFile writes user's password to a file and returns its name.
func (sc *secureCluster) passwordFile(t *testing.T, user string) string {
	t.Helper()
	f := filepath.Join(sc.dir, user+".password")
	if err := os.WriteFile(f, []byte(sc.password(user)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func (sc *secureCluster) kafkaConfig(user string, cert tlstest.Pair, mech string) kafkaclient.Config {
	return kafkaclient.Config{
		Brokers: []string{sc.addr},
		TLS:     kafkaclient.TLSConfig{CAFile: sc.ca.CertFile, CertFile: cert.CertFile, KeyFile: cert.KeyFile},
		SASL:    kafkaclient.SASLConfig{Mechanism: mech, Username: user, Password: kafkaclient.NewSecret(sc.password(user))},
	}
}

// env returns the variables a command of role runs with: TLS with its
// client certificate and SASL as the role's user with mech, the password
// from a file.
func (sc *secureCluster) env(t *testing.T, role, mech string, extra map[string]string) map[string]string {
	user := sc.users[role]
	env := map[string]string{
		"KRETRIEVE_BROKERS":            sc.addr,
		"KRETRIEVE_LOG_LEVEL":          "warn",
		"KRETRIEVE_TLS_CA_FILE":        sc.ca.CertFile,
		"KRETRIEVE_TLS_CERT_FILE":      sc.clients[role].CertFile,
		"KRETRIEVE_TLS_KEY_FILE":       sc.clients[role].KeyFile,
		"KRETRIEVE_SASL_MECHANISM":     mech,
		"KRETRIEVE_SASL_USERNAME":      user,
		"KRETRIEVE_SASL_PASSWORD_FILE": sc.passwordFile(t, user),
		// Workers and gateway publish pathway aggregates often enough for
		// `kretrieve pathways` to see them at once.
		"KRETRIEVE_PATHWAYS_INTERVAL": "100ms",
	}
	maps.Copy(env, extra)
	return env
}

// TestSecurePipelineWithLeastPrivilege runs the pipeline against the
// development broker with mutual TLS, SASL and ACLs: every command as its
// own user holding only its role's ACLs, each with another mechanism, and
// the gateway serving HTTPS with client certificates. A search answers;
// roles are refused outside their ACLs; a wrong password fails at once.
func TestSecurePipelineWithLeastPrivilege(t *testing.T) {
	sc := startSecureCluster(t)
	index := testIndex(t)
	httpAddr := freeAddr(t)
	gwCert := sc.ca.Server("gateway")
	startCommands(t, mapEnv(sc.env(t, "retrieval", kafkaclient.MechanismSCRAMSHA512, map[string]string{"KRETRIEVE_INDEX": index})), "retrieval")
	startCommands(t, mapEnv(sc.env(t, "enrichment", kafkaclient.MechanismSCRAMSHA256, map[string]string{"KRETRIEVE_INDEX": index})), "enrichment")
	startCommands(t, mapEnv(sc.env(t, "gateway", kafkaclient.MechanismPLAIN, map[string]string{
		"KRETRIEVE_HTTP_LISTEN":             httpAddr,
		"KRETRIEVE_HTTP_TLS_CERT_FILE":      gwCert.CertFile,
		"KRETRIEVE_HTTP_TLS_KEY_FILE":       gwCert.KeyFile,
		"KRETRIEVE_HTTP_TLS_CLIENT_CA_FILE": sc.ca.CertFile,
	})), "gateway")

	// The gateway over HTTPS with a client certificate.
	httpClient := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: sc.ca.Pool, Certificates: []tls.Certificate{sc.ca.Client("http-client").Cert},
	}}}
	base := "https://" + httpAddr
	var readyErr error
	if !poll.Wait(30*time.Second, func() bool {
		resp, err := httpClient.Get(base + "/readyz")
		if readyErr = err; err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}) {
		t.Fatalf("gateway not ready: %v", readyErr)
	}
	resp, err := httpClient.Post(base+"/v1/search", "application/json", strings.NewReader(`{"query":"parse the query string","top_k":2}`))
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Documents []struct{ ID string } `json:"documents"`
	}
	err = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || len(body.Documents) == 0 || body.Documents[0].ID != "url" {
		t.Fatalf("search over the secure pipeline: status %d body %+v err %v", resp.StatusCode, body, err)
	}
	if _, err := (&http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: sc.ca.Pool}}}).Get(base + "/healthz"); err == nil {
		t.Fatal("gateway answered a client without a certificate")
	}

	// The other roles' commands work within their ACLs.
	var stdout, stderr bytes.Buffer
	runAs := func(role, mech string, args ...string) error {
		stdout.Reset()
		stderr.Reset()
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		return run(ctx, args, mapEnv(sc.env(t, role, mech, nil)), &stdout, &stderr)
	}
	if err := runAs("producer", kafkaclient.MechanismSCRAMSHA256, "produce", "--json", "gzip"); err != nil || !strings.Contains(stdout.String(), "request_id") {
		t.Fatalf("produce as producer: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	if err := runAs("lag", kafkaclient.MechanismSCRAMSHA512, "lag", "--json"); err != nil || !strings.Contains(stdout.String(), `"group":"retrieval"`) {
		t.Fatalf("lag as lag: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	if err := runAs("dlq", kafkaclient.MechanismSCRAMSHA512, "dlq", "list"); err != nil {
		t.Fatalf("dlq list as dlq: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	if err := runAs("dlq", kafkaclient.MechanismSCRAMSHA256, "dlq", "replay"); err != nil || !strings.Contains(stdout.String(), "replayed 0") {
		t.Fatalf("dlq replay as dlq: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	// The search's pathway, published by every process under its role's
	// ACLs, read with the pathways role's.
	if !poll.Wait(30*time.Second, func() bool {
		err := runAs("pathways", kafkaclient.MechanismSCRAMSHA512, "pathways", "--once", "--json")
		var rep pathwaysReport
		if err == nil {
			err = json.Unmarshal(stdout.Bytes(), &rep)
		}
		if err != nil || len(rep.Errors) > 0 || slices.ContainsFunc(rep.Stages, func(s pathwayStage) bool { return s.Error != "" }) {
			t.Fatalf("pathways as pathways: %v\n%s%s", err, stdout.String(), stderr.String())
		}
		rows, ok := mainPathway(rep)
		return ok && rows[len(rows)-1].Total == 1
	}) {
		t.Fatalf("pathways as pathways: the search's pathway is not complete:\n%s", stdout.String())
	}
	// ... and are refused outside them: the producer role may not read results.
	if err := runAs("producer", kafkaclient.MechanismSCRAMSHA256, "produce", "--wait", "gzip"); err == nil || !strings.Contains(err.Error(), "TOPIC_AUTHORIZATION_FAILED") {
		t.Fatalf("produce --wait as producer: %v", err)
	}
	refusals := []struct {
		role, what string
		try        func(context.Context, *kgo.Client) error
		want       error
	}{
		{"enrichment", "read retrieval.requests", func(ctx context.Context, cl *kgo.Client) error {
			cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{"retrieval.requests": {0: kgo.NewOffset().AtStart()}})
			return cl.PollFetches(ctx).Err0()
		}, kerr.TopicAuthorizationFailed},
		{"retrieval", "write retrieval.results", func(ctx context.Context, cl *kgo.Client) error {
			return cl.ProduceSync(ctx, &kgo.Record{Topic: "retrieval.results", Value: []byte("{}")}).FirstErr()
		}, kerr.TopicAuthorizationFailed},
		{"gateway", "join group retrieval", func(ctx context.Context, cl *kgo.Client) error {
			g, err := kgo.NewClient(append(kafkaclient.Options(sc.kafkaConfig(sc.users["gateway"], sc.clients["gateway"], kafkaclient.MechanismPLAIN), nil, nil),
				kgo.ConsumerGroup("retrieval"), kgo.ConsumeTopics("retrieval.results"))...)
			if err != nil {
				return err
			}
			defer g.Close()
			return g.PollFetches(ctx).Err0()
		}, kerr.GroupAuthorizationFailed},
	}
	for _, r := range refusals {
		cl, err := kgo.NewClient(kafkaclient.Options(sc.kafkaConfig(sc.users[r.role], sc.clients[r.role], kafkaclient.MechanismSCRAMSHA256), nil, nil)...)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		err = r.try(ctx, cl)
		cancel()
		cl.Close()
		if !errors.Is(err, r.want) {
			t.Errorf("%s may %s: err %v, want %v", r.role, r.what, err, r.want)
		}
	}

	// A wrong password fails at start-up within seconds, naming the
	// mechanism and the user but never a password.
	env := sc.env(t, "retrieval", kafkaclient.MechanismSCRAMSHA512, map[string]string{"KRETRIEVE_INDEX": index, "KRETRIEVE_LOG_LEVEL": "debug"})
	delete(env, "KRETRIEVE_SASL_PASSWORD_FILE")
	env["KRETRIEVE_SASL_PASSWORD"] = "wrong-" + testPassword
	start := time.Now()
	stderr.Reset()
	err = run(t.Context(), []string{"retrieval"}, mapEnv(env), &stdout, &stderr)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("wrong password took %s to fail", took)
	}
	if !errors.Is(err, kafkaclient.ErrAuthentication) || !strings.Contains(err.Error(), "SCRAM-SHA-512") || !strings.Contains(err.Error(), `"svc-retrieval"`) {
		t.Fatalf("wrong password: %v", err)
	}
	if out := err.Error() + stderr.String(); strings.Contains(out, testPassword) {
		t.Fatalf("a password was printed:\n%s", out)
	}
	t.Logf("wrong password, after %s: %v", time.Since(start).Round(time.Millisecond), err)
}
