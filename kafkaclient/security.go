// SPDX-License-Identifier: Apache-2.0

package kafkaclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// SASL mechanisms.
const (
	MechanismPLAIN       = "PLAIN"
	MechanismSCRAMSHA256 = "SCRAM-SHA-256"
	MechanismSCRAMSHA512 = "SCRAM-SHA-512"
)

// Mechanisms lists the supported SASL mechanisms.
var Mechanisms = []string{MechanismPLAIN, MechanismSCRAMSHA256, MechanismSCRAMSHA512}

// TLSConfig configures TLS to the brokers. TLS is on when Enabled is set or
// any other field is.
type TLSConfig struct {
	// Enabled turns TLS on with the system's root CAs. Default: off unless
	// another field is set.
	Enabled bool
	// CAFile is a PEM bundle of the CAs that sign the brokers' certificates,
	// used instead of the system roots. Default: the system roots.
	CAFile string
	// CertFile and KeyFile are the PEM client certificate and key presented
	// to brokers that require them (mutual TLS). Both or neither; read at
	// every new connection, so renewed files take effect without a restart.
	CertFile, KeyFile string
	// ServerName is the name the brokers' certificates must carry.
	// Default: the host of the address dialled.
	ServerName string
}

// On reports whether TLS is on.
func (t TLSConfig) On() bool {
	return t.Enabled || t.CAFile != "" || t.CertFile != "" || t.KeyFile != "" || t.ServerName != ""
}

// validate checks that the files exist and parse.
func (t TLSConfig) validate() error {
	var errs []error
	if (t.CertFile == "") != (t.KeyFile == "") {
		errs = append(errs, errors.New("tls-cert-file and tls-key-file: give both or neither"))
	} else if t.CertFile != "" {
		if _, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile); err != nil {
			errs = append(errs, fmt.Errorf("tls-cert-file and tls-key-file: %w", err))
		}
	}
	if t.CAFile != "" {
		if _, err := loadCAFile(t.CAFile); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// config returns the client tls.Config, or nil when TLS is off.
func (t TLSConfig) config() (*tls.Config, error) {
	if !t.On() {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}
	if t.CAFile != "" {
		pool, err := loadCAFile(t.CAFile)
		if err != nil {
			return nil, err
		}
		c.RootCAs = pool
	}
	if t.CertFile != "" {
		certFile, keyFile := t.CertFile, t.KeyFile
		c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			cert, err := tls.LoadX509KeyPair(certFile, keyFile)
			if err != nil {
				return nil, fmt.Errorf("tls client certificate: %w", err)
			}
			return &cert, nil
		}
	}
	return c, nil
}

func loadCAFile(file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("tls-ca-file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("tls-ca-file %s: no PEM certificate found", file)
	}
	return pool, nil
}

// SASLConfig configures SASL authentication.
type SASLConfig struct {
	// Mechanism is PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (any case).
	// Default: "" (no SASL).
	Mechanism string
	// Username is the SASL user.
	Username string
	// Password is the user's password; set it or PasswordFile, not both.
	Password Secret
	// PasswordFile holds the password (one trailing newline is ignored).
	// It is read at every authentication, so a rotated file takes effect
	// on new connections.
	PasswordFile string
	// AllowPlainWithoutTLS accepts PLAIN without TLS, which sends the
	// password in clear text. Default: false (refused).
	AllowPlainWithoutTLS bool
}

// mechanism returns the canonical mechanism name, or "" when unset.
func (s SASLConfig) mechanism() string {
	return strings.ToUpper(strings.TrimSpace(s.Mechanism))
}

func (s SASLConfig) validate(tlsOn bool) error {
	mech := s.mechanism()
	if mech == "" {
		if s.Username != "" || !s.Password.IsZero() || s.PasswordFile != "" {
			return errors.New("sasl-mechanism: required with a SASL user name or password (one of " + strings.Join(Mechanisms, ", ") + ")")
		}
		return nil
	}
	var errs []error
	switch mech {
	case MechanismPLAIN, MechanismSCRAMSHA256, MechanismSCRAMSHA512:
	default:
		if strings.ContainsAny(mech, ", ") {
			errs = append(errs, fmt.Errorf("sasl-mechanism: exactly one mechanism, not %q", s.Mechanism))
		} else {
			errs = append(errs, fmt.Errorf("sasl-mechanism: %q is not one of %s", s.Mechanism, strings.Join(Mechanisms, ", ")))
		}
	}
	if s.Username == "" {
		errs = append(errs, fmt.Errorf("sasl-username: required with SASL %s", mech))
	}
	switch {
	case !s.Password.IsZero() && s.PasswordFile != "":
		errs = append(errs, errors.New("sasl-password and sasl-password-file: give one, not both"))
	case s.Password.IsZero() && s.PasswordFile == "":
		errs = append(errs, fmt.Errorf("sasl-password or sasl-password-file: required with SASL %s", mech))
	case s.PasswordFile != "":
		if _, err := readPasswordFile(s.PasswordFile); err != nil {
			errs = append(errs, err)
		}
	}
	if mech == MechanismPLAIN && !tlsOn && !s.AllowPlainWithoutTLS {
		errs = append(errs, errors.New("sasl-mechanism PLAIN without TLS would send the password in clear text: enable TLS (tls), or accept that explicitly (sasl-plain-without-tls)"))
	}
	return errors.Join(errs...)
}

func readPasswordFile(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		// The error names the file, never its content.
		return "", fmt.Errorf("sasl-password-file: %w", err)
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	if len(b) == 0 {
		return "", fmt.Errorf("sasl-password-file %s: empty", file)
	}
	return string(b), nil
}

// password returns the password, from the file when one is set.
func (s SASLConfig) password() (string, error) {
	if s.PasswordFile != "" {
		return readPasswordFile(s.PasswordFile)
	}
	return s.Password.Reveal(), nil
}

// saslMechanism returns the franz-go mechanism, or nil without SASL.
func (s SASLConfig) saslMechanism() sasl.Mechanism {
	switch s.mechanism() {
	case MechanismPLAIN:
		return plain.Plain(func(context.Context) (plain.Auth, error) {
			pass, err := s.password()
			return plain.Auth{User: s.Username, Pass: pass}, err
		})
	case MechanismSCRAMSHA256, MechanismSCRAMSHA512:
		fn := func(context.Context) (scram.Auth, error) {
			pass, err := s.password()
			return scram.Auth{User: s.Username, Pass: pass}, err
		}
		if s.mechanism() == MechanismSCRAMSHA256 {
			return scram.Sha256(fn)
		}
		return scram.Sha512(fn)
	}
	return nil
}

// securityOptions returns the TLS and SASL options of c. A TLS file that
// cannot be read makes every dial fail with that error (Validate reports it
// at start-up).
func securityOptions(c Config) []kgo.Opt {
	var opts []kgo.Opt
	tc, err := c.TLS.config()
	switch {
	case err != nil:
		opts = append(opts, kgo.Dialer(func(context.Context, string, string) (net.Conn, error) {
			return nil, fmt.Errorf("tls: %w", err)
		}))
	case tc != nil:
		opts = append(opts, kgo.DialTLSConfig(tc))
	}
	if m := c.SASL.saslMechanism(); m != nil {
		opts = append(opts, kgo.SASL(m))
	}
	return opts
}
