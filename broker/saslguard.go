// SPDX-License-Identifier: Apache-2.0

package broker

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kbin"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kretrieve/kretrieve/kafkaclient"
)

// maxUnauthenticatedFrame caps a request before its connection has
// authenticated, like Kafka's 512 KiB limit for unauthenticated clients:
// only ApiVersions and the SASL requests are allowed then.
const maxUnauthenticatedFrame = 512 << 10

// errLoginRefused closes a connection whose SASL login the guard refused.
var errLoginRefused = errors.New("sasl login refused")

// saslGuard checks SASL logins before kfake sees them. kfake checks PLAIN
// with a map lookup that yields "" for an unknown user, so an unknown user
// (or the empty name) with an empty password would log in; the guard lets
// a login reach kfake only for a configured user, and a PLAIN login only
// with that user's password. It sits between the listener (after TLS) and
// kfake, reading each request frame of a connection.
//
// It also keeps logins hygienic: a failed login is logged at WARN with
// the user and the source address (never the password), each source's
// attempts are slowed down after failures (loginLimiter), and SCRAM
// answers an unknown user with a made-up salt, failing at the proof as
// for a wrong password, so that it does not reveal which users exist.
type saslGuard struct {
	passwords map[string]kafkaclient.Secret // user => password
	logger    *slog.Logger
	limiter   *loginLimiter
	gate      *authGate
	fakeKey   []byte // derives unknown users' SCRAM salts
}

func newSASLGuard(users []User, gate *authGate, logger *slog.Logger) *saslGuard {
	g := &saslGuard{passwords: make(map[string]kafkaclient.Secret, len(users)),
		logger: logger, limiter: newLoginLimiter(time.Now), gate: gate, fakeKey: make([]byte, 32)}
	_, _ = rand.Read(g.fakeKey) // never fails (crypto/rand)
	for _, u := range users {
		g.passwords[u.Name] = u.Password
	}
	return g
}

// failed logs a failed login and counts it against its source.
func (g *saslGuard) failed(src net.Addr, mech, user string) {
	const maxLogged = 128
	if len(user) > maxLogged {
		user = user[:maxLogged] + "…"
	}
	g.logger.Warn("broker: failed SASL login", "user", user, "mechanism", mech, "source", src.String(), "component", "broker")
	g.limiter.fail(sourceHost(src))
}

// sourceHost is the address failed logins are counted against: the
// client's host, whatever its port.
func sourceHost(a net.Addr) string {
	if host, _, err := net.SplitHostPort(a.String()); err == nil {
		return host
	}
	return a.String()
}

// fakeServerFirst is SCRAM's server-first-message for an unknown user: a
// salt derived from the user's name (stable, like a real user's), kfake's
// iteration count and nonce format.
func (g *saslGuard) fakeServerFirst(mech, user, clientNonce string) []byte {
	mac := hmac.New(sha256.New, g.fakeKey)
	mac.Write([]byte(mech + "\x00" + user))
	salt := mac.Sum(nil)[:16]
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	return fmt.Appendf(nil, "r=%s%s,s=%s,i=%d", clientNonce, base64.RawStdEncoding.EncodeToString(nonce),
		base64.StdEncoding.EncodeToString(salt), scramIterations)
}

// scramIterations is kfake's SCRAM iteration count.
const scramIterations = 4096

// listener wraps l so that every accepted connection is guarded.
func (g *saslGuard) listener(l net.Listener) net.Listener { return guardListener{l, g} }

type guardListener struct {
	net.Listener
	g *saslGuard
}

// Accept returns the next connection the gate admits, closing those
// beyond its caps; an admitted one is closed unless it authenticates
// within the gate's timeout.
func (l guardListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		host := sourceHost(c.RemoteAddr())
		if !l.g.gate.admit(host) {
			c.Close()
			continue
		}
		gc := &guardConn{Conn: c, s: l.g.newSession(), closed: make(chan struct{}), host: host, slot: true}
		gc.mu.Lock()
		gc.timer = time.AfterFunc(l.g.gate.timeout, gc.authTimedOut)
		gc.mu.Unlock()
		return gc, nil
	}
}

// saslStep is what the guard does with one SaslAuthenticate request.
type saslStep int

const (
	stepForward saslStep = iota // kfake handles it; not the last step
	stepFinal                   // kfake handles it and decides the login
	stepFake                    // answer with a fake server-first-message
	stepReject                  // close the connection: login refused
)

// saslSession is the guard's view of one connection's SASL exchange.
type saslSession struct {
	g     *saslGuard
	mech  string // mechanism of the accepted handshake, "" before
	step  int    // SaslAuthenticate requests seen since the handshake
	user  string // the user the client claims, once known
	nonce string // the SCRAM client nonce
	fake  bool   // SCRAM with an unknown user: fail at the proof
	final bool   // the last step went to kfake, awaiting its verdict
	// finalCorr and finalVersion are the correlation id and version of
	// the last step's request: only the response with that id is kfake's
	// verdict (a client may pipeline other requests before it).
	finalCorr    int32
	finalVersion int16
	tries        bool // a login is under way: closing now means it failed
	authd        bool // kfake accepted the login
}

func (g *saslGuard) newSession() *saslSession { return &saslSession{g: g} }

// handshake records the mechanism of a SaslHandshake request. Like kfake, a
// handshake counts only on a fresh connection (or, for re-authentication,
// once logged in) and only for a supported mechanism.
func (s *saslSession) handshake(mech string) {
	if s.mech != "" && !s.authd {
		return // kfake answers ILLEGAL_SASL_STATE
	}
	for _, m := range kafkaclient.Mechanisms {
		if m == mech {
			*s = saslSession{g: s.g, mech: mech, authd: s.authd}
			return
		}
	}
}

// authenticate decides on one SaslAuthenticate request's bytes.
func (s *saslSession) authenticate(auth []byte) saslStep {
	s.step++
	s.tries = true
	switch {
	case s.mech == "":
		return stepReject // no handshake: kfake would refuse it too
	case s.mech == kafkaclient.MechanismPLAIN:
		user, pass, ok := splitPlain(auth)
		s.user = user
		want, known := s.g.passwords[user]
		if !ok || pass == "" || !known || subtle.ConstantTimeCompare([]byte(pass), []byte(want.Reveal())) != 1 {
			return stepReject
		}
		return s.forwardFinal()
	case s.step == 1: // SCRAM client-first-message
		user, nonce, ok := scramFirst(auth)
		s.user, s.nonce = user, nonce
		if !ok {
			return stepReject
		}
		if _, known := s.g.passwords[user]; !known {
			s.fake = true
			return stepFake
		}
		return stepForward
	case s.step == 2 && s.fake: // no proof can be right
		return stepReject
	case s.step == 2: // SCRAM client-final-message: kfake checks the proof
		return s.forwardFinal()
	default:
		return stepReject
	}
}

func (s *saslSession) forwardFinal() saslStep {
	s.final = true
	return stepFinal
}

// splitPlain splits a PLAIN message, authzid NUL user NUL password.
func splitPlain(auth []byte) (user, pass string, ok bool) {
	parts := strings.SplitN(string(auth), "\x00", 3)
	if len(parts) != 3 || parts[0] != "" && parts[0] != parts[1] {
		return "", "", false
	}
	return parts[1], parts[2], true
}

// scramFirst returns the user and nonce of a SCRAM client-first-message
// (RFC 5802 section 7: gs2-header "n,[a=authzid]," then
// "[m=...,]n=user,r=nonce").
func scramFirst(auth []byte) (user, nonce string, ok bool) {
	msg := string(auth)
	if strings.ContainsRune(msg, 0) || !strings.HasPrefix(msg, "n,") {
		return "", "", false
	}
	fields := strings.Split(msg, ",")
	if len(fields) < 4 {
		return "", "", false
	}
	i := 2
	if strings.HasPrefix(fields[i], "m=") {
		i++
	}
	if i+1 >= len(fields) || !strings.HasPrefix(fields[i], "n=") || !strings.HasPrefix(fields[i+1], "r=") {
		return "", "", false
	}
	user = strings.NewReplacer("=3D", "=", "=2C", ",").Replace(fields[i][2:])
	nonce = fields[i+1][2:]
	if user == "" || nonce == "" || fields[1] != "" && fields[1] != "a="+fields[i][2:] {
		return "", "", false
	}
	return user, nonce, true
}

// guardConn is an accepted connection whose requests pass the guard.
type guardConn struct {
	net.Conn
	s *saslSession

	mu     sync.Mutex // guards s against Write and Close
	wmu    sync.Mutex // one response written at a time
	buf    []byte     // the frame being handed to kfake
	closed chan struct{}
	once   sync.Once

	host  string      // the source host, as the gate counts it
	slot  bool        // holds a gate slot: not authenticated yet
	timer *time.Timer // closes the connection at the auth timeout (mu guards slot and timer)
}

// authenticated gives back the connection's gate slot once it has logged
// in: the auth timeout no longer applies.
func (c *guardConn) authenticated() {
	c.mu.Lock()
	slot, timer := c.slot, c.timer
	c.slot = false
	c.mu.Unlock()
	if slot {
		timer.Stop()
		c.s.g.gate.release(c.host)
	}
}

// authTimedOut closes the connection if it has not authenticated yet.
func (c *guardConn) authTimedOut() {
	c.mu.Lock()
	expired := c.slot
	c.mu.Unlock()
	if expired {
		c.s.g.gate.expired(c.host)
		c.Close()
	}
}

// Read hands kfake the connection's requests, frame by frame, after the
// guard has seen each.
func (c *guardConn) Read(p []byte) (int, error) {
	for len(c.buf) == 0 {
		frame, err := c.readFrame()
		if err != nil {
			return 0, err
		}
		forward, err := c.inspect(frame[4:])
		if err != nil {
			return 0, err
		}
		if forward {
			c.buf = frame
		}
	}
	n := copy(p, c.buf)
	c.buf = c.buf[n:]
	return n, nil
}

func (c *guardConn) readFrame() ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(c.Conn, size[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	c.mu.Lock()
	authd := c.s.authd
	c.mu.Unlock()
	if !authd && n > maxUnauthenticatedFrame {
		return nil, fmt.Errorf("unauthenticated request of %d bytes", n)
	}
	frame := make([]byte, 4+int(n))
	copy(frame, size[:])
	if _, err := io.ReadFull(c.Conn, frame[4:]); err != nil {
		return nil, err
	}
	return frame, nil
}

// inspect applies the guard to one request: whether kfake gets it, and
// an error to close the connection.
func (c *guardConn) inspect(body []byte) (forward bool, err error) {
	r := kbin.Reader{Src: body}
	key, version := r.Int16(), r.Int16()
	corr := r.Int32()
	r.NullableString()
	if key != kmsg.SASLHandshake.Int16() && key != kmsg.SASLAuthenticate.Int16() {
		return true, nil
	}
	req := kmsg.RequestForKey(key)
	req.SetVersion(version)
	if req.IsFlexible() {
		kmsg.SkipTags(&r)
	}
	if err := r.Complete(); err != nil {
		return false, errLoginRefused
	}
	if err := req.ReadFrom(r.Src); err != nil {
		return false, errLoginRefused // kfake would drop it too
	}
	switch req := req.(type) {
	case *kmsg.SASLHandshakeRequest:
		c.mu.Lock()
		c.s.handshake(req.Mechanism)
		c.mu.Unlock()
	case *kmsg.SASLAuthenticateRequest:
		c.mu.Lock()
		first := c.s.step == 0
		c.mu.Unlock()
		if first {
			if err := c.wait(c.s.g.limiter.reserve(sourceHost(c.RemoteAddr()))); err != nil {
				return false, err
			}
		}
		c.mu.Lock()
		step := c.s.authenticate(req.SASLAuthBytes)
		if step == stepFinal {
			c.s.finalCorr, c.s.finalVersion = corr, version
		}
		mech, user, nonce := c.s.mech, c.s.user, c.s.nonce
		if step == stepReject {
			c.s.tries = false // logged here
		}
		c.mu.Unlock()
		switch step {
		case stepReject:
			c.s.g.failed(c.RemoteAddr(), mech, user)
			return false, errLoginRefused
		case stepFake:
			resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
			resp.SASLAuthBytes = c.s.g.fakeServerFirst(mech, user, nonce)
			return false, c.respond(corr, resp)
		}
	}
	return true, nil
}

// wait waits d before a login attempt, or until the connection closes.
func (c *guardConn) wait(d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-c.closed:
		return net.ErrClosed
	}
}

// respond writes the guard's own response to a request, framed as kfake
// frames its own.
func (c *guardConn) respond(corr int32, resp kmsg.Response) error {
	buf := binary.BigEndian.AppendUint32(make([]byte, 4), uint32(corr))
	if resp.IsFlexible() {
		buf = append(buf, 0) // empty tagged fields of the response header
	}
	buf = resp.AppendTo(buf)
	binary.BigEndian.PutUint32(buf, uint32(len(buf)-4))
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.Conn.Write(buf)
	return err
}

// Write passes kfake's responses on, one whole frame a call. The response
// to a login's last step is kfake's verdict: accepted when it carries no
// error code (on a failed login kfake closes the connection without
// answering). Responses to requests pipelined before the last step
// decide nothing.
func (c *guardConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	var refused bool
	if c.s.final && len(p) >= 8 && int32(binary.BigEndian.Uint32(p[4:8])) == c.s.finalCorr {
		ok := authenticateSucceeded(p[8:], c.s.finalVersion)
		c.s.final, c.s.tries, c.s.authd = false, false, ok || c.s.authd
		refused = !ok
	}
	mech, user, authd := c.s.mech, c.s.user, c.s.authd
	c.mu.Unlock()
	if refused {
		c.s.g.failed(c.RemoteAddr(), mech, user)
	}
	if authd {
		c.authenticated()
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.Conn.Write(p)
}

// authenticateSucceeded reports whether body, a SaslAuthenticate response
// of version v after its correlation id, has no error code.
func authenticateSucceeded(body []byte, v int16) bool {
	resp := kmsg.NewPtrSASLAuthenticateResponse()
	resp.Version = v
	r := kbin.Reader{Src: body}
	if resp.IsFlexible() {
		kmsg.SkipTags(&r)
	}
	return r.Complete() == nil && resp.ReadFrom(r.Src) == nil && resp.ErrorCode == 0
}

// Close closes the connection; closed during a login, the login failed
// (kfake closes without answering when it refuses one).
func (c *guardConn) Close() error {
	c.once.Do(func() {
		close(c.closed)
		c.mu.Lock()
		failed, mech, user, slot, timer := c.s.tries, c.s.mech, c.s.user, c.slot, c.timer
		c.s.tries, c.slot = false, false
		c.mu.Unlock()
		if failed {
			c.s.g.failed(c.RemoteAddr(), mech, user)
		}
		if slot {
			timer.Stop()
			c.s.g.gate.release(c.host)
		}
	})
	return c.Conn.Close()
}
