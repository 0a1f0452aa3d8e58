// SPDX-License-Identifier: Apache-2.0

package gateway

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/kretrieve/kretrieve/internal/servertls"
	"github.com/kretrieve/kretrieve/messages"
	"github.com/kretrieve/kretrieve/otelnames"
	"github.com/kretrieve/kretrieve/producer"
	"github.com/kretrieve/kretrieve/results"
	"github.com/kretrieve/kretrieve/tracecontext"
)

// Gateway defaults.
const (
	DefaultTimeout      = 10 * time.Second
	DefaultMaxBodyBytes = 64 << 10
	DefaultServerName   = "kretrieve-gateway"
)

// MaxRecordedHeaderBytes caps the caller's header values that HTTP spans
// record (User-Agent, and X-Forwarded-For with TrustForwarded): longer ones
// are cut to it.
const MaxRecordedHeaderBytes = 256

// Config configures the HTTP gateway.
type Config struct {
	// Timeout bounds how long POST /v1/search waits for a result.
	// Default: DefaultTimeout.
	Timeout time.Duration
	// MaxBodyBytes caps request bodies (413 beyond). Default: DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxInFlight bounds the API requests (POST /v1/search, POST
	// /v1/requests and GET /v1/requests/{id}) handled at once. Beyond it a request is answered at
	// once, before its body is read, with 503, Retry-After: 1 and the error
	// code "overloaded", and counted in otelnames.MetricGatewayRefused. With MaxBodyBytes it
	// bounds the request bodies held in memory: MaxInFlight × MaxBodyBytes
	// (64 MiB by default). Default: DefaultMaxInFlight.
	MaxInFlight int
	// ReadHeaderTimeout bounds reading a request's headers, ReadTimeout
	// reading the whole request with its body (a body still arriving then
	// is answered 408 and the connection closed), IdleTimeout how long a
	// keep-alive connection may wait for its next request. Defaults:
	// DefaultReadHeaderTimeout, DefaultReadTimeout, DefaultIdleTimeout.
	// Used by Serve.
	ReadHeaderTimeout, ReadTimeout, IdleTimeout time.Duration
	// MaxHeaderBytes bounds a request's headers, keys and values: beyond
	// it the gateway answers 431 with its JSON error (code
	// headers_too_large). Serve has net/http stop reading headers at twice
	// this plus 4 KiB, answering a bare 431 of its own: what a connection
	// can make the server hold stays bounded even when the JSON answer
	// cannot be sent. Default: DefaultMaxHeaderBytes.
	MaxHeaderBytes int
	// MaxConnections bounds the connections open at once; more wait to be
	// accepted until one closes. With MaxHeaderBytes it bounds what
	// connections hold before a request is admitted: each at most about
	// 2 × MaxHeaderBytes + 4 KiB of headers, 8 KiB of buffers and a goroutine
	// (an estimate from net/http, not measured). Default:
	// DefaultMaxConnections. Used by Serve.
	MaxConnections int
	// TrustBoundary treats callers as outside the system: every request
	// starts a new trace, sampled by our own sampler (the incoming sampled
	// flag counts for nothing) and linked to (not parented by) an incoming
	// traceparent; incoming tracestate is not carried and incoming baggage
	// is dropped except the TrustedBaggage members. kretrieve's gateway
	// command turns it on by default. Default: false (continue the caller's
	// trace and baggage).
	TrustBoundary bool
	// TrustedBaggage lists the baggage keys that cross the trust boundary.
	// Default: none.
	TrustedBaggage []string
	// ServerName ("host" or "host:port") is the server.address (and
	// server.port) of every HTTP span and metric, whatever Host header a
	// caller sends: the metric series stay few. Default: DefaultServerName.
	ServerName string
	// TrustForwarded lets X-Forwarded-For set the spans' client.address:
	// only behind a proxy that sets it. Without it X-Forwarded-For and
	// Forwarded are ignored and client.address is the peer's address.
	// Default: false.
	TrustForwarded bool
	// TLSCertFile and TLSKeyFile (PEM) make the server serve HTTPS only
	// (see ServerTLSConfig). Default: plain HTTP.
	TLSCertFile, TLSKeyFile string
	// TLSClientCAFile (PEM) makes the server require client certificates
	// signed by these CAs (mutual TLS). Needs TLSCertFile. Default: none.
	// Then a request enqueued with one certificate can be read back only
	// with the same certificate.
	TLSClientCAFile string
	// ResultRetention is how long after its POST /v1/requests an enqueued
	// request's result (or its pending state) can be read with GET
	// /v1/requests/{id}; a result not arrived by then is no longer
	// awaited. Default: DefaultResultRetention.
	ResultRetention time.Duration
	// MaxResults and MaxResultBytes bound the requests held for GET
	// /v1/requests/{id}, pending or with their result, and the bytes of
	// their answers (plus an estimated 256 bytes each): beyond either the
	// oldest are evicted (and the GET says so until their retention ends).
	// Defaults: DefaultMaxResults, DefaultMaxResultBytes.
	MaxResults     int
	MaxResultBytes int64
}

// Validate reports configuration errors.
func (c Config) Validate() error {
	if c.Timeout < 0 || c.MaxBodyBytes < 0 || c.MaxInFlight < 0 || c.ReadHeaderTimeout < 0 || c.ReadTimeout < 0 ||
		c.IdleTimeout < 0 || c.MaxHeaderBytes < 0 || c.MaxConnections < 0 || c.ResultRetention < 0 || c.MaxResults < 0 || c.MaxResultBytes < 0 {
		return errors.New("gateway: timeouts and limits must not be negative")
	}
	_, err := c.ServerTLSConfig()
	return err
}

// ServerTLSConfig returns the TLS configuration to serve the gateway with
// (http.Server.TLSConfig, then ServeTLS with empty file names), or nil
// when TLSCertFile is unset: plain HTTP. The certificate is read once, here.
func (c Config) ServerTLSConfig() (*tls.Config, error) {
	tc, err := servertls.Load(c.TLSCertFile, c.TLSKeyFile, c.TLSClientCAFile)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	return tc, nil
}

// Gateway serves the HTTP API: POST /v1/search (publish and wait),
// POST /v1/requests (publish only) and GET /v1/requests/{id} (its result),
// GET /healthz and GET /readyz.
type Gateway struct {
	cfg    config
	client *producer.Client
	ready  func(context.Context) error
	mux    *http.ServeMux
	admit  *admission
	// results holds the enqueued requests' outcomes (GET /v1/requests/{id}).
	results *resultStore
	// readiness is /readyz's check in flight and publish failures.
	readiness readiness
}

// New returns the gateway configured by cfg, publishing through client,
// whose Collector must be set for /v1/search (without it, POST
// /v1/requests publishes only: no result to GET). ready reports whether Kafka
// is reachable and the topics exist; /readyz answers 503 with its error,
// or with the Collector's (see results.Collector.Ready) when it is behind.
// opts hand in the tracer provider, meter provider, propagator and logger.
func New(cfg Config, client *producer.Client, ready func(context.Context) error, opts ...Option) (*Gateway, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := newConfig(cfg, opts)
	admit, err := newAdmission(c.MaxInFlight, c.MeterProvider)
	if err != nil {
		return nil, err
	}
	admit.queueWait, admit.budget = c.queueWait, c.Timeout
	g := &Gateway{cfg: c, client: client, ready: ready, mux: http.NewServeMux(), admit: admit,
		results: newResultStore(c.ResultRetention, c.MaxResults, c.MaxResultBytes)}
	g.route("POST /v1/search", g.search, true)
	g.route("POST /v1/requests", g.enqueue, false)
	g.route("GET "+ResultsPath+"{id}", g.result, false)
	g.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	g.mux.HandleFunc("GET /readyz", g.readyz)
	return g, nil
}

// Handle serves h for pattern (an http.ServeMux pattern, such as
// "/console/") next to the API, without the API's admission control and
// server spans: a handler with its own limits, such as the console
// (package console). Call it before Serve.
func (g *Gateway) Handle(pattern string, h http.Handler) { g.mux.Handle(pattern, h) }

// HandleAdmitted is Handle behind the API's admission control: a request
// to pattern counts in MaxInFlight with the API's, and is refused as they
// are (503 overloaded) when it is full. For handlers that do an API
// request's work, such as the console's search. Call it before Serve.
func (g *Gateway) HandleAdmitted(pattern string, h http.Handler) {
	g.mux.Handle(pattern, g.admit.wrap(pattern, h))
}

// route installs an API handler behind admission control and otelhttp,
// whose server span is the root of the request's trace (or continues an
// incoming traceparent). The incoming trace context is limited as on Kafka
// records (see tracecontext.LimitPropagator) before anything parses it.
//
// A budgeted route's callers wait for the result: it is also refused by
// queue wait (see WithQueueWait).
func (g *Gateway) route(pattern string, h http.HandlerFunc, budgeted bool) {
	prop := tracecontext.LimitPropagator(g.cfg.Propagator)
	if g.cfg.TrustBoundary {
		prop = tracecontext.TrustBoundaryPropagator(g.cfg.Propagator, g.cfg.TrustedBaggage...)
	}
	opts := []otelhttp.Option{
		otelhttp.WithTracerProvider(g.cfg.TracerProvider),
		otelhttp.WithMeterProvider(g.cfg.MeterProvider),
		otelhttp.WithPropagators(prop),
		otelhttp.WithSpanNameFormatter(func(op string, _ *http.Request) string { return op }),
		otelhttp.WithServerName(g.cfg.ServerName),
	}
	if g.cfg.TrustBoundary {
		opts = append(opts, otelhttp.WithPublicEndpointFn(func(*http.Request) bool { return true }))
	}
	g.mux.Handle(pattern, g.admit.wrapRoute(pattern, g.recordable(otelhttp.NewHandler(h, pattern, opts...)), budgeted))
}

// recordable bounds what otelhttp records of a request, all of it the
// caller's to choose: Host becomes ServerName, X-Forwarded-For and
// Forwarded are dropped unless TrustForwarded, and User-Agent and
// X-Forwarded-For are cut to MaxRecordedHeaderBytes.
func (g *Gateway) recordable(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Host = g.cfg.ServerName
		if !g.cfg.TrustForwarded {
			r.Header.Del("X-Forwarded-For")
			r.Header.Del("Forwarded")
		}
		for _, k := range []string{"User-Agent", "X-Forwarded-For"} {
			if v := r.Header.Get(k); len(v) > MaxRecordedHeaderBytes {
				r.Header.Set(k, strings.ToValidUTF8(v[:MaxRecordedHeaderBytes], ""))
			}
		}
		next.ServeHTTP(w, r)
	})
}

// ServeHTTP implements http.Handler. Requests whose headers exceed
// MaxHeaderBytes are refused with 431, and requests whose body is framed by
// Transfer-Encoding with 400, before they are routed; both close the
// connection. A request that no route takes gets the API's JSON error:
// 404, or 405 with Allow.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if len(r.TransferEncoding) > 0 {
		// net/http drops a Content-Length sent with Transfer-Encoding, so a
		// request with both (a smuggling attempt) cannot be told from one
		// with Transfer-Encoding alone: the API takes neither. Its bodies
		// are small; clients send Content-Length.
		w.Header().Set("Connection", "close")
		writeJSON(w, http.StatusBadRequest, errorBody{APIError{Code: "bad_framing",
			Message: "Transfer-Encoding is not accepted (with or without Content-Length); send the body with Content-Length"}})
		return
	}
	if n := requestHeaderBytes(r); n > g.cfg.MaxHeaderBytes {
		w.Header().Set("Connection", "close")
		writeJSON(w, http.StatusRequestHeaderFieldsTooLarge, errorBody{APIError{Code: "headers_too_large",
			Message: fmt.Sprintf("request headers are %d bytes, over the limit of %d", n, g.cfg.MaxHeaderBytes)}})
		return
	}
	if h, pattern := g.mux.Handler(r); pattern == "" {
		notRouted(w, r, h)
		return
	}
	g.mux.ServeHTTP(w, r)
}

// requestHeaderBytes is the size of r's header fields as sent, "Key: value"
// and CRLF each, with the Host header.
func requestHeaderBytes(r *http.Request) int {
	n := len("Host: \r\n") + len(r.Host)
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(": \r\n") + len(v)
		}
	}
	return n
}

// SearchResponse is the body of a completed POST /v1/search.
type SearchResponse struct {
	RequestID string              `json:"request_id"`
	TraceID   string              `json:"trace_id"`
	Documents []messages.Document `json:"documents"`
	Timings   messages.Timings    `json:"timings"`
	// IndexFreshness is the result's: how fresh each stage's index was.
	IndexFreshness messages.IndexFreshness `json:"index_freshness,omitempty"`
}

// AcceptedResponse is the body of 202 and of errors that concern a published
// request (504, 502): the ids to find the request and its trace.
type AcceptedResponse struct {
	RequestID string    `json:"request_id"`
	TraceID   string    `json:"trace_id"`
	Error     *APIError `json:"error,omitempty"`
}

// APIError is the error body: {"error": {"code", "message", "field"}}.
type APIError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

type errorBody struct {
	Error APIError `json:"error"`
}

func (g *Gateway) search(w http.ResponseWriter, r *http.Request) {
	body, ok := g.read(w, r)
	if !ok {
		return
	}
	// Timeout bounds the whole call, the broker's acknowledgement included.
	// The record itself is not bound to ctx (another caller's record
	// buffered behind it would fail with it: see producer.Publisher) but
	// to the client's record delivery timeout. The record carries ctx's
	// deadline (messages.HeaderDeadline): past it, no stage works on it.
	ctx, cancel := context.WithTimeout(r.Context(), g.cfg.Timeout)
	defer cancel()
	call, err := g.client.StartJSON(ctx, body, true)
	if err != nil {
		g.startFailed(w, r, err)
		return
	}
	out, err := call.Wait(ctx, g.cfg.Timeout)
	g.published(err)
	status, answer, cut := outcomeAnswer(call.Request.RequestID, call.TraceID, out, err, call.Duration(), g.cfg.Timeout)
	if cut > 0 {
		trace.SpanFromContext(r.Context()).AddEvent(otelnames.EventClockSkew,
			trace.WithAttributes(otelnames.TimingsSkewedStages.Int(cut)))
	}
	writeJSON(w, status, answer)
}

// outcomeAnswer is the HTTP answer to a published request, from its
// outcome or the error its wait ended with (after timeout): the one
// mapping for POST /v1/search and GET /v1/requests/{id}. took is the call's
// duration, which bounds the result's queue times (those beyond it are
// clock skew between the workers and the record timestamps: cut counts the
// stages whose time was cut).
func outcomeAnswer(requestID, traceID string, out results.Outcome, err error, took, timeout time.Duration) (status int, answer any, cut int) {
	switch {
	case errors.Is(err, producer.ErrNotAcknowledged):
		return http.StatusGatewayTimeout, AcceptedResponse{requestID, traceID,
			&APIError{Code: "timeout", Message: fmt.Sprintf("not acknowledged by Kafka within %s; the request may still be published", timeout)}}, 0
	case errors.Is(err, producer.ErrTimeout):
		return http.StatusGatewayTimeout, AcceptedResponse{requestID, traceID,
			&APIError{Code: "timeout", Message: fmt.Sprintf("published, but no result within %s; the request may still complete", timeout)}}, 0
	case err != nil:
		return http.StatusServiceUnavailable, AcceptedResponse{requestID, traceID,
			&APIError{Code: "publish_failed", Message: err.Error() + "; send it again"}}, 0
	case out.Failed:
		return http.StatusBadGateway, AcceptedResponse{requestID, traceID,
			&APIError{Code: "dead_lettered", Message: fmt.Sprintf("dead-lettered on %s: %s", out.Topic, out.Reason)}}, 0
	}
	docs := out.Result.Documents
	if docs == nil {
		docs = []messages.Document{}
	}
	timings, cut := out.Result.Timings.BoundQueue(took)
	return http.StatusOK, SearchResponse{requestID, traceID, docs, timings, out.Result.IndexFreshness}, cut
}

func (g *Gateway) enqueue(w http.ResponseWriter, r *http.Request) {
	body, ok := g.read(w, r)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), g.cfg.Timeout)
	defer cancel()
	// Nobody waits for an enqueued request's result: the timeout bounds
	// the acknowledgement only, and the record carries no deadline. Its
	// outcome is held for GET /v1/requests/{id} (see startHeld).
	call, id, err := g.startHeld(r, body)
	if err != nil {
		g.startFailed(w, r, err)
		return
	}
	_, err = call.Acked(ctx)
	g.published(err)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		g.results.remove(id)
		g.fail(w, r, http.StatusServiceUnavailable, "publish_failed", err)
		return
	}
	if id != "" {
		w.Header().Set("Location", ResultsPath+id)
	}
	if err != nil {
		// It may still be published: its result can still be read.
		writeJSON(w, http.StatusGatewayTimeout, AcceptedResponse{call.Request.RequestID, call.TraceID,
			&APIError{Code: "timeout", Message: fmt.Sprintf("not acknowledged by Kafka within %s; the request may still be published", g.cfg.Timeout)}})
		return
	}
	writeJSON(w, http.StatusAccepted, AcceptedResponse{RequestID: call.Request.RequestID, TraceID: call.TraceID})
}

// read enforces content type and body size, writing the 415/413/408/400
// answer itself when it fails, and returns the body. The request contract
// is checked once, by producer.Client.StartJSON (see startFailed).
func (g *Gateway) read(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeJSON(w, http.StatusUnsupportedMediaType, errorBody{APIError{Code: "unsupported_media_type", Message: "Content-Type must be application/json"}})
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.cfg.MaxBodyBytes))
	if err != nil {
		var (
			tooBig *http.MaxBytesError
			netErr net.Error
		)
		switch {
		case errors.As(err, &tooBig):
			writeJSON(w, http.StatusRequestEntityTooLarge, errorBody{APIError{Code: "body_too_large", Message: fmt.Sprintf("body exceeds %d bytes", g.cfg.MaxBodyBytes)}})
		case errors.As(err, &netErr) && netErr.Timeout():
			w.Header().Set("Connection", "close")
			writeJSON(w, http.StatusRequestTimeout, errorBody{APIError{Code: "request_timeout", Message: fmt.Sprintf("request not received within %s", g.cfg.ReadTimeout)}})
		default:
			writeJSON(w, http.StatusBadRequest, errorBody{APIError{Code: "bad_body", Message: err.Error()}})
		}
		return nil, false
	}
	return body, true
}

// startFailed answers a request that producer.Client.StartJSON refused:
// 400 for a body that breaks the request contract (the HTTP body follows
// the Kafka request contract exactly, so one decoder decides for both), 409
// for a request id in use, else 503.
func (g *Gateway) startFailed(w http.ResponseWriter, r *http.Request, err error) {
	var (
		ve *messages.ValidationError
		de *messages.DecodeError
	)
	if errors.As(err, &ve) || errors.As(err, &de) {
		e := APIError{Code: "invalid_request", Message: err.Error()}
		if ve != nil {
			e.Field = ve.Field
		}
		writeJSON(w, http.StatusBadRequest, errorBody{e})
		return
	}
	if errors.Is(err, results.ErrRequestIDInUse) {
		writeJSON(w, http.StatusConflict, errorBody{APIError{Code: "request_id_in_use", Field: "request_id",
			Message: "request_id is already in flight at this gateway or was answered less than 10 minutes ago; choose a new one, or leave it out"}})
		return
	}
	g.fail(w, r, http.StatusServiceUnavailable, "publish_failed", err)
}

func (g *Gateway) fail(w http.ResponseWriter, r *http.Request, status int, code string, err error) {
	g.cfg.Logger.ErrorContext(r.Context(), "gateway request failed", "code", code, "err", err)
	writeJSON(w, status, errorBody{APIError{Code: code, Message: err.Error()}})
}

// readyz answers 200 when Kafka is reachable with the topics, no request
// failed to publish recently, and the collector keeps up; else 503 with
// the reason. It answers within ReadyTimeout.
func (g *Gateway) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), ReadyTimeout)
	defer cancel()
	err := g.readiness.publishFailure()
	if err == nil {
		err = g.readiness.check(ctx, g.ready)
	}
	if err == nil && g.client != nil && g.client.Collector != nil {
		// A collector that is behind answers its callers late or not at
		// all (504): send them to another gateway until it catches up.
		err = g.client.Collector.Ready()
	}
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "error": err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// writeJSON writes v as the JSON answer, never to be sniffed as another
// type or cached. encoding/json escapes every string, < > & included
// (snippets' <mark> tags decode unchanged), so echoed values such as a
// caller's request_id cannot break out of the JSON or be read as markup.
func writeJSON(w http.ResponseWriter, status int, v any) {
	setJSONHeaders(w)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// writeBody is writeJSON of a body already encoded.
func writeBody(w http.ResponseWriter, status int, body []byte) {
	setJSONHeaders(w)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func setJSONHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
}
