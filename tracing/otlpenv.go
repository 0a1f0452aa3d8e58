// SPDX-License-Identifier: Apache-2.0

package tracing

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/kretrieve/kretrieve/internal/otlpwire"
)

// otlpEnv reads the OTEL_EXPORTER_OTLP_* variables of the http/protobuf
// trace exporter, as otlptracehttp does (the TRACES_ variant of each wins
// over the general one), except that an invalid variable is an error
// rather than a logged and ignored value. The http/json metric and log
// exporters read the same variables with METRICS_ and LOGS_ (and
// /v1/metrics, /v1/logs) in place of TRACES_ (and /v1/traces):
//
//   - OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: the URL, used as-is; else
//     OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces appended; default
//     otlpwire.DefaultEndpoint. OTEL_EXPORTER_OTLP_(TRACES_)INSECURE=true
//     switches an endpoint variable's scheme to http, =false to https.
//   - OTEL_EXPORTER_OTLP_(TRACES_)HEADERS: key=value pairs separated by
//     commas, values URL-decoded.
//   - OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT: milliseconds allowed for one
//     export, retries included; default 10000.
//   - OTEL_EXPORTER_OTLP_(TRACES_)COMPRESSION: gzip or none (default).
//   - OTEL_EXPORTER_OTLP_(TRACES_)CERTIFICATE, CLIENT_CERTIFICATE and
//     CLIENT_KEY: PEM files for https endpoints (trusted CA; client
//     certificate and key for mutual TLS).
type otlpEnv struct {
	getenv   func(string) string
	readFile func(string) ([]byte, error)
	// signal is the signal whose variables are read, set by traceConfig
	// and signalConfig.
	signal signalEnv
}

const tracesPath = "/v1/traces"

// env reads OTEL_EXPORTER_OTLP_<SIGNAL>_<key>, falling back to
// OTEL_EXPORTER_OTLP_<key>, and returns the name of the variable it used.
func (o otlpEnv) env(key string) (value, name string) {
	for _, name := range []string{"OTEL_EXPORTER_OTLP_" + strings.ToUpper(o.signal.name) + "_" + key, "OTEL_EXPORTER_OTLP_" + key} {
		if v := strings.TrimSpace(o.getenv(name)); v != "" {
			return v, name
		}
	}
	return "", ""
}

// traceConfig returns otlpwire's configuration from the variables, with
// otlpwire.DefaultRetry. A positive timeout replaces
// OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT, which is then not read.
func (o otlpEnv) traceConfig(timeout time.Duration) (otlpwire.Config, error) {
	return o.signalConfig(tracesEnv, timeout)
}

// signalConfig is traceConfig for signal s: its per-signal variables and,
// for a base endpoint, its /v1/<signal> path.
func (o otlpEnv) signalConfig(s signalEnv, timeout time.Duration) (otlpwire.Config, error) {
	o.signal = s
	c := otlpwire.Config{Retry: otlpwire.DefaultRetry}
	u, err := o.endpointURL()
	if err != nil {
		return c, err
	}
	if v, _ := o.env("INSECURE"); v != "" {
		// As in otlptracehttp (and otlpmetrichttp next to this exporter),
		// the variable overrides the scheme of an endpoint variable.
		u.Scheme = "https"
		if strings.EqualFold(v, "true") {
			u.Scheme = "http"
		}
	}
	c.EndpointURL = u.String()

	if v, name := o.env("HEADERS"); v != "" {
		if c.Headers, err = parseHeaders(v); err != nil {
			return c, fmt.Errorf("%s: %w", name, err)
		}
	}

	switch v, name := o.env("COMPRESSION"); strings.ToLower(v) {
	case "", "none":
	case "gzip":
		c.Compression = otlpwire.GzipCompression
	default:
		return c, fmt.Errorf("%s: unsupported compression %q (want gzip or none)", name, v)
	}

	c.Timeout = timeout
	if v, name := o.env("TIMEOUT"); v != "" && c.Timeout <= 0 {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return c, fmt.Errorf("%s: want a positive number of milliseconds, got %q", name, v)
		}
		c.Timeout = time.Duration(ms) * time.Millisecond
	}
	if c.Timeout <= 0 {
		c.Timeout = otlpwire.DefaultTimeout
	}

	if c.TLS, err = o.tls(); err != nil {
		return c, err
	}
	if c.TLS != nil && u.Scheme != "https" {
		return c, fmt.Errorf("endpoint %s: a TLS client configuration needs an https endpoint", c.EndpointURL)
	}
	return c, nil
}

// endpointURL returns the URL to post to: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
// as-is, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces, else
// otlpwire.DefaultEndpoint (for metrics and logs: their variable, path and
// the default endpoint with their path). Like otlptracehttp it keeps only
// the scheme, host and path.
func (o otlpEnv) endpointURL() (url.URL, error) {
	signalPath := "/v1/" + o.signal.name
	raw, name, base := o.getenv(o.signal.endpoint), o.signal.endpoint, false
	if strings.TrimSpace(raw) == "" {
		raw, name, base = o.getenv(envEndpoint), envEndpoint, true
	}
	if strings.TrimSpace(raw) == "" {
		raw, name, base = strings.TrimSuffix(otlpwire.DefaultEndpoint, tracesPath)+signalPath, "default endpoint", false
	}
	u, err := otlpwire.ParseEndpoint(raw)
	if err != nil {
		return url.URL{}, fmt.Errorf("%s: %w", name, err)
	}
	if base {
		u.Path = path.Join("/", u.Path, signalPath)
	}
	return u, nil
}

// tls builds a TLS configuration from the CERTIFICATE, CLIENT_CERTIFICATE
// and CLIENT_KEY variables (per-signal variants first), or returns nil when
// none is set.
func (o otlpEnv) tls() (*tls.Config, error) {
	ca, caName := o.env("CERTIFICATE")
	cert, certName := o.env("CLIENT_CERTIFICATE")
	key, keyName := o.env("CLIENT_KEY")
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := o.readFile(ca)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", caName, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no PEM certificate in %s", caName, ca)
		}
		cfg.RootCAs = pool
	}
	if (cert == "") != (key == "") {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_(%s_)CLIENT_CERTIFICATE and CLIENT_KEY must be set together", strings.ToUpper(o.signal.name))
	}
	if cert != "" {
		certPEM, err := o.readFile(cert)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", certName, err)
		}
		keyPEM, err := o.readFile(key)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", keyName, err)
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("%s, %s: %w", certName, keyName, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// parseHeaders parses "k1=v1,k2=v2" (the W3C Baggage format without
// properties): keys are HTTP tokens, values are URL-decoded, both trimmed.
// Headers hold credentials, so an error names the malformed entry by its
// position, and by its key only once the key is known to be valid, never
// by its value (a typo such as "Authorization: Bearer t0ken" would
// otherwise print the token).
func parseHeaders(s string) (map[string]string, error) {
	h := make(map[string]string)
	entries := strings.Split(s, ",")
	for i, pair := range entries {
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || !validHeaderKey(k) {
			return nil, fmt.Errorf("entry %d of %d is not name=value with a valid header name (the entry is not shown: it may hold a credential)", i+1, len(entries))
		}
		dec, err := url.PathUnescape(v)
		if err != nil {
			return nil, fmt.Errorf("header %s (entry %d of %d): invalid %%-escape in its value (the value is not shown)", k, i+1, len(entries))
		}
		h[k] = strings.TrimSpace(dec)
	}
	return h, nil
}

// checkCredentialVariables validates the variables that may hold
// credentials, for every signal, before any exporter reads them: the SDK's
// exporters print a malformed headers entry (with its token) through the
// OTel logger and go on without it, and drop an endpoint's userinfo
// silently. A headers variable must parse ([parseHeaders]) and no endpoint
// variable may hold userinfo ([otlpwire.CheckNoUserinfo]); errors name the
// variable, never the secret.
func checkCredentialVariables(getenv func(string) string) error {
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
		"OTEL_EXPORTER_OTLP_METRICS_HEADERS", "OTEL_EXPORTER_OTLP_LOGS_HEADERS"} {
		if v := lookup(getenv, name); v != "" {
			if _, err := parseHeaders(v); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	for _, name := range []string{envEndpoint, envTracesEndpoint, envMetricsEndpoint, envLogsEndpoint} {
		if err := otlpwire.CheckNoUserinfo(lookup(getenv, name)); err != nil {
			return fmt.Errorf("%s: %w (OTEL_EXPORTER_OTLP_HEADERS)", name, err)
		}
	}
	return nil
}

// validHeaderKey reports whether k is an RFC 9110 token.
func validHeaderKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
