package otlpwire_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kretrieve/kretrieve/internal/otlpwire"
)

// testPKI is a CA with a server certificate for 127.0.0.1 and a client
// certificate, written as PEM files.
type testPKI struct {
	pool                          *x509.CertPool
	server                        tls.Certificate
	caFile, clientCert, clientKey string
}

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "otlpwire test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)

	issue := func(serial int64, cn string, usage x509.ExtKeyUsage, ips ...net.IP) (certPEM, keyPEM []byte) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: cn},
			NotBefore:    time.Now().Add(-time.Hour),
			NotAfter:     time.Now().Add(time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
			IPAddresses:  ips,
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		require.NoError(t, err)
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		require.NoError(t, err)
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o600))
		return p
	}

	p := testPKI{pool: x509.NewCertPool()}
	p.pool.AddCert(ca)
	p.caFile = write("ca.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}))
	srvCert, srvKey := issue(2, "127.0.0.1", x509.ExtKeyUsageServerAuth, net.IPv4(127, 0, 0, 1))
	p.server, err = tls.X509KeyPair(srvCert, srvKey)
	require.NoError(t, err)
	cliCert, cliKey := issue(3, "otlpwire-client", x509.ExtKeyUsageClientAuth)
	p.clientCert, p.clientKey = write("client.pem", cliCert), write("client-key.pem", cliKey)
	return p
}

// newMTLSCollector starts a collector that requires a client certificate
// signed by the test CA.
func newMTLSCollector(t *testing.T, p testPKI) *collector {
	t.Helper()
	srv := newUnstartedCollector(t)
	srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{p.server},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    p.pool,
		MinVersion:   tls.VersionTLS12,
	}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // expected handshake failures
	srv.StartTLS()
	return srv
}

func TestTLSFailures(t *testing.T) {
	pki := newTestPKI(t)
	srv := newMTLSCollector(t, pki)
	client, err := tls.LoadX509KeyPair(pki.clientCert, pki.clientKey)
	require.NoError(t, err)
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
		{name: "no client certificate", tls: &tls.Config{RootCAs: pki.pool, MinVersion: tls.VersionTLS12}},
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
	client, err := tls.LoadX509KeyPair(pki.clientCert, pki.clientKey)
	require.NoError(t, err)
	exp, err := otlpwire.New(otlpwire.Config{EndpointURL: srv.URL + "/v1/traces", Retry: otlpwire.DefaultRetry,
		TLS: &tls.Config{RootCAs: pki.pool, Certificates: []tls.Certificate{client}, MinVersion: tls.VersionTLS12}})
	require.NoError(t, err)
	require.NoError(t, exp.ExportSpans(t.Context(), stubSpans()))
	require.NoError(t, exp.Shutdown(t.Context()))
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	assert.Equal(t, "otlpwire-client", reqs[0].ClientCN)
}
