// SPDX-License-Identifier: Apache-2.0

package otlpwire_test

import (
	"crypto/tls"
	"io"
	"log"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kretrieve/kretrieve/internal/otlpwire"
	"github.com/kretrieve/kretrieve/internal/testutil/tlstest"
)

// testPKI is a CA with a server certificate for 127.0.0.1 and a client
// certificate, written as PEM files (internal/testutil/tlstest).
type testPKI struct {
	ca             *tlstest.CA
	server, client tlstest.Pair
}

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	ca := tlstest.NewCA(t, "otlpwire test CA")
	return testPKI{ca: ca, server: ca.Server("127.0.0.1"), client: ca.Client("otlpwire-client")}
}

// newMTLSCollector starts a collector that requires a client certificate
// signed by the test CA.
func newMTLSCollector(t *testing.T, p testPKI) *collector {
	t.Helper()
	srv := newUnstartedCollector(t)
	srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{p.server.Cert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    p.ca.Pool,
		MinVersion:   tls.VersionTLS12,
	}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // expected handshake failures
	srv.StartTLS()
	return srv
}

func TestTLSFailures(t *testing.T) {
	pki := newTestPKI(t)
	srv := newMTLSCollector(t, pki)
	client := pki.client.Cert
	for _, tc := range []struct {
		name  string
		tls   *tls.Config
		retry otlpwire.RetryConfig
	}{
		// An untrusted server certificate is not retried: the export fails
		// at once even with the default retry policy.
		{name: "untrusted server", retry: otlpwire.DefaultRetry, tls: &tls.Config{Certificates: []tls.Certificate{client}, MinVersion: tls.VersionTLS12}},
		// With TLS 1.3 a refused client certificate surfaces as a broken
		// connection, which is retried like one; retries are off here.
		{name: "no client certificate", tls: &tls.Config{RootCAs: pki.ca.Pool, MinVersion: tls.VersionTLS12}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exp, err := otlpwire.New(otlpwire.Config{EndpointURL: srv.URL + "/v1/traces", TLS: tc.tls, Retry: tc.retry})
			require.NoError(t, err)
			start := time.Now()
			require.Error(t, exp.ExportSpans(t.Context(), stubSpans()))
			assert.Less(t, time.Since(start), 3*time.Second, "not retried")
			require.NoError(t, exp.Shutdown(t.Context()))
		})
	}
	assert.Empty(t, srv.Requests())
}

func TestWithTLSClientConfig(t *testing.T) {
	pki := newTestPKI(t)
	srv := newMTLSCollector(t, pki)
	client := pki.client.Cert
	exp, err := otlpwire.New(otlpwire.Config{EndpointURL: srv.URL + "/v1/traces", Retry: otlpwire.DefaultRetry,
		TLS: &tls.Config{RootCAs: pki.ca.Pool, Certificates: []tls.Certificate{client}, MinVersion: tls.VersionTLS12}})
	require.NoError(t, err)
	require.NoError(t, exp.ExportSpans(t.Context(), stubSpans()))
	require.NoError(t, exp.Shutdown(t.Context()))
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "otlpwire-client", reqs[0].ClientCN)
}
