// SPDX-License-Identifier: Apache-2.0

package console

import (
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.opentelemetry.io/otel/metric"

	"github.com/kretrieve/kretrieve/ops/dlq"
	"github.com/kretrieve/kretrieve/ops/spans"
	"github.com/kretrieve/kretrieve/ops/status"
	"github.com/kretrieve/kretrieve/pathwaytopic"
	"github.com/kretrieve/kretrieve/producer"
	"github.com/kretrieve/kretrieve/topology"
)

//go:embed assets
var assets embed.FS

// Defaults of Config.
const (
	DefaultInterval      = 2 * time.Second
	DefaultIdle          = time.Minute
	DefaultSearchTimeout = 30 * time.Second
	// DefaultMaxStreams and DefaultMaxStreamDuration bound the event
	// streams: how many at once, and how long each.
	DefaultMaxStreams        = 8
	DefaultMaxStreamDuration = 5 * time.Minute
)

// Security headers of every response.
const (
	// ContentSecurityPolicy allows the console's own scripts, styles and
	// API, and nothing inline, framed or fetched from elsewhere.
	ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
	// CSRFHeader must be sent, with the value "1", by every POST (a search,
	// a replay): a cross-site form cannot set it, and a cross-site script
	// cannot send it without a CORS preflight, which the console does not
	// answer.
	CSRFHeader = "X-Kretrieve-Console"
)

// Prefix is where run --serve mounts the console on the gateway; the
// console also answers under it when served at the root.
const Prefix = "/console/"

// Config is the console's settings, plain data; its collaborators are
// Options of New.
type Config struct {
	// Topology is the pipeline's stages: the boxes and edges of the map.
	Topology topology.Topology
	// KafkaOptions are the connection options of the console's Kafka
	// clients (see kafkaclient.Options), created on the first API request
	// and closed after Idle. They must not configure consuming.
	KafkaOptions []kgo.Opt
	// PathwaysTopic is the topic of the pathway aggregates. Default:
	// pathwaytopic.DefaultTopic.
	PathwaysTopic string
	// JaegerURL is the base URL of a Jaeger query API to read traces from
	// when the console's own spans do not hold them; "" for none.
	JaegerURL string
	// AllowReplay lets POST /api/deadletters/replay replay dead letters
	// (with WithReplay). Default: read-only.
	AllowReplay bool
	// Interval is how often the event stream sends the map. Default:
	// DefaultInterval.
	Interval time.Duration
	// Idle is how long after the last API request (or the end of the last
	// event stream) the console closes its clients and stops keeping
	// spans. Default: DefaultIdle.
	Idle time.Duration
	// SearchTimeout bounds a search. Default: DefaultSearchTimeout.
	SearchTimeout time.Duration
	// UnfinishedAfter is how long after its end an origin-time cohort is
	// judged (status.Config.UnfinishedAfter). Default:
	// status.DefaultUnfinishedAfter.
	UnfinishedAfter time.Duration
	// MaxStreams bounds the event streams (GET /api/events) open at once:
	// more are answered 503 with Retry-After and their connections closed,
	// and the browser polls the map instead. Each stream holds a
	// connection, which on run --serve is one of the gateway's
	// --max-connections. Default: DefaultMaxStreams.
	MaxStreams int
	// MaxStreamDuration ends each event stream after it: the browser then
	// polls the map, and a forgotten tab does not hold a connection for
	// good. Default: DefaultMaxStreamDuration.
	MaxStreamDuration time.Duration
	// AllowedHosts are the host names (without port) the console answers
	// to besides IP addresses, localhost and *.localhost. A request naming
	// any other host in its Host header is refused with 403: a web page
	// whose name an attacker points at the console's address (DNS
	// rebinding) can neither read the console nor act through it. Add the
	// names a console reached through DNS is known by.
	AllowedHosts []string
}

// ReplayFunc replays the dead letters that cfg selects (its Topics are the
// pipeline's dead-letter topics).
type ReplayFunc func(ctx context.Context, cfg dlq.ReplayConfig) (dlq.ReplayResult, error)

// Option hands the console a collaborator. Only this package's With*
// functions make one; a nil Option is ignored.
type Option interface{ apply(*collaborators) }

type optionFunc func(*collaborators)

func (f optionFunc) apply(c *collaborators) { f(c) }

type collaborators struct {
	logger    *slog.Logger
	spans     *spans.Store
	newClient func(context.Context) (*producer.Client, error)
	replay    ReplayFunc
	traces    spans.TracesFunc
	http      *http.Client
	// unfinished is the meter provider of the unfinished-requests gauge
	// (WithUnfinishedGauge); nil for none.
	unfinished metric.MeterProvider
}

// WithLogger sets the logger; nil is ignored. Default: slog.Default().
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *collaborators) {
		if l != nil {
			c.logger = l
		}
	})
}

// WithSpanStore sets the store of the process's spans (register it as a
// span processor of the tracer provider): the first source of traces. The
// console turns it on with its first API request and off when idle.
func WithSpanStore(s *spans.Store) Option {
	return optionFunc(func(c *collaborators) { c.spans = s })
}

// WithRequestClient sets how searches get their request client (with a
// collector, such as pipeline.Pipeline.NewClient with collect): called on
// the first search, closed when idle. Without it, searches answer 503.
func WithRequestClient(newClient func(context.Context) (*producer.Client, error)) Option {
	return optionFunc(func(c *collaborators) { c.newClient = newClient })
}

// WithReplay sets how dead letters are replayed when Config.AllowReplay.
func WithReplay(f ReplayFunc) Option {
	return optionFunc(func(c *collaborators) { c.replay = f })
}

// WithTraces adds traces recorded elsewhere in the process, such as
// runsummary.Recorder.Traces of the run's slowest requests: looked up
// after the span store, and listed among the slowest.
func WithTraces(f func() []spans.Trace) Option {
	return optionFunc(func(c *collaborators) { c.traces = f })
}

// WithHTTPClient sets the client of the Jaeger query API; nil is ignored.
// Default: a client with a 10 s timeout.
func WithHTTPClient(hc *http.Client) Option {
	return optionFunc(func(c *collaborators) {
		if hc != nil {
			c.http = hc
		}
	})
}

// Console is the console's http.Handler. Close it when done.
type Console struct {
	cfg    Config
	collab collaborators
	static http.Handler
	mux    *http.ServeMux

	mu      sync.Mutex
	live    *live // nil until the first API request and after Idle
	streams int
	last    time.Time
	timer   *time.Timer
	closed  chan struct{}
	close   sync.Once
	// deadLetterReads holds a slot per dead-letter list being read,
	// streamSlots one per event stream open.
	deadLetterReads, streamSlots chan struct{}
	// gauge is the unfinished-requests gauge's registration, if any.
	gauge metric.Registration
}

// New returns the console of cfg.
func New(cfg Config, opts ...Option) (*Console, error) {
	if len(cfg.Topology.Stages) == 0 {
		return nil, errors.New("console: no stages")
	}
	if len(cfg.KafkaOptions) == 0 {
		return nil, errors.New("console: no Kafka options")
	}
	cfg.PathwaysTopic = cmp.Or(cfg.PathwaysTopic, pathwaytopic.DefaultTopic)
	cfg.Interval = cmp.Or(cfg.Interval, DefaultInterval)
	cfg.Idle = cmp.Or(cfg.Idle, DefaultIdle)
	cfg.SearchTimeout = cmp.Or(cfg.SearchTimeout, DefaultSearchTimeout)
	cfg.MaxStreams = cmp.Or(cfg.MaxStreams, DefaultMaxStreams)
	cfg.MaxStreamDuration = cmp.Or(cfg.MaxStreamDuration, DefaultMaxStreamDuration)
	if cfg.MaxStreams < 0 || cfg.MaxStreamDuration < 0 {
		return nil, errors.New("console: MaxStreams and MaxStreamDuration must not be negative")
	}
	cfg.JaegerURL = strings.TrimRight(cfg.JaegerURL, "/")
	c := collaborators{logger: slog.Default(), http: &http.Client{Timeout: 10 * time.Second}}
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	con := &Console{cfg: cfg, collab: c, static: http.FileServerFS(assets), mux: http.NewServeMux(), closed: make(chan struct{}),
		deadLetterReads: make(chan struct{}, maxDeadLetterReads), streamSlots: make(chan struct{}, cfg.MaxStreams)}
	con.api("GET /api/map", con.getMap)
	con.api("GET /api/events", con.events)
	con.api("POST /api/search", con.search)
	con.api("GET /api/traces/{id}", con.getTrace)
	con.api("GET /api/slowest", con.slowest)
	con.api("GET /api/deadletters", con.listDeadLetters)
	con.api("POST /api/deadletters/replay", con.replayDeadLetters)
	con.mux.HandleFunc("/api/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		writeError(w, http.StatusNotFound, "no such API endpoint")
	})
	con.mux.HandleFunc("GET /assets/", func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") { // no directory listings
			writeError(w, http.StatusNotFound, "not found")
			return
		}
		con.static.ServeHTTP(w, r)
	})
	con.mux.HandleFunc("GET /{$}", con.index)
	con.mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusNotFound, "not found")
	})
	if err := con.registerUnfinished(); err != nil {
		return nil, err
	}
	return con, nil
}

// ServeHTTP serves the console at the root and under Prefix; /console
// redirects to Prefix.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !c.hostAllowed(r.Host) {
		writeError(w, http.StatusForbidden, fmt.Sprintf("host %q is not allowed: the console answers to IP addresses, localhost and the names it is given (kretrieve console --allowed-hosts, run --console-allowed-hosts)", r.Host))
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	if r.URL.Path == strings.TrimSuffix(Prefix, "/") {
		http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
		return
	}
	if rest, ok := strings.CutPrefix(r.URL.Path, Prefix); ok {
		r2 := *r
		u := *r.URL
		u.Path, u.RawPath = "/"+rest, ""
		r2.URL = &u
		r = &r2
	}
	c.mux.ServeHTTP(w, r)
}

// hostAllowed reports whether a request whose Host header is hostport may
// be answered (see Config.AllowedHosts). An IP address is never a rebound
// name, and localhost names resolve only to the loopback (RFC 6761).
func (c *Console) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	return slices.ContainsFunc(c.cfg.AllowedHosts, func(a string) bool { return strings.EqualFold(strings.TrimSuffix(a, "."), host) })
}

// csrfChecked reports whether r carries CSRFHeader; if not, it answers 403.
func csrfChecked(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get(CSRFHeader) == "1" {
		return true
	}
	writeError(w, http.StatusForbidden, r.Method+" "+r.URL.Path+" needs the "+CSRFHeader+": 1 header")
	return false
}

func (c *Console) index(w http.ResponseWriter, _ *http.Request) {
	b, err := fs.ReadFile(assets, "assets/index.html")
	if err != nil {
		writeError(w, http.StatusInternalServerError, "no index.html")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(b)
}

// api installs an API handler: no-store, every POST refused without
// CSRFHeader before anything starts, and the console's live state started
// and kept alive by the request.
func (c *Console) api(pattern string, h func(http.ResponseWriter, *http.Request, *live)) {
	c.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		if r.Method == http.MethodPost && !csrfChecked(w, r) {
			return
		}
		l, err := c.acquire()
		if err != nil {
			writeError(w, http.StatusServiceUnavailable, err.Error())
			return
		}
		defer c.release()
		h(w, r, l)
	})
}

// Close closes the console's clients and ends its event streams.
func (c *Console) Close() {
	c.close.Do(func() {
		close(c.closed)
		if c.gauge != nil {
			_ = c.gauge.Unregister()
		}
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
	}
	c.stopLocked()
}

// Started reports whether the console holds its live state (Kafka
// clients, span keeping): false before the first API request and after
// Idle.
func (c *Console) Started() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.live != nil
}

// live is what the console holds while a browser asks: its Kafka clients,
// the request client and the map's caches.
type live struct {
	c      *Console
	status *status.Source

	mapMu  sync.Mutex // one map read at a time, shared by the streams
	mapAt  time.Time
	mapDoc mapDoc

	reqMu  sync.Mutex
	req    *producer.Client
	closed bool
}

// acquire returns the live state, starting it on the first request, and
// counts the request as in flight until release.
func (c *Console) acquire() (*live, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.closed:
		return nil, errors.New("console closed")
	default:
	}
	if c.live == nil {
		src, err := status.New(status.Config{Topology: c.cfg.Topology, KafkaOptions: c.cfg.KafkaOptions,
			PathwaysTopic: c.cfg.PathwaysTopic, Groups: c.cfg.Topology.Groups(), Reasons: true, Logger: c.collab.logger,
			UnfinishedAfter: c.cfg.UnfinishedAfter})
		if err != nil {
			return nil, err
		}
		c.live = &live{c: c, status: src}
		if c.collab.spans != nil {
			c.collab.spans.Start()
		}
		c.collab.logger.Info("console started: Kafka clients open, keeping spans")
	}
	c.streams++
	c.last = time.Now()
	return c.live, nil
}

// release ends a request; the live state stops after Idle without one.
func (c *Console) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.streams--
	c.last = time.Now()
	if c.streams > 0 || c.live == nil {
		return
	}
	if c.timer == nil {
		c.timer = time.AfterFunc(c.cfg.Idle, c.idle)
	} else {
		c.timer.Reset(c.cfg.Idle)
	}
}

// idle stops the live state if no request came for Idle.
func (c *Console) idle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.streams > 0 || c.live == nil {
		return
	}
	if wait := c.cfg.Idle - time.Since(c.last); wait > 0 {
		c.timer.Reset(wait)
		return
	}
	c.stopLocked()
	c.collab.logger.Info("console idle: Kafka clients closed, spans dropped")
}

func (c *Console) stopLocked() {
	if c.live == nil {
		return
	}
	l := c.live
	c.live = nil
	if c.collab.spans != nil {
		c.collab.spans.Stop()
	}
	// Requests still using l finish with closed clients: they are done
	// (streams is 0) unless the console itself is closing.
	go l.close()
}

func (l *live) close() {
	l.reqMu.Lock()
	l.closed = true
	if l.req != nil {
		_ = l.req.Close(context.Background())
		l.req = nil
	}
	l.reqMu.Unlock()
	l.status.Close()
}

// requestClient returns the search's request client, created on first use.
func (l *live) requestClient(ctx context.Context) (*producer.Client, error) {
	l.reqMu.Lock()
	defer l.reqMu.Unlock()
	if l.closed {
		return nil, errors.New("console stopped")
	}
	if l.req == nil {
		if l.c.collab.newClient == nil {
			return nil, errNoSearch
		}
		rc, err := l.c.collab.newClient(context.WithoutCancel(ctx))
		if err != nil {
			return nil, err
		}
		l.req = rc
	}
	return l.req, nil
}

var errNoSearch = errors.New("search is not available here")

// writeJSON writes v with encoding/json's HTML escaping (<, >, & as
// \u003c, \u003e, \u0026): record text stays data wherever it lands.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(errorBody{Error: "encode: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

type errorBody struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorBody{Error: msg})
}
