// SPDX-License-Identifier: Apache-2.0

package kafkaclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kretrieve/kretrieve/internal/backoff"
)

// DefaultCheckTimeout bounds Check when its timeout is zero.
const DefaultCheckTimeout = 10 * time.Second

// ErrAuthentication is matched by Check's error when the brokers rejected
// the SASL credentials.
var ErrAuthentication = errors.New("authentication failed")

// errSASLClosed is the cause when a broker closes the connection in the
// middle of SASL authentication instead of answering
// SASL_AUTHENTICATION_FAILED (kfake does; Kafka answers, then closes):
// franz-go would retry that as a network error until the timeout.
var errSASLClosed = errors.New("the broker closed the connection during SASL authentication")

// ErrUnreachable is matched by Check's error when no broker answered in
// time (down, starting, or a wrong address): a reason to retry, unlike an
// authentication or TLS failure.
var ErrUnreachable = errors.New("no broker answered")

// Check connects to c's brokers as every client of c will (TLS, SASL) and
// asks for the cluster's brokers with a metadata request that names no
// topic, so it needs no ACL. It returns within timeout (0:
// DefaultCheckTimeout). Its error says what failed: SASL authentication
// (naming the mechanism and user, never the password), the TLS handshake, a
// broker expecting TLS or SASL that c does not use; or, matching
// ErrUnreachable, that no broker answered in time.
//
// Commands run it at start-up, so wrong credentials fail in seconds with a
// clear message instead of surfacing later as retries.
func Check(ctx context.Context, c Config, logger *slog.Logger, timeout time.Duration) error {
	_, err := CheckCluster(ctx, c, logger, timeout)
	return err
}

// CheckCluster is Check that also returns the id of the cluster, as the
// brokers report it in the answer to Check's metadata request ("" from a
// broker too old to report one): the value of messaging.kafka.cluster.id
// (kafkatrace.WithKafkaClusterID).
func CheckCluster(ctx context.Context, c Config, logger *slog.Logger, timeout time.Duration) (clusterID string, err error) {
	c = c.WithDefaults()
	if timeout <= 0 {
		timeout = DefaultCheckTimeout
	}
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	defer cancelTimeout()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	client, err := kgo.NewClient(append(Options(c, logger, nil), kgo.WithHooks(saslWatch(cancel)))...)
	if err != nil {
		return "", fmt.Errorf("kafka: %w", err)
	}
	defer client.Close()
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{} // no topic: brokers only
	resp, err := req.RequestWith(ctx, client)
	if cause := context.Cause(ctx); errors.Is(cause, errSASLClosed) {
		err = cause
	}
	if err = explain(c, err, ctx.Err() != nil, timeout); err != nil {
		return "", err
	}
	if resp.ClusterID != nil {
		clusterID = *resp.ClusterID
	}
	return clusterID, nil
}

// saslWatch ends Check as soon as a SASL authentication read fails.
type saslWatch context.CancelCauseFunc

func (w saslWatch) OnBrokerRead(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if err != nil && key == int16(kmsg.SASLAuthenticate) {
		w(fmt.Errorf("%w: %w", errSASLClosed, err))
	}
}

// explain turns a failed first request into an error that says what to fix.
func explain(c Config, err error, timedOut bool, timeout time.Duration) error {
	if err == nil {
		return nil
	}
	brokers := strings.Join(c.Brokers, ",")
	mech := c.SASL.mechanism()
	var (
		firstEOF   *kgo.ErrFirstReadEOF
		verify     *tls.CertificateVerificationError
		unknownCA  x509.UnknownAuthorityError
		hostname   x509.HostnameError
		invalid    x509.CertificateInvalidError
		header     tls.RecordHeaderError
		alert      tls.AlertError
		opErr      *net.OpError
		tlsOn      = c.TLS.On()
		remoteTLS  = errors.As(err, &opErr) && opErr.Op == "remote error"
		tlsProblem = errors.As(err, &verify) || errors.As(err, &unknownCA) || errors.As(err, &hostname) ||
			errors.As(err, &invalid) || errors.As(err, &header) || errors.As(err, &alert) || remoteTLS ||
			strings.HasPrefix(err.Error(), "tls: ")
	)
	switch {
	case errors.Is(err, kerr.SaslAuthenticationFailed), errors.Is(err, errSASLClosed):
		return fmt.Errorf("kafka %s: SASL %s %w for user %q (check the user name and password, and that the user exists for %s): %w",
			brokers, mech, ErrAuthentication, c.SASL.Username, mech, err)
	case errors.Is(err, kerr.UnsupportedSaslMechanism):
		return fmt.Errorf("kafka %s: the brokers do not enable SASL mechanism %s: %w", brokers, mech, err)
	case errors.Is(err, kerr.IllegalSaslState):
		return fmt.Errorf("kafka %s: SASL %s as user %q: %w", brokers, mech, c.SASL.Username, err)
	case tlsProblem:
		hint := "check tls-ca-file, tls-server-name and the client certificate"
		if !tlsOn {
			hint = "the broker speaks TLS: enable tls"
		}
		return fmt.Errorf("kafka %s: TLS handshake failed (%s): %w", brokers, hint, err)
	case errors.As(err, &firstEOF):
		return fmt.Errorf("kafka %s: %w (client: tls %v, sasl %q)", brokers, err, tlsOn, mech)
	case strings.Contains(err.Error(), "appear to be a tls alert"):
		return fmt.Errorf("kafka %s: the broker speaks TLS but this client does not: enable tls: %w", brokers, err)
	case timedOut || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("kafka %s: %w within %s: %w", brokers, ErrUnreachable, timeout, err)
	case errors.As(err, &opErr) && opErr.Op == "dial":
		// Refused at once: "within" the timeout would be misleading.
		return fmt.Errorf("kafka %s: %w: %w", brokers, ErrUnreachable, err)
	}
	return fmt.Errorf("kafka %s: %w", brokers, err)
}

// Defaults for RetryPolicy.
const (
	DefaultRetryInitial = 250 * time.Millisecond
	DefaultRetryMax     = 10 * time.Second
	// DefaultOneShotWait is how long a one-shot command (OneShot) waits
	// for the brokers to answer before it fails.
	DefaultOneShotWait = 3 * time.Second
)

// RetryPolicy says how WaitReachable retries brokers that do not answer.
// The zero value retries until the context ends, 250 ms after the first
// attempt, then doubling up to 10 s.
type RetryPolicy struct {
	// Initial is the delay after the first failed attempt; it doubles after
	// each one, up to Max, and each wait has equal jitter (between half of
	// the delay and all of it, so that components started together do not
	// retry together). Default: DefaultRetryInitial.
	Initial time.Duration
	// Max caps the delay. Default: DefaultRetryMax.
	Max time.Duration
	// GiveUpAfter ends the wait with the last error once this much time has
	// passed since it began; 0 waits until the context ends (long-running
	// commands).
	GiveUpAfter time.Duration
	// AttemptTimeout bounds each attempt (Check's timeout): an address that
	// drops packets instead of refusing them takes this long to fail.
	// Default: DefaultCheckTimeout.
	AttemptTimeout time.Duration
}

// OneShot is the policy of a command that does one job and exits: it
// retries for DefaultOneShotWait, then fails with one error naming the
// brokers, without logging each attempt.
func OneShot() RetryPolicy { return RetryPolicy{GiveUpAfter: DefaultOneShotWait} }

// UntilReachable is the policy of a long-running command (a worker, the
// gateway): it retries with backoff until the brokers answer or ctx ends,
// logging each retry at warn.
func UntilReachable() RetryPolicy { return RetryPolicy{} }

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.Initial <= 0 {
		p.Initial = DefaultRetryInitial
	}
	if p.Max <= 0 {
		p.Max = DefaultRetryMax
	}
	p.Max = max(p.Max, p.Initial)
	if p.AttemptTimeout <= 0 {
		p.AttemptTimeout = DefaultCheckTimeout
	}
	return p
}

// WaitReachable runs Check against c's brokers until it succeeds, retrying
// only while no broker answers (ErrUnreachable) with a delay that starts at
// policy.Initial and doubles up to policy.Max. An authentication, TLS or
// any other error ends it at once: retrying would not fix it.
//
// Without policy.GiveUpAfter it waits until the brokers answer or ctx ends,
// and logs every retry at warn ("kafka not reachable at BROKERS, retrying
// in DELAY (attempt N)"), so a worker started before Kafka starts working
// by itself when Kafka appears. With it, retries are logged at debug only
// and the wait ends after that long with one error that matches
// ErrUnreachable and names the brokers and the attempts made.
//
// A one-shot wait takes at most GiveUpAfter plus one attempt of at most a
// second (or AttemptTimeout, if shorter). When ctx ends first, the error matches ctx's error (context.Canceled on
// a signal).
func WaitReachable(ctx context.Context, c Config, logger *slog.Logger, policy RetryPolicy) error {
	_, err := WaitCluster(ctx, c, logger, policy)
	return err
}

// WaitCluster is WaitReachable that also returns the cluster id the
// successful check learned (see CheckCluster).
func WaitCluster(ctx context.Context, c Config, logger *slog.Logger, policy RetryPolicy) (clusterID string, err error) {
	c = c.WithDefaults()
	policy = policy.withDefaults()
	if logger == nil {
		logger = slog.Default()
	}
	brokers := strings.Join(c.Brokers, ",")
	start := time.Now()
	var deadline time.Time
	if policy.GiveUpAfter > 0 {
		deadline = start.Add(policy.GiveUpAfter)
	}
	level := slog.LevelWarn
	if !deadline.IsZero() {
		level = slog.LevelDebug
	}
	quiet := slog.New(slog.DiscardHandler)
	delay := policy.Initial
	for attempt := 1; ; attempt++ {
		timeout := policy.AttemptTimeout
		if !deadline.IsZero() {
			// At least a second: an attempt cut short at the deadline would
			// report a timeout for a connection that was refused.
			timeout = min(timeout, max(time.Until(deadline), time.Second))
		}
		// franz-go's own warnings repeat what err says: the retry record
		// and the final error carry it once.
		id, err := CheckCluster(ctx, c, quiet, timeout)
		switch {
		case err == nil:
			if attempt > 1 {
				logger.InfoContext(ctx, "kafka reachable", "brokers", brokers, "attempts", attempt, "waited", time.Since(start).Round(time.Millisecond))
			}
			return id, nil
		case ctx.Err() != nil:
			return "", fmt.Errorf("kafka %s: stopped waiting for the brokers after %d attempts: %w", brokers, attempt, context.Cause(ctx))
		case !errors.Is(err, ErrUnreachable):
			return "", err
		}
		wait := backoff.Equal(delay)
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return "", fmt.Errorf("%w (%d attempts in %s)", err, attempt, time.Since(start).Round(100*time.Millisecond))
			}
			wait = min(wait, left)
		}
		logger.Log(ctx, level, fmt.Sprintf("kafka not reachable at %s, retrying in %s (attempt %d)", brokers, wait, attempt),
			"brokers", brokers, "retry_in", wait, "attempt", attempt, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", fmt.Errorf("kafka %s: stopped waiting for the brokers after %d attempts: %w", brokers, attempt, context.Cause(ctx))
		case <-t.C:
		}
		delay = min(delay*2, policy.Max)
	}
}
