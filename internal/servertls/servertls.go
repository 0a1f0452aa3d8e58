// SPDX-License-Identifier: Apache-2.0

// Package servertls loads the TLS configuration of a server kretrieve runs
// (the HTTP gateway, the development broker) from PEM files: its
// certificate and key and, for mutual TLS, the CA its clients' certificates
// must chain to. It imports only the standard library.
package servertls

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// Load returns the server TLS configuration of certFile and keyFile, with
// client certificates required and verified against clientCAFile when it
// is set, or nil when no certificate is given: plaintext. The files are
// read once, here. TLS 1.2 is the minimum.
func Load(certFile, keyFile, clientCAFile string) (*tls.Config, error) {
	if certFile == "" && keyFile == "" {
		if clientCAFile != "" {
			return nil, errors.New("a TLS client CA file needs a TLS certificate and key")
		}
		return nil, nil
	}
	if certFile == "" || keyFile == "" {
		return nil, errors.New("TLS certificate and key: give both")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate: %w", err)
	}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if clientCAFile != "" {
		b, err := os.ReadFile(clientCAFile)
		if err != nil {
			return nil, fmt.Errorf("TLS client CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("TLS client CA file %s: no PEM certificate found", clientCAFile)
		}
		tc.ClientCAs, tc.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return tc, nil
}
