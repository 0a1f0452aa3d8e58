// SPDX-License-Identifier: Apache-2.0

package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/kretrieve/kretrieve/gateway"
	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/pipeline"
)

// gatewayCommand is "kretrieve gateway".
func (e *cli) gatewayCommand() *cobra.Command {
	return e.command(&cobra.Command{
		Use:     "gateway",
		GroupID: "pipeline",
		Short:   "HTTP gateway: POST /v1/search, POST /v1/requests",
		Long: `Serve the HTTP gateway until interrupted: POST /v1/search publishes a request
and answers with its result, POST /v1/requests publishes and answers at
once; /healthz and /readyz report liveness and readiness.`,
		Example: `  kretrieve gateway --http-listen 0.0.0.0:8080
  curl -d '{"query":"parse a URL"}' http://127.0.0.1:8080/v1/search`,
		Args: noArgs,
	}, bind(func(ctx context.Context, c gatewayConfig) error { return runGateway(ctx, c, e.stderr) }))
}

// gatewayConfig configures the gateway command.
type gatewayConfig struct {
	commonConfig
	gatewayFlags
	pathways pathwaysFlags
}

// gatewayFlags are the HTTP settings shared by gateway and run --serve.
type gatewayFlags struct {
	httpListen    string
	timeout       time.Duration
	maxBodyBytes  int
	trustBoundary bool
	tlsCertFile   string
	tlsKeyFile    string
	tlsClientCA   string
	// Overload and slow clients.
	maxInFlight       int
	readHeaderTimeout time.Duration
	readTimeout       time.Duration
	idleTimeout       time.Duration
	maxHeaderBytes    int
	maxConnections    int
	serverName        string
	trustForwarded    bool
	// Results of enqueued requests (GET /v1/requests/{id}).
	resultRetention time.Duration
	maxResults      int
	maxResultBytes  int
}

func (g *gatewayFlags) declare(s *settings) {
	s.str(&g.httpListen, "http-listen", "127.0.0.1:8080", "HTTP address of the gateway")
	s.str(&g.serverName, "server-name", "", "server.address (host[:port]) of the HTTP spans and metrics, whatever Host callers send (default: the --http-listen address)")
	s.boolean(&g.trustForwarded, "trust-forwarded", false, "let X-Forwarded-For set the spans' client.address: only behind a proxy that sets it (default: ignored, the peer's address)")
	s.integer(&g.maxBodyBytes, "max-body-bytes", gateway.DefaultMaxBodyBytes, "largest accepted HTTP request body")
	s.boolean(&g.trustBoundary, "trust-boundary", true, "treat HTTP callers as outside: a new trace per request, linked to (not continuing) an incoming traceparent, whose sampled flag and baggage are not trusted (--trust-boundary=false to continue callers' traces)")
	s.str(&g.tlsCertFile, "http-tls-cert-file", "", "PEM certificate: serve HTTPS only (with --http-tls-key-file)")
	s.str(&g.tlsKeyFile, "http-tls-key-file", "", "PEM private key of --http-tls-cert-file")
	s.str(&g.tlsClientCA, "http-tls-client-ca-file", "", "PEM CAs: require HTTP client certificates they sign (mutual TLS)")
	s.integer(&g.maxInFlight, "max-in-flight", gateway.DefaultMaxInFlight, "API requests handled at once; more are answered 503 with Retry-After: 1 at once. Bodies in memory stay under this × --max-body-bytes; lower sheds load sooner and bounds memory tighter, higher lets more requests wait for the pipeline (each up to --timeout)")
	s.duration(&g.readHeaderTimeout, "http-read-header-timeout", gateway.DefaultReadHeaderTimeout, "time to receive a request's headers; a stalled client holds a connection this long (lower frees slots sooner, too low cuts off slow links)")
	s.duration(&g.readTimeout, "http-read-timeout", gateway.DefaultReadTimeout, "time to receive a whole request with its body (408 after); a body trickled byte by byte holds a connection this long (lower frees it sooner, too low refuses large bodies on slow links)")
	s.duration(&g.idleTimeout, "http-idle-timeout", gateway.DefaultIdleTimeout, "how long an idle keep-alive connection stays open (lower frees connection slots sooner, higher saves clients new TCP and TLS handshakes)")
	s.integer(&g.maxHeaderBytes, "http-max-header-bytes", gateway.DefaultMaxHeaderBytes, "largest request header block (431 beyond); bounds memory per connection, must fit traceparent, baggage and credentials")
	s.duration(&g.resultRetention, "result-retention", gateway.DefaultResultRetention, "how long after POST /v1/requests its result (or pending state) can be read with GET /v1/requests/{id}, at this gateway instance; then 404 (longer lets slow callers poll later, and holds more results)")
	s.integer(&g.maxResults, "max-results", gateway.DefaultMaxResults, "enqueued requests held for GET /v1/requests/{id}, pending or answered; beyond, the oldest are evicted (their GET says so)")
	s.integer(&g.maxResultBytes, "max-result-bytes", gateway.DefaultMaxResultBytes, "bytes of the held results' answers (plus about 256 per request); beyond, the oldest are evicted")
	s.integer(&g.maxConnections, "max-connections", gateway.DefaultMaxConnections, "HTTP connections open at once; more wait in the kernel accept queue until one closes (bounds memory and file descriptors; too low lets idle or stalled clients delay others)")
}

func (g gatewayFlags) validate() error {
	var errs []error
	if _, _, err := net.SplitHostPort(g.httpListen); err != nil {
		errs = append(errs, fmt.Errorf("http-listen: %w", err))
	}
	if g.timeout <= 0 {
		errs = append(errs, errors.New("timeout: must be positive"))
	}
	if g.maxBodyBytes < 1024 {
		errs = append(errs, errors.New("max-body-bytes: must be at least 1024"))
	}
	if g.maxInFlight < 1 || g.maxConnections < 1 || g.maxHeaderBytes < 1024 {
		errs = append(errs, errors.New("max-in-flight, max-connections: must be at least 1; http-max-header-bytes: at least 1024"))
	}
	if g.resultRetention <= 0 || g.maxResults < 1 || g.maxResultBytes < 4096 {
		errs = append(errs, errors.New("result-retention: must be positive; max-results: at least 1; max-result-bytes: at least 4096"))
	}
	if g.readHeaderTimeout <= 0 || g.readTimeout <= 0 || g.idleTimeout <= 0 {
		errs = append(errs, errors.New("http-read-header-timeout, http-read-timeout, http-idle-timeout: must be positive"))
	}
	if _, err := g.config().ServerTLSConfig(); err != nil {
		errs = append(errs, fmt.Errorf("http-tls-*: %w", err))
	}
	return errors.Join(errs...)
}

func (g gatewayFlags) config() gateway.Config {
	return gateway.Config{Timeout: g.timeout, MaxBodyBytes: int64(g.maxBodyBytes), TrustBoundary: g.trustBoundary,
		TLSCertFile: g.tlsCertFile, TLSKeyFile: g.tlsKeyFile, TLSClientCAFile: g.tlsClientCA,
		MaxInFlight: g.maxInFlight, ReadHeaderTimeout: g.readHeaderTimeout, ReadTimeout: g.readTimeout,
		IdleTimeout: g.idleTimeout, MaxHeaderBytes: g.maxHeaderBytes, MaxConnections: g.maxConnections,
		ServerName: cmp.Or(g.serverName, g.httpListen), TrustForwarded: g.trustForwarded,
		ResultRetention: g.resultRetention, MaxResults: g.maxResults, MaxResultBytes: int64(g.maxResultBytes)}
}

// flags declares the flags of a gatewayConfig on s and returns the check of
// their values, run once they are parsed.
func (c *gatewayConfig) flags(s *settings) (check func(args []string) error) {
	c.commonConfig.declare(s, "gateway", kafkaclient.DefaultBrokers)
	c.gatewayFlags.declare(s)
	c.declareTrustedBaggage(s)
	c.declareMetricsListen(s)
	s.duration(&c.timeout, "timeout", gateway.DefaultTimeout, "how long POST /v1/search waits for the result")
	c.pathways.declare(s)
	return func(args []string) error {
		return errors.Join(c.commonConfig.validate(), validateBrokers(c.brokers), c.gatewayFlags.validate(), c.pathways.validate())
	}
}

// runGateway serves the HTTP gateway until ctx is done.
func runGateway(ctx context.Context, cfg gatewayConfig, stderr io.Writer) (err error) {
	return command{role: "gateway"}.run(ctx, cfg.commonConfig, stderr, func(comp *component, p *pipeline.Pipeline) error {
		// Listen at once: while Kafka is not reachable the process is
		// alive (/healthz) but not ready (/readyz 503), instead of not
		// answering at all.
		ln, err := listenGateway(cfg.gatewayFlags)
		if err != nil {
			return err
		}
		stopStarting, err := serveStarting(ln, cfg.gatewayFlags.config(), "starting: waiting for kafka at "+cfg.brokers)
		if err != nil {
			ln.Close()
			return err
		}
		err = ensureTopicsWhenReachable(ctx, p)
		stopStarting()
		if err != nil {
			ln.Close()
			return err
		}
		// Stopped after serveGatewayOn has drained: its last window holds
		// the last requests.
		defer publishPathways(ctx, cfg.pathways, p, comp, nil)()
		return serveGatewayOn(ctx, p, cfg.gatewayFlags, ln, comp.logger, nil)
	})
}

// serveStarting serves gateway.Starting(why) on ln, with the gateway's TLS,
// until the returned stop, which leaves ln open for the gateway.
func serveStarting(ln net.Listener, gc gateway.Config, why string) (stop func(), err error) {
	tc, err := gc.ServerTLSConfig()
	if err != nil {
		return nil, err
	}
	var l net.Listener = keepOpen{ln}
	if tc != nil {
		l = tls.NewListener(l, tc)
	}
	srv := &http.Server{Handler: gateway.Starting(why), ReadHeaderTimeout: gateway.DefaultReadHeaderTimeout}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
		if d, ok := ln.(interface{ SetDeadline(time.Time) error }); ok {
			_ = d.SetDeadline(time.Time{})
		}
	}, nil
}

// keepOpen is a listener whose Close only wakes a blocked Accept (a
// deadline in the past), so that the start-up server can stop without
// closing the socket the gateway goes on serving.
type keepOpen struct{ net.Listener }

func (k keepOpen) Close() error {
	if d, ok := k.Listener.(interface{ SetDeadline(time.Time) error }); ok {
		return d.SetDeadline(time.Now())
	}
	return nil
}

// listenGateway listens on --http-listen. A port already taken is an
// error naming the flag: the command must fail, not leave the traffic to
// whoever holds the port.
func listenGateway(flags gatewayFlags) (net.Listener, error) {
	ln, err := net.Listen("tcp", flags.httpListen)
	if err != nil {
		return nil, fmt.Errorf("http-listen %s: %w", flags.httpListen, err)
	}
	return ln, nil
}

// mount is a handler served next to the gateway's API, such as run
// --serve's console; an admitted one counts in --max-in-flight with the
// API (gateway.Gateway.HandleAdmitted).
type mount struct {
	pattern  string
	handler  http.Handler
	admitted bool
}

// serveGatewayOn serves the gateway on ln, which it closes, with its
// limits on requests in flight, connections and slow clients
// (gateway.Gateway.Serve), until ctx is done, then drains in-flight HTTP
// requests. mounts are served next to the API.
func serveGatewayOn(ctx context.Context, p *pipeline.Pipeline, flags gatewayFlags, ln net.Listener, logger *slog.Logger, mounts []mount) error {
	gc := flags.config()
	g, client, err := p.NewGateway(ctx, gc)
	if err != nil {
		ln.Close()
		return err
	}
	defer client.Close(context.WithoutCancel(ctx))
	for _, m := range mounts {
		if m.admitted {
			g.HandleAdmitted(m.pattern, m.handler)
		} else {
			g.Handle(m.pattern, m.handler)
		}
	}
	logger.InfoContext(ctx, "gateway listening", "addr", ln.Addr().String(), "tls", gc.TLSCertFile != "", "mtls", gc.TLSClientCAFile != "",
		"max_in_flight", gc.MaxInFlight, "max_connections", gc.MaxConnections)
	return g.Serve(ctx, ln)
}
