// SPDX-License-Identifier: Apache-2.0

package kafkaclient_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/internal/testutil/tlstest"
	"github.com/kretrieve/kretrieve/kafkaclient"
)

const password = "s3cret-Pa55word" // must never appear in output

func TestValidateSecurity(t *testing.T) {
	ca := tlstest.NewCA(t, "kretrieve-test")
	client := ca.Client("c")
	dir := t.TempDir()
	passFile := filepath.Join(dir, "password")
	emptyFile := filepath.Join(dir, "empty")
	notPEM := filepath.Join(dir, "not.pem")
	for f, content := range map[string]string{passFile: password + "\n", emptyFile: "\n", notPEM: "hello"} {
		if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	scram := func(edit func(*kafkaclient.SASLConfig)) kafkaclient.SASLConfig {
		s := kafkaclient.SASLConfig{Mechanism: "SCRAM-SHA-512", Username: "alice", Password: kafkaclient.NewSecret(password)}
		edit(&s)
		return s
	}
	tests := []struct {
		name string
		tls  kafkaclient.TLSConfig
		sasl kafkaclient.SASLConfig
		want string // "" = valid
	}{
		{"nothing", kafkaclient.TLSConfig{}, kafkaclient.SASLConfig{}, ""},
		{"scram without tls", kafkaclient.TLSConfig{}, scram(func(*kafkaclient.SASLConfig) {}), ""},
		{"scram password file", kafkaclient.TLSConfig{}, scram(func(s *kafkaclient.SASLConfig) { s.Password, s.PasswordFile = kafkaclient.Secret{}, passFile }), ""},
		{"lower-case mechanism", kafkaclient.TLSConfig{Enabled: true}, scram(func(s *kafkaclient.SASLConfig) { s.Mechanism = "scram-sha-256" }), ""},
		{"plain with tls", kafkaclient.TLSConfig{CAFile: ca.CertFile}, scram(func(s *kafkaclient.SASLConfig) { s.Mechanism = "PLAIN" }), ""},
		{"plain without tls", kafkaclient.TLSConfig{}, scram(func(s *kafkaclient.SASLConfig) { s.Mechanism = "PLAIN" }), "PLAIN without TLS"},
		{"plain without tls allowed", kafkaclient.TLSConfig{}, scram(func(s *kafkaclient.SASLConfig) { s.Mechanism, s.AllowPlainWithoutTLS = "PLAIN", true }), ""},
		{"two mechanisms", kafkaclient.TLSConfig{}, scram(func(s *kafkaclient.SASLConfig) { s.Mechanism = "PLAIN,SCRAM-SHA-256" }), "exactly one mechanism"},
		{"unknown mechanism", kafkaclient.TLSConfig{}, scram(func(s *kafkaclient.SASLConfig) { s.Mechanism = "GSSAPI" }), `"GSSAPI" is not one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512`},
		{"no user", kafkaclient.TLSConfig{}, scram(func(s *kafkaclient.SASLConfig) { s.Username = "" }), "sasl-username: required"},
		{"no password", kafkaclient.TLSConfig{}, scram(func(s *kafkaclient.SASLConfig) { s.Password = kafkaclient.Secret{} }), "sasl-password or sasl-password-file: required"},
		{"password twice", kafkaclient.TLSConfig{}, scram(func(s *kafkaclient.SASLConfig) { s.PasswordFile = passFile }), "give one, not both"},
		{"missing password file", kafkaclient.TLSConfig{}, scram(func(s *kafkaclient.SASLConfig) {
			s.Password, s.PasswordFile = kafkaclient.Secret{}, filepath.Join(dir, "nope")
		}), "sasl-password-file"},
		{"empty password file", kafkaclient.TLSConfig{}, scram(func(s *kafkaclient.SASLConfig) { s.Password, s.PasswordFile = kafkaclient.Secret{}, emptyFile }), "empty"},
		{"user without mechanism", kafkaclient.TLSConfig{}, kafkaclient.SASLConfig{Username: "alice", Password: kafkaclient.NewSecret(password)}, "sasl-mechanism: required"},
		{"cert without key", kafkaclient.TLSConfig{CertFile: client.CertFile}, kafkaclient.SASLConfig{}, "give both or neither"},
		{"key for another cert", kafkaclient.TLSConfig{CertFile: client.CertFile, KeyFile: ca.Client("d").KeyFile}, kafkaclient.SASLConfig{}, "tls-cert-file and tls-key-file"},
		{"ca not PEM", kafkaclient.TLSConfig{CAFile: notPEM}, kafkaclient.SASLConfig{}, "no PEM certificate"},
		{"ca missing", kafkaclient.TLSConfig{CAFile: filepath.Join(dir, "nope.pem")}, kafkaclient.SASLConfig{}, "tls-ca-file"},
		{"mtls", kafkaclient.TLSConfig{CAFile: ca.CertFile, CertFile: client.CertFile, KeyFile: client.KeyFile}, kafkaclient.SASLConfig{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := kafkaclient.Config{TLS: tt.tls, SASL: tt.sasl}.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			case err != nil && strings.Contains(err.Error(), password):
				t.Fatalf("error shows the password: %v", err)
			}
		})
	}
}

// TestSecretNeverPrinted prints a configuration every way a program might.
func TestSecretNeverPrinted(t *testing.T) {
	c := kafkaclient.Config{
		Brokers: []string{"k:9092"},
		SASL:    kafkaclient.SASLConfig{Mechanism: "PLAIN", Username: "alice", Password: kafkaclient.NewSecret(password)},
	}
	var out []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%10.3s"} {
		out = append(out, fmt.Sprintf(verb, c), fmt.Sprintf(verb, c.SASL), fmt.Sprintf(verb, c.SASL.Password), fmt.Sprintf(verb, &c))
	}
	out = append(out, fmt.Sprint(c), fmt.Sprintln(c.SASL.Password), c.SASL.Password.String())
	// Inside unexported fields fmt cannot call Secret's methods.
	type wrapper struct {
		kafka kafkaclient.Config
		sasl  *kafkaclient.SASLConfig
	}
	w := wrapper{c, &c.SASL}
	out = append(out, fmt.Sprintf("%v", w), fmt.Sprintf("%+v", w), fmt.Sprintf("%#v", w), fmt.Sprintf("%v", []wrapper{w}))
	var logs bytes.Buffer
	for _, h := range []slog.Handler{slog.NewTextHandler(&logs, nil), slog.NewJSONHandler(&logs, nil)} {
		l := slog.New(h)
		l.Info("config", "kafka", c, "password", c.SASL.Password, "sasl", c.SASL)
		l.Info("group", slog.Group("sasl", "password", c.SASL.Password))
	}
	out = append(out, logs.String())
	j, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, string(j))
	for _, s := range out {
		if strings.Contains(s, password) || strings.Contains(s, fmt.Sprintf("%x", password)) || strings.Contains(s, fmt.Sprintf("%X", password)) {
			t.Fatalf("password printed: %s", s)
		}
	}
	if !strings.Contains(string(j), "[REDACTED]") || !strings.Contains(logs.String(), "[REDACTED]") {
		t.Fatalf("redaction not shown:\n%s\n%s", j, logs.String())
	}
	if c.SASL.Password.Reveal() != password {
		t.Fatal("Reveal")
	}
}
