// SPDX-License-Identifier: Apache-2.0

package kafkaclient_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/broker"
	"github.com/kretrieve/kretrieve/internal/testutil/tlstest"
	"github.com/kretrieve/kretrieve/kafkaclient"
)

// secureBroker starts a broker speaking TLS (server certificate from ca) with
// SASL user "alice"; with clientCA, it requires client certificates.
func secureBroker(t *testing.T, ca *tlstest.CA, mtls bool) *broker.Broker {
	t.Helper()
	srv := ca.Server("broker")
	cfg := broker.Config{
		Listen:      "127.0.0.1:0",
		TLSCertFile: srv.CertFile,
		TLSKeyFile:  srv.KeyFile,
		Users:       []broker.User{{Name: "alice", Password: kafkaclient.NewSecret(password)}},
	}
	if mtls {
		cfg.TLSClientCAFile = ca.CertFile
	}
	b, err := broker.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

func TestCheck(t *testing.T) {
	ca := tlstest.NewCA(t, "kretrieve-test")
	other := tlstest.NewCA(t, "other")
	b := secureBroker(t, ca, false)
	good := func(mech string) kafkaclient.Config {
		return kafkaclient.Config{
			Brokers: []string{b.Addr()},
			TLS:     kafkaclient.TLSConfig{CAFile: ca.CertFile},
			SASL:    kafkaclient.SASLConfig{Mechanism: mech, Username: "alice", Password: kafkaclient.NewSecret(password)},
		}
	}
	for _, mech := range kafkaclient.Mechanisms {
		t.Run("right credentials "+mech, func(t *testing.T) {
			if err := kafkaclient.Check(t.Context(), good(mech), nil, 10*time.Second); err != nil {
				t.Fatal(err)
			}
		})
		t.Run("wrong password "+mech, func(t *testing.T) {
			c := good(mech)
			c.SASL.Password = kafkaclient.NewSecret("wrong-" + password)
			start := time.Now()
			err := kafkaclient.Check(t.Context(), c, nil, 20*time.Second)
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %s: not fast", took)
			}
			if !errors.Is(err, kafkaclient.ErrAuthentication) || !strings.Contains(err.Error(), mech) || !strings.Contains(err.Error(), `"alice"`) {
				t.Fatalf("err = %v", err)
			}
			if strings.Contains(err.Error(), password) {
				t.Fatalf("error shows the password: %v", err)
			}
			t.Log(err)
		})
	}
	tests := []struct {
		name string
		edit func(*kafkaclient.Config)
		want string
	}{
		{"unknown user", func(c *kafkaclient.Config) { c.SASL.Username = "mallory" }, "authentication"},
		{"untrusted broker certificate", func(c *kafkaclient.Config) { c.TLS.CAFile = other.CertFile }, "TLS handshake failed"},
		{"wrong server name", func(c *kafkaclient.Config) { c.TLS.ServerName = "kafka.example.com" }, "TLS handshake failed"},
		{"no TLS", func(c *kafkaclient.Config) {
			c.TLS = kafkaclient.TLSConfig{}
			c.SASL.Mechanism = kafkaclient.MechanismSCRAMSHA256
		}, "TLS"},
		{"no SASL", func(c *kafkaclient.Config) { c.SASL = kafkaclient.SASLConfig{} }, "SASL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := good(kafkaclient.MechanismSCRAMSHA512)
			tt.edit(&c)
			start := time.Now()
			err := kafkaclient.Check(t.Context(), c, nil, 20*time.Second)
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %s: not fast", took)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || errors.Is(err, kafkaclient.ErrUnreachable) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
			if strings.Contains(err.Error(), password) {
				t.Fatalf("error shows the password: %v", err)
			}
			t.Log(err)
		})
	}
}

func TestCheckMutualTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "kretrieve-test")
	b := secureBroker(t, ca, true)
	client := ca.Client("retrieval")
	c := kafkaclient.Config{
		Brokers: []string{b.Addr()},
		TLS:     kafkaclient.TLSConfig{CAFile: ca.CertFile, CertFile: client.CertFile, KeyFile: client.KeyFile},
		SASL:    kafkaclient.SASLConfig{Mechanism: "scram-sha-256", Username: "alice", Password: kafkaclient.NewSecret(password)},
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := kafkaclient.Check(t.Context(), c, nil, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	c.TLS.CertFile, c.TLS.KeyFile = "", ""
	err := kafkaclient.Check(t.Context(), c, nil, 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "TLS") {
		t.Fatalf("without a client certificate: %v", err)
	}
	t.Log(err)
}

func TestCheckUnreachable(t *testing.T) {
	b, err := broker.Start(broker.Config{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	addr := b.Addr()
	b.Close()
	start := time.Now()
	err = kafkaclient.Check(t.Context(), kafkaclient.Config{Brokers: []string{addr}}, nil, time.Second)
	if !errors.Is(err, kafkaclient.ErrUnreachable) || time.Since(start) > 5*time.Second {
		t.Fatalf("err = %v after %s", err, time.Since(start))
	}
}
