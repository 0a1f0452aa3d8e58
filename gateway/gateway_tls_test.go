// SPDX-License-Identifier: Apache-2.0

package gateway_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/gateway"
	"github.com/kretrieve/kretrieve/internal/testutil/tlstest"
)

// serveTLS serves a gateway (health and readiness only: no Kafka client)
// with cfg's TLS settings on 127.0.0.1 and returns its https base URL.
func serveTLS(t *testing.T, cfg gateway.Config) string {
	t.Helper()
	g, err := gateway.New(cfg, nil, func(context.Context) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	tc, err := cfg.ServerTLSConfig()
	if err != nil || tc == nil {
		t.Fatalf("tls config %v, %v", tc, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: g, TLSConfig: tc, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() {
		_ = srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	})
	return "https://" + ln.Addr().String()
}

func httpsClient(tc *tls.Config) *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: tc, ForceAttemptHTTP2: true}}
}

func TestGatewayServesTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "gateway-test")
	srv := ca.Server("gateway")
	url := serveTLS(t, gateway.Config{TLSCertFile: srv.CertFile, TLSKeyFile: srv.KeyFile})

	resp, err := httpsClient(&tls.Config{RootCAs: ca.Pool}).Get(url + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.TLS == nil || resp.ProtoMajor != 2 || !strings.Contains(string(body), "ready") {
		t.Fatalf("status %d proto %s tls %v body %s", resp.StatusCode, resp.Proto, resp.TLS != nil, body)
	}
	// A client that does not trust the CA, and plain HTTP, are refused.
	if _, err := httpsClient(&tls.Config{}).Get(url + "/healthz"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("untrusted: %v", err)
	}
	resp, err = http.Get(strings.Replace(url, "https://", "http://", 1) + "/healthz")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("plain HTTP answered %d", resp.StatusCode)
		}
	}
}

func TestGatewayServesMutualTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "gateway-test")
	srv := ca.Server("gateway")
	url := serveTLS(t, gateway.Config{TLSCertFile: srv.CertFile, TLSKeyFile: srv.KeyFile, TLSClientCAFile: ca.CertFile})

	client := ca.Client("load-balancer")
	resp, err := httpsClient(&tls.Config{RootCAs: ca.Pool, Certificates: []tls.Certificate{client.Cert}}).Get(url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	stranger := tlstest.NewCA(t, "stranger").Client("stranger")
	for name, certs := range map[string][]tls.Certificate{"no client certificate": nil, "certificate of another CA": {stranger.Cert}} {
		if _, err := httpsClient(&tls.Config{RootCAs: ca.Pool, Certificates: certs}).Get(url + "/healthz"); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestGatewayTLSConfigErrors(t *testing.T) {
	ca := tlstest.NewCA(t, "gateway-test")
	srv := ca.Server("gateway")
	for name, cfg := range map[string]gateway.Config{
		"cert without key":      {TLSCertFile: srv.CertFile},
		"client CA without TLS": {TLSClientCAFile: ca.CertFile},
		"missing file":          {TLSCertFile: srv.CertFile, TLSKeyFile: srv.KeyFile + ".nope"},
		"client CA not PEM":     {TLSCertFile: srv.CertFile, TLSKeyFile: srv.KeyFile, TLSClientCAFile: srv.KeyFile},
	} {
		if err := cfg.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if tc, err := (gateway.Config{}).ServerTLSConfig(); tc != nil || err != nil {
		t.Fatalf("no TLS: %v %v", tc, err)
	}
}
