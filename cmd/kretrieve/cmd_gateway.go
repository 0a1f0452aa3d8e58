package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/kretrieve/kretrieve/kafkaclient"
	"github.com/kretrieve/kretrieve/pipeline"
	"github.com/kretrieve/kretrieve/producer"
)

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
}

func (g *gatewayFlags) declare(s *settings) {
	s.str(&g.httpListen, "http-listen", "127.0.0.1:8080", "HTTP address of the gateway")
	s.integer(&g.maxBodyBytes, "max-body-bytes", producer.DefaultMaxBodyBytes, "largest accepted HTTP request body")
	s.boolean(&g.trustBoundary, "trust-boundary", true, "treat HTTP callers as outside: a new trace per request, linked to (not continuing) an incoming traceparent, whose sampled flag and baggage are not trusted (--trust-boundary=false to continue callers' traces)")
	s.str(&g.tlsCertFile, "http-tls-cert-file", "", "PEM certificate: serve HTTPS only (with --http-tls-key-file)")
	s.str(&g.tlsKeyFile, "http-tls-key-file", "", "PEM private key of --http-tls-cert-file")
	s.str(&g.tlsClientCA, "http-tls-client-ca-file", "", "PEM CAs: require HTTP client certificates they sign (mutual TLS)")
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
	if _, err := g.config().ServerTLSConfig(); err != nil {
		errs = append(errs, fmt.Errorf("http-tls-*: %w", err))
	}
	return errors.Join(errs...)
}

func (g gatewayFlags) config() producer.GatewayConfig {
	return producer.GatewayConfig{Timeout: g.timeout, MaxBodyBytes: int64(g.maxBodyBytes), TrustBoundary: g.trustBoundary,
		TLSCertFile: g.tlsCertFile, TLSKeyFile: g.tlsKeyFile, TLSClientCAFile: g.tlsClientCA}
}

func loadGatewayConfig(args []string, getenv func(string) string, out io.Writer) (gatewayConfig, error) {
	var c gatewayConfig
	s := newSettings("gateway", getenv, out)
	c.commonConfig.declare(s, "gateway", kafkaclient.DefaultBrokers)
	c.gatewayFlags.declare(s)
	c.declareTrustedBaggage(s)
	s.duration(&c.timeout, "timeout", producer.DefaultGatewayTimeout, "how long POST /v1/search waits for the result")
	c.pathways.declare(s)
	if err := s.parse(args); err != nil {
		return c, err
	}
	return c, errors.Join(c.commonConfig.validate(), validateBrokers(c.brokers), c.gatewayFlags.validate(), c.pathways.validate())
}

// runGateway serves the HTTP gateway until ctx is done.
func runGateway(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) (err error) {
	cfg, err := loadGatewayConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	comp, pc, err := cfg.start(ctx, "gateway", stderr)
	if err != nil {
		return err
	}
	defer comp.flush(&err)
	if err := ensureTopics(ctx, pc); err != nil {
		return err
	}
	// Stopped after serveGateway has drained: its last window holds the
	// last requests.
	defer publishPathways(ctx, cfg.pathways, pc, comp)()
	return serveGateway(ctx, pc, cfg.gatewayFlags, comp.logger)
}

// serveGateway serves the gateway on flags.httpListen until ctx is done, then
// drains in-flight HTTP requests.
func serveGateway(ctx context.Context, pc pipeline.Config, flags gatewayFlags, logger *slog.Logger) error {
	gc := flags.config()
	tc, err := gc.ServerTLSConfig()
	if err != nil {
		return err
	}
	g, client, err := pipeline.NewGateway(ctx, pc, gc)
	if err != nil {
		return err
	}
	defer client.Close(context.WithoutCancel(ctx))
	ln, err := net.Listen("tcp", flags.httpListen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: g, ReadHeaderTimeout: 5 * time.Second, TLSConfig: tc,
		// TLS handshake failures and the like, at warn.
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	logger.InfoContext(ctx, "gateway listening", "addr", ln.Addr().String(), "tls", tc != nil, "mtls", tc != nil && tc.ClientCAs != nil)
	errc := make(chan error, 1)
	go func() {
		if tc != nil {
			errc <- srv.ServeTLS(ln, "", "")
			return
		}
		errc <- srv.Serve(ln)
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flags.timeout+time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}
