// SPDX-License-Identifier: Apache-2.0

package servertls_test

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/internal/servertls"
	"github.com/kretrieve/kretrieve/internal/testutil/tlstest"
)

func TestLoad(t *testing.T) {
	ca := tlstest.NewCA(t, "servertls")
	srv := ca.Server("server")
	if tc, err := servertls.Load("", "", ""); tc != nil || err != nil {
		t.Errorf("no files: %v %v, want plaintext", tc, err)
	}
	tc, err := servertls.Load(srv.CertFile, srv.KeyFile, "")
	if err != nil || len(tc.Certificates) != 1 || tc.ClientAuth != tls.NoClientCert || tc.MinVersion != tls.VersionTLS12 {
		t.Fatalf("server TLS: %+v %v", tc, err)
	}
	tc, err = servertls.Load(srv.CertFile, srv.KeyFile, ca.CertFile)
	if err != nil || tc.ClientAuth != tls.RequireAndVerifyClientCert || tc.ClientCAs == nil {
		t.Fatalf("mutual TLS: %+v %v", tc, err)
	}
	notPEM := filepath.Join(t.TempDir(), "ca.txt")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ cert, key, ca, want string }{
		{"", "", ca.CertFile, "needs a TLS certificate and key"},
		{srv.CertFile, "", "", "give both"},
		{srv.CertFile, srv.CertFile, "", "TLS certificate:"},
		{srv.CertFile, srv.KeyFile, filepath.Join(t.TempDir(), "missing"), "TLS client CA file:"},
		{srv.CertFile, srv.KeyFile, notPEM, "no PEM certificate found"},
	} {
		if _, err := servertls.Load(c.cert, c.key, c.ca); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Load(%q, %q, %q) = %v, want %q", c.cert, c.key, c.ca, err, c.want)
		}
	}
}
