// SPDX-License-Identifier: Apache-2.0

package otlpwire

import (
	"crypto/tls"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"strings"
	"time"
)

// Defaults, as in otlptracehttp and the OTLP exporter specification.
const (
	// DefaultEndpoint is the URL used when [Config.EndpointURL] is empty.
	DefaultEndpoint = "https://localhost:4318/v1/traces"
	// DefaultTimeout bounds each export, retries included, when
	// [Config.Timeout] is not positive.
	DefaultTimeout = 10 * time.Second

	maxRequestSize  = 64 << 20 // uncompressed, as otlptracehttp
	maxResponseSize = 4 << 20
)

// DefaultRetry is otlptracehttp's retry policy: its backoff intervals,
// within the export timeout.
var DefaultRetry = RetryConfig{
	Enabled:         true,
	InitialInterval: 5 * time.Second,
	MaxInterval:     30 * time.Second,
}

// Compression is the compression of request bodies.
type Compression int

const (
	// NoCompression sends bodies as they are.
	NoCompression Compression = iota
	// GzipCompression sends gzip-compressed bodies
	// (Content-Encoding: gzip).
	GzipCompression
)

// RetryConfig configures the retries of exports that failed with a
// transient error: HTTP 429, 502, 503 or 504, or a transport error such as
// a refused or reset connection. Retries wait with exponential backoff
// (multiplier 1.5, ±50% jitter), or longer when the collector's
// Retry-After asks for it, and stop when the next attempt would start
// after the export's deadline (see [Config.Timeout]).
type RetryConfig struct {
	// Enabled turns retries on. When false, an export makes one attempt.
	Enabled bool
	// InitialInterval is the wait before the first retry.
	InitialInterval time.Duration
	// MaxInterval caps the backoff between attempts (before jitter).
	MaxInterval time.Duration
}

// Config configures an [Exporter]. It is plain data: New reads no
// environment variable (package tracing builds a Config from
// OTEL_EXPORTER_OTLP_*), and the zero value sends to [DefaultEndpoint]
// without retries.
type Config struct {
	// EndpointURL is the full URL spans are sent to, e.g.
	// "http://127.0.0.1:4318/v1/traces", used as-is (a missing path means
	// "/"; only the scheme, host and path are kept). The scheme must be
	// http or https, and decides whether TLS is used. Empty:
	// [DefaultEndpoint].
	EndpointURL string
	// Headers are sent with every request, besides Content-Type,
	// Content-Encoding and User-Agent.
	Headers map[string]string
	// Compression is the compression of request bodies; the default is
	// [NoCompression].
	Compression Compression
	// Timeout bounds each export, all attempts and the waits between them
	// included; <= 0 means [DefaultTimeout].
	Timeout time.Duration
	// Retry is the retry policy: the zero value makes one attempt per
	// export, [DefaultRetry] is otlptracehttp's policy.
	Retry RetryConfig
	// TLS is the TLS configuration of an https endpoint (it is an error
	// with http). Nil: the system roots are trusted and no client
	// certificate is sent.
	TLS *tls.Config
}

// settings is the resolved configuration of an Exporter.
type settings struct {
	url         string
	headers     map[string]string
	compression Compression
	timeout     time.Duration
	retry       RetryConfig
	tls         *tls.Config
}

// resolve checks c and fills in the defaults.
func (c Config) resolve() (settings, error) {
	s := settings{headers: maps.Clone(c.Headers), compression: c.Compression, timeout: c.Timeout, retry: c.Retry, tls: c.TLS.Clone()}
	if s.timeout <= 0 {
		s.timeout = DefaultTimeout
	}
	raw := c.EndpointURL
	if strings.TrimSpace(raw) == "" {
		raw = DefaultEndpoint
	}
	u, err := ParseEndpoint(raw)
	if err != nil {
		return s, fmt.Errorf("endpoint: %w", err)
	}
	s.url = u.String()
	if s.tls != nil && u.Scheme != "https" {
		return s, fmt.Errorf("endpoint %s: a TLS client configuration needs an https endpoint", s.url)
	}
	return s, nil
}

// ParseEndpoint parses an endpoint URL as otlptracehttp does: it must be
// http or https with a host, and only its scheme (lowercased), host and
// path are kept. A missing path is "/". Userinfo is refused
// ([CheckNoUserinfo]) rather than dropped.
func ParseEndpoint(raw string) (url.URL, error) {
	raw = strings.TrimSpace(raw)
	if err := CheckNoUserinfo(raw); err != nil {
		return url.URL{}, err
	}
	u, err := url.Parse(raw)
	if err != nil {
		return url.URL{}, err
	}
	scheme := strings.ToLower(u.Scheme)
	if (scheme != "http" && scheme != "https") || u.Host == "" {
		return url.URL{}, fmt.Errorf("want an http or https URL with a host, got %q", raw)
	}
	p := u.Path
	if p == "" {
		p = "/"
	}
	return url.URL{Scheme: scheme, Host: u.Host, Path: p}, nil
}

// ErrUserinfo is the cause of an endpoint URL refused because it holds
// userinfo (user:password@ before the host). otlptracehttp drops it
// silently, so a credential put there was never sent, and it was echoed
// whenever the URL was reported as invalid.
var ErrUserinfo = errors.New("credentials in an endpoint URL (userinfo) are refused; send them in a header")

// CheckNoUserinfo returns an error wrapping [ErrUserinfo] when raw, an
// endpoint URL that need not be valid, holds userinfo. The error shows raw
// with all of its userinfo replaced by "[REDACTED]", as kafkaclient prints
// secrets (url.URL.Redacted hides only the password, but the user name
// alone is often the token, as in https://TOKEN@host).
func CheckNoUserinfo(raw string) error {
	if redacted, ok := redactUserinfo(raw); ok {
		return fmt.Errorf("%s: %w", redacted, ErrUserinfo)
	}
	return nil
}

// redactUserinfo replaces the userinfo of raw with "[REDACTED]" and reports
// whether it had any. It does not need raw to parse, and errs on the safe
// side: userinfo is everything between the scheme's "://" (or the start)
// and the last "@" before any "?" or "#", even past a "/" (url.Parse would
// take a "/" in a password for the start of the path, and a URL error
// would then show the password's end). An OTLP endpoint has no "@" in its
// path.
func redactUserinfo(raw string) (string, bool) {
	prefix, rest := "", raw
	if i := strings.Index(raw, "://"); i >= 0 && !strings.ContainsAny(raw[:i], "/?#@") {
		prefix, rest = raw[:i+len("://")], raw[i+len("://"):]
	}
	end := strings.IndexAny(rest, "?#")
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndex(rest[:end], "@")
	if at < 0 {
		return raw, false
	}
	return prefix + "[REDACTED]" + rest[at:], true
}
