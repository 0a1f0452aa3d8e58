package otlpwire

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"time"
)

// Defaults, as in otlptracehttp and the OTLP exporter specification.
const (
	// DefaultEndpoint is the URL used when neither [WithEndpointURL] nor
	// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT nor OTEL_EXPORTER_OTLP_ENDPOINT is
	// set.
	DefaultEndpoint = "https://localhost:4318/v1/traces"
	// DefaultTimeout bounds each export, retries included, unless
	// [WithTimeout] or OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT says otherwise.
	DefaultTimeout = 10 * time.Second

	tracesPath      = "/v1/traces"
	maxRequestSize  = 64 << 20 // uncompressed, as otlptracehttp
	maxResponseSize = 4 << 20
)

// DefaultRetry is the retry policy used unless [WithRetry] replaces it: the
// backoff intervals of otlptracehttp, within the export timeout.
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
// after the export's deadline (see [WithTimeout]).
type RetryConfig struct {
	// Enabled turns retries on. When false, an export makes one attempt.
	Enabled bool
	// InitialInterval is the wait before the first retry.
	InitialInterval time.Duration
	// MaxInterval caps the backoff between attempts (before jitter).
	MaxInterval time.Duration
}

type config struct {
	getenv   func(string) string
	readFile func(string) ([]byte, error)

	endpoint    string // option; overrides the environment
	headers     map[string]string
	compression *Compression
	timeout     time.Duration
	retry       RetryConfig
	tls         *tls.Config
}

// Option configures [New].
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithEndpointURL sets the full URL spans are sent to, e.g.
// "http://127.0.0.1:4318/v1/traces", used as-is (a missing path means "/").
// The scheme must be http or https. It overrides
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and OTEL_EXPORTER_OTLP_ENDPOINT; the
// default is [DefaultEndpoint].
func WithEndpointURL(u string) Option {
	return optionFunc(func(c *config) { c.endpoint = u })
}

// WithHeaders sets the headers sent with every request, replacing
// OTEL_EXPORTER_OTLP_TRACES_HEADERS and OTEL_EXPORTER_OTLP_HEADERS. By
// default there are none besides Content-Type, Content-Encoding and
// User-Agent.
func WithHeaders(h map[string]string) Option {
	return optionFunc(func(c *config) { c.headers = maps.Clone(h) })
}

// WithCompression sets the compression of request bodies, overriding
// OTEL_EXPORTER_OTLP_(TRACES_)COMPRESSION. The default is
// [NoCompression].
func WithCompression(comp Compression) Option {
	return optionFunc(func(c *config) { c.compression = &comp })
}

// WithTimeout bounds each export, all attempts and the waits between them
// included, overriding OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT. d <= 0 leaves
// the variables or the default, [DefaultTimeout], in effect.
func WithTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if d > 0 {
			c.timeout = d
		}
	})
}

// WithRetry sets the retry policy; the default is [DefaultRetry]. Use
// RetryConfig{} to fail fast.
func WithRetry(rc RetryConfig) Option {
	return optionFunc(func(c *config) { c.retry = rc })
}

// WithTLSClientConfig sets the TLS configuration for https endpoints,
// replacing the one built from OTEL_EXPORTER_OTLP_(TRACES_)CERTIFICATE,
// CLIENT_CERTIFICATE and CLIENT_KEY. By default the system roots are
// trusted and no client certificate is sent.
func WithTLSClientConfig(cfg *tls.Config) Option {
	return optionFunc(func(c *config) { c.tls = cfg.Clone() })
}

// WithGetenv sets the function used to read the OTEL_EXPORTER_OTLP_*
// variables. The default is [os.Getenv].
func WithGetenv(getenv func(string) string) Option {
	return optionFunc(func(c *config) {
		if getenv != nil {
			c.getenv = getenv
		}
	})
}

// settings is the resolved configuration of an Exporter.
type settings struct {
	url         string
	secure      bool
	headers     map[string]string
	compression Compression
	timeout     time.Duration
	retry       RetryConfig
	tls         *tls.Config
}

// env reads OTEL_EXPORTER_OTLP_TRACES_<key>, falling back to
// OTEL_EXPORTER_OTLP_<key>, and returns the name of the variable it used.
func (c *config) env(key string) (value, name string) {
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_" + key, "OTEL_EXPORTER_OTLP_" + key} {
		if v := strings.TrimSpace(c.getenv(name)); v != "" {
			return v, name
		}
	}
	return "", ""
}

// resolve combines options, variables and defaults the way otlptracehttp
// does, except that an invalid variable is an error rather than a logged
// and ignored value.
func (c *config) resolve() (settings, error) {
	s := settings{retry: c.retry, timeout: c.timeout}
	u, err := c.endpointURL()
	if err != nil {
		return s, err
	}
	s.secure = u.Scheme == "https"
	if v, _ := c.env("INSECURE"); v != "" && c.endpoint == "" {
		// As in otlptracehttp (and otlpmetrichttp next to this exporter),
		// the variable overrides the scheme of an endpoint variable.
		s.secure = !strings.EqualFold(v, "true")
	}
	u.Scheme = "http"
	if s.secure {
		u.Scheme = "https"
	}
	s.url = u.String()

	s.headers = c.headers
	if s.headers == nil {
		if v, name := c.env("HEADERS"); v != "" {
			if s.headers, err = parseHeaders(v); err != nil {
				return s, fmt.Errorf("%s: %w", name, err)
			}
		}
	}

	if c.compression != nil {
		s.compression = *c.compression
	} else {
		switch v, name := c.env("COMPRESSION"); strings.ToLower(v) {
		case "", "none":
		case "gzip":
			s.compression = GzipCompression
		default:
			return s, fmt.Errorf("%s: unsupported compression %q (want gzip or none)", name, v)
		}
	}

	if s.timeout <= 0 {
		s.timeout = DefaultTimeout
		if v, name := c.env("TIMEOUT"); v != "" {
			ms, err := strconv.Atoi(v)
			if err != nil || ms <= 0 {
				return s, fmt.Errorf("%s: want a positive number of milliseconds, got %q", name, v)
			}
			s.timeout = time.Duration(ms) * time.Millisecond
		}
	}

	s.tls = c.tls
	if s.tls == nil {
		if s.tls, err = c.envTLS(); err != nil {
			return s, err
		}
	}
	if s.tls != nil && !s.secure {
		return s, fmt.Errorf("endpoint %s: a TLS client configuration needs an https endpoint", s.url)
	}
	return s, nil
}

// endpointURL returns the URL to post to: the option, else
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as-is, else
// OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces, else [DefaultEndpoint]. Like
// otlptracehttp it keeps only the scheme, host and path.
func (c *config) endpointURL() (url.URL, error) {
	raw, name, base := c.endpoint, "endpoint", false
	if raw == "" {
		raw, name = c.getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	}
	if strings.TrimSpace(raw) == "" {
		raw, name, base = c.getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), "OTEL_EXPORTER_OTLP_ENDPOINT", true
	}
	if strings.TrimSpace(raw) == "" {
		raw, name, base = DefaultEndpoint, "default endpoint", false
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return url.URL{}, fmt.Errorf("%s: %w", name, err)
	}
	scheme := strings.ToLower(u.Scheme)
	if (scheme != "http" && scheme != "https") || u.Host == "" {
		return url.URL{}, fmt.Errorf("%s: want an http or https URL with a host, got %q", name, raw)
	}
	p := u.Path
	switch {
	case base:
		p = path.Join("/", p, tracesPath)
	case p == "":
		p = "/"
	}
	return url.URL{Scheme: scheme, Host: u.Host, Path: p}, nil
}

// envTLS builds a TLS configuration from the CERTIFICATE, CLIENT_CERTIFICATE
// and CLIENT_KEY variables (per-signal variants first), or returns nil when
// none is set.
func (c *config) envTLS() (*tls.Config, error) {
	ca, caName := c.env("CERTIFICATE")
	cert, certName := c.env("CLIENT_CERTIFICATE")
	key, keyName := c.env("CLIENT_KEY")
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := c.readFile(ca)
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
		return nil, errors.New("OTEL_EXPORTER_OTLP_(TRACES_)CLIENT_CERTIFICATE and CLIENT_KEY must be set together")
	}
	if cert != "" {
		certPEM, err := c.readFile(cert)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", certName, err)
		}
		keyPEM, err := c.readFile(key)
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
func parseHeaders(s string) (map[string]string, error) {
	h := make(map[string]string)
	for pair := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || !validHeaderKey(k) {
			return nil, fmt.Errorf("invalid header %q (want key=value)", strings.TrimSpace(pair))
		}
		dec, err := url.PathUnescape(v)
		if err != nil {
			return nil, fmt.Errorf("header %s: %w", k, err)
		}
		h[k] = strings.TrimSpace(dec)
	}
	return h, nil
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

func newConfig(opts []Option) config {
	c := config{getenv: os.Getenv, readFile: os.ReadFile, retry: DefaultRetry}
	for _, o := range opts {
		o.apply(&c)
	}
	return c
}
