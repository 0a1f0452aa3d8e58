// SPDX-License-Identifier: Apache-2.0

package gateway

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// Server defaults: how long and how many slow or idle clients may hold the
// gateway.
const (
	DefaultMaxInFlight       = 1024
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 10 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
	DefaultMaxHeaderBytes    = 16 << 10
	DefaultMaxConnections    = 4096
)

// writeMargin is what the write timeout leaves for writing the response
// after the read timeout and the result timeout.
const writeMargin = 5 * time.Second

// Serve serves the gateway on ln until ctx is done, then stops accepting and
// drains the requests in flight for at most Timeout + 1 s. The server has the
// configuration's TLS and limits: ReadHeaderTimeout, ReadTimeout,
// IdleTimeout, MaxHeaderBytes, at most MaxConnections connections open (the
// next ones wait in the kernel's accept queue until one closes), and a write
// timeout of ReadTimeout + Timeout + 5 s, which a /v1/search waiting its
// full Timeout stays within.
func (g *Gateway) Serve(ctx context.Context, ln net.Listener) error {
	tc, err := g.cfg.ServerTLSConfig()
	if err != nil {
		return err
	}
	srv := g.server()
	srv.TLSConfig = tc
	ln = limitListener(ln, g.cfg.MaxConnections)
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
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.cfg.Timeout+time.Second)
	defer cancel()
	err = srv.Shutdown(sctx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// server returns the http.Server of Serve, without TLS.
func (g *Gateway) server() *http.Server {
	c := g.cfg
	return &http.Server{
		Handler:           g,
		ReadHeaderTimeout: c.ReadHeaderTimeout,
		ReadTimeout:       c.ReadTimeout,
		WriteTimeout:      c.ReadTimeout + c.Timeout + writeMargin,
		IdleTimeout:       c.IdleTimeout,
		// The handler answers 431 in JSON beyond MaxHeaderBytes; net/http
		// stops reading at twice that (plus its own 4 KiB).
		MaxHeaderBytes: 2 * c.MaxHeaderBytes,
		// TLS handshake failures and the like, at warn.
		ErrorLog: slog.NewLogLogger(c.Logger.Handler(), slog.LevelWarn),
	}
}

// limitListener accepts at most n connections open at once: Accept waits
// for one to close. A stalled connection holds its slot at most
// ReadHeaderTimeout, an idle one IdleTimeout.
func limitListener(ln net.Listener, n int) net.Listener {
	return &limitedListener{Listener: ln, slots: make(chan struct{}, n), done: make(chan struct{})}
}

type limitedListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func (l *limitedListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
}

func (l *limitedListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
