package broker

import (
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"

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
type saslGuard struct {
	passwords map[string]kafkaclient.Secret // user => password
}

func newSASLGuard(users []User) *saslGuard {
	g := &saslGuard{passwords: make(map[string]kafkaclient.Secret, len(users))}
	for _, u := range users {
		g.passwords[u.Name] = u.Password
	}
	return g
}

// listener wraps l so that every accepted connection is guarded.
func (g *saslGuard) listener(l net.Listener) net.Listener { return guardListener{l, g} }

type guardListener struct {
	net.Listener
	g *saslGuard
}

func (l guardListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &guardConn{Conn: c, s: l.g.newSession()}, nil
}

// saslStep is what the guard does with one SaslAuthenticate request.
type saslStep int

const (
	stepForward saslStep = iota // kfake handles it; not the last step
	stepFinal                   // kfake handles it and decides the login
	stepReject                  // close the connection: login refused
)

// saslSession is the guard's view of one connection's SASL exchange.
type saslSession struct {
	g     *saslGuard
	mech  string // mechanism of the accepted handshake, "" before
	step  int    // SaslAuthenticate requests seen since the handshake
	user  string // the user the client claims, once known
	final bool   // the last step went to kfake, awaiting its verdict
	authd bool   // kfake accepted the login
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
		user, ok := scramUser(auth)
		s.user = user
		if _, known := s.g.passwords[user]; !ok || !known {
			return stepReject
		}
		return stepForward
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

// scramUser returns the user of a SCRAM client-first-message (RFC 5802
// section 7: gs2-header "n,[a=authzid]," then "[m=...,]n=user,r=nonce").
func scramUser(auth []byte) (string, bool) {
	msg := string(auth)
	if strings.ContainsRune(msg, 0) || !strings.HasPrefix(msg, "n,") {
		return "", false
	}
	fields := strings.Split(msg, ",")
	if len(fields) < 4 {
		return "", false
	}
	i := 2
	if strings.HasPrefix(fields[i], "m=") {
		i++
	}
	if i+1 >= len(fields) || !strings.HasPrefix(fields[i], "n=") || !strings.HasPrefix(fields[i+1], "r=") {
		return "", false
	}
	user := strings.NewReplacer("=3D", "=", "=2C", ",").Replace(fields[i][2:])
	if user == "" || fields[1] != "" && fields[1] != "a="+fields[i][2:] {
		return "", false
	}
	return user, true
}

// guardConn is an accepted connection whose requests pass the guard.
type guardConn struct {
	net.Conn
	s *saslSession

	mu  sync.Mutex // guards s against Write and Close
	buf []byte     // the frame being handed to kfake
}

// Read hands kfake the connection's requests, frame by frame, after the
// guard has seen each.
func (c *guardConn) Read(p []byte) (int, error) {
	for len(c.buf) == 0 {
		frame, err := c.readFrame()
		if err != nil {
			return 0, err
		}
		if err := c.inspect(frame[4:]); err != nil {
			return 0, err
		}
		c.buf = frame
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

// inspect applies the guard to one request; an error closes the
// connection.
func (c *guardConn) inspect(body []byte) error {
	r := kbin.Reader{Src: body}
	key, version := r.Int16(), r.Int16()
	r.Int32() // correlation ID
	r.NullableString()
	if key != kmsg.SASLHandshake.Int16() && key != kmsg.SASLAuthenticate.Int16() {
		return nil
	}
	req := kmsg.RequestForKey(key)
	req.SetVersion(version)
	if req.IsFlexible() {
		kmsg.SkipTags(&r)
	}
	if err := r.Complete(); err != nil {
		return errLoginRefused
	}
	if err := req.ReadFrom(r.Src); err != nil {
		return errLoginRefused // kfake would drop it too
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch req := req.(type) {
	case *kmsg.SASLHandshakeRequest:
		c.s.handshake(req.Mechanism)
	case *kmsg.SASLAuthenticateRequest:
		if c.s.authenticate(req.SASLAuthBytes) == stepReject {
			return errLoginRefused
		}
	}
	return nil
}

// Write passes kfake's responses on; the first one after a login's last
// step means kfake accepted it (on a failed login it closes the
// connection without answering).
func (c *guardConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	if c.s.final {
		c.s.final, c.s.authd = false, true
	}
	c.mu.Unlock()
	return c.Conn.Write(p)
}
