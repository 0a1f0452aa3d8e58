// SPDX-License-Identifier: Apache-2.0

package broker

import (
	"errors"
	"log/slog"
	"net"
	"sync/atomic"
	"time"
)

// Accept back-off bounds, as net/http's Server uses for the same errors.
const (
	minAcceptBackoff = 5 * time.Millisecond
	maxAcceptBackoff = time.Second
)

// retryingListener keeps accepting through errors that pass, such as
// EMFILE when the process is out of file descriptors: kfake's accept loop
// returns on the first error and the broker would never listen again. An
// error is returned only once the listener is closed. The first error of a
// run of them is logged at warn, and the recovery at info.
type retryingListener struct {
	net.Listener
	logger *slog.Logger
	closed atomic.Bool
	sleep  func(time.Duration) // time.Sleep; replaced in tests
}

func newRetryingListener(l net.Listener, logger *slog.Logger) *retryingListener {
	return &retryingListener{Listener: l, logger: logger, sleep: time.Sleep}
}

func (l *retryingListener) Accept() (net.Conn, error) {
	var backoff time.Duration
	failures := 0
	for {
		c, err := l.Listener.Accept()
		if err == nil {
			if failures > 0 {
				l.logger.Info("broker: accepting connections again", "failed_accepts", failures)
			}
			return c, nil
		}
		if l.closed.Load() || errors.Is(err, net.ErrClosed) {
			return nil, err
		}
		if failures == 0 {
			l.logger.Warn("broker: accepting a connection failed; retrying with back-off",
				"addr", l.Addr().String(), "err", err)
			backoff = minAcceptBackoff
		} else {
			backoff = min(2*backoff, maxAcceptBackoff)
		}
		failures++
		l.sleep(backoff)
	}
}

func (l *retryingListener) Close() error {
	l.closed.Store(true)
	return l.Listener.Close()
}
