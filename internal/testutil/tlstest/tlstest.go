// SPDX-License-Identifier: Apache-2.0

// Package tlstest generates a throwaway certificate authority and the
// certificates it signs, written as PEM files in a test's temporary
// directory, for tests of TLS and mutual TLS on 127.0.0.1.
//
// The package is test support only: production code must not import it. It
// imports no other kretrieve package.
package tlstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority whose files live in a test's temporary
// directory.
type CA struct {
	// CertFile is the CA certificate (PEM), to trust.
	CertFile string
	// Pool holds the CA certificate.
	Pool *x509.CertPool

	tb   testing.TB
	dir  string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	n    int64
}

// Pair is a certificate and its key signed by a CA.
type Pair struct {
	// CertFile and KeyFile are PEM files.
	CertFile, KeyFile string
	// Cert is the loaded pair.
	Cert tls.Certificate
}

// NewCA creates a CA named name valid for an hour.
func NewCA(tb testing.TB, name string) *CA {
	tb.Helper()
	key := newKey(tb)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Minute),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatalf("tlstest: create CA: %v", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatalf("tlstest: parse CA: %v", err)
	}
	dir := tb.TempDir()
	ca := &CA{tb: tb, dir: dir, cert: cert, key: key, n: 1, Pool: x509.NewCertPool()}
	ca.Pool.AddCert(cert)
	ca.CertFile = writePEM(tb, filepath.Join(dir, name+"-ca.pem"), "CERTIFICATE", der)
	return ca
}

// Server issues a server certificate for 127.0.0.1, ::1 and localhost
// (and any extra DNS names).
func (ca *CA) Server(name string, dnsNames ...string) Pair {
	return ca.issue(name, x509.ExtKeyUsageServerAuth, append([]string{"localhost"}, dnsNames...),
		[]net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback})
}

// Client issues a client certificate with common name name.
func (ca *CA) Client(name string) Pair {
	return ca.issue(name, x509.ExtKeyUsageClientAuth, nil, nil)
}

func (ca *CA) issue(name string, usage x509.ExtKeyUsage, dns []string, ips []net.IP) Pair {
	tb := ca.tb
	tb.Helper()
	ca.n++
	key := newKey(tb)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(ca.n),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		DNSNames:     dns,
		IPAddresses:  ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		tb.Fatalf("tlstest: issue %s: %v", name, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		tb.Fatalf("tlstest: marshal key: %v", err)
	}
	p := Pair{
		CertFile: writePEM(tb, filepath.Join(ca.dir, name+".pem"), "CERTIFICATE", der),
		KeyFile:  writePEM(tb, filepath.Join(ca.dir, name+"-key.pem"), "PRIVATE KEY", keyDER),
	}
	if p.Cert, err = tls.LoadX509KeyPair(p.CertFile, p.KeyFile); err != nil {
		tb.Fatalf("tlstest: load %s: %v", name, err)
	}
	return p
}

func newKey(tb testing.TB) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatalf("tlstest: key: %v", err)
	}
	return key
}

func writePEM(tb testing.TB, file, typ string, der []byte) string {
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		tb.Fatalf("tlstest: %v", err)
	}
	return file
}
