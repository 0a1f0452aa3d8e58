// SPDX-License-Identifier: Apache-2.0

package broker_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/kretrieve/kretrieve/broker"
	"github.com/kretrieve/kretrieve/kafkaclient"
)

// rawConn speaks the Kafka protocol on one connection, without the
// client-side checks of franz-go's client (which refuses empty passwords).
type rawConn struct {
	net.Conn
	corr int32
	f    *kmsg.RequestFormatter
}

func dialRaw(t testing.TB, addr string) *rawConn { return dialRawFrom(t, "127.0.0.1", addr) }

// dialRawFrom connects to addr from the local address host.
func dialRawFrom(t testing.TB, host, addr string) *rawConn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(host)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// A guard against a hung broker, not a wait: every exchange ends
	// with a response or a closed connection.
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	return &rawConn{Conn: c, f: kmsg.NewRequestFormatter(kmsg.FormatterClientID("raw"))}
}

// do sends req and reads its response; a closed connection is an error.
func (c *rawConn) do(req kmsg.Request) (kmsg.Response, error) {
	c.corr++
	if _, err := c.Write(c.f.AppendRequest(nil, req, c.corr)); err != nil {
		return nil, err
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return nil, err
	}
	body := make([]byte, binary.BigEndian.Uint32(size[:]))
	if _, err := io.ReadFull(c, body); err != nil {
		return nil, err
	}
	resp := req.ResponseKind()
	if len(body) < 4 || int32(binary.BigEndian.Uint32(body)) != c.corr {
		return nil, errors.New("bad correlation ID")
	}
	body = body[4:]
	if resp.IsFlexible() && len(body) > 0 {
		body = body[1:] // empty response header tags
	}
	return resp, resp.ReadFrom(body)
}

// rawMech is a SASL mechanism sending fixed messages, one a step.
type rawMech struct {
	name string
	msgs [][]byte
}

func (m rawMech) Name() string { return m.name }
func (m rawMech) Authenticate(context.Context, string) (sasl.Session, []byte, error) {
	return &rawSession{m.msgs[1:]}, m.msgs[0], nil
}

type rawSession struct{ rest [][]byte }

func (s *rawSession) Challenge([]byte) (bool, []byte, error) {
	if len(s.rest) == 0 {
		return true, nil, nil
	}
	msg := s.rest[0]
	s.rest = s.rest[1:]
	return false, msg, nil
}

// login runs mech's exchange on a new connection and reports whether the
// broker then answers a metadata request, which it does only for an
// authenticated connection.
func login(t testing.TB, addr string, mech sasl.Mechanism) bool {
	t.Helper()
	return loginOn(t, dialRaw(t, addr), addr, mech)
}

// loginOn is login on c.
func loginOn(t testing.TB, c *rawConn, addr string, mech sasl.Mechanism) bool {
	t.Helper()
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, mech.Name()
	resp, err := c.do(hs)
	if err != nil || resp.(*kmsg.SASLHandshakeResponse).ErrorCode != 0 {
		return false
	}
	sess, msg, err := mech.Authenticate(t.Context(), addr)
	if err != nil {
		t.Fatal(err)
	}
	for {
		auth := kmsg.NewPtrSASLAuthenticateRequest()
		auth.Version, auth.SASLAuthBytes = 1, msg
		resp, err := c.do(auth)
		if err != nil || resp.(*kmsg.SASLAuthenticateResponse).ErrorCode != 0 {
			return false
		}
		var done bool
		if done, msg, err = sess.Challenge(resp.(*kmsg.SASLAuthenticateResponse).SASLAuthBytes); err != nil {
			return false
		} else if done {
			break
		}
	}
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 4
	_, err = c.do(md)
	return err == nil
}

func scramMech(mech, user, pass string) sasl.Mechanism {
	a := scram.Auth{User: user, Pass: pass}
	if mech == kafkaclient.MechanismSCRAMSHA512 {
		return a.AsSha512Mechanism()
	}
	return a.AsSha256Mechanism()
}

// TestSASLRefusesUnknownUsersAndEmptyPasswords: kfake checks PLAIN with a
// map lookup that yields "" for an unknown user; the broker must refuse
// unknown users and empty passwords anyway, with and without ACLs, and
// let its users in with every mechanism.
func TestSASLRefusesUnknownUsersAndEmptyPasswords(t *testing.T) {
	broker.NoLoginBackoff(t)
	for _, acls := range []bool{false, true} {
		cfg := broker.Config{Listen: "127.0.0.1:0", EnforceACLs: acls, Logger: slog.New(slog.DiscardHandler), Users: []broker.User{
			{Name: "alice", Password: kafkaclient.NewSecret("alice-pw"), Superuser: acls},
		}}
		b, err := broker.Start(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		refused := map[string]sasl.Mechanism{
			"PLAIN unknown user, empty password": rawMech{"PLAIN", [][]byte{[]byte("\x00ghost\x00")}},
			"PLAIN empty user, empty password":   rawMech{"PLAIN", [][]byte{[]byte("\x00\x00")}},
			"PLAIN authzid, empty password":      rawMech{"PLAIN", [][]byte{[]byte("ghost\x00ghost\x00")}},
			"PLAIN known user, empty password":   rawMech{"PLAIN", [][]byte{[]byte("\x00alice\x00")}},
			"PLAIN known user, wrong password":   plain.Auth{User: "alice", Pass: "wrong"}.AsMechanism(),
			"PLAIN unknown user":                 plain.Auth{User: "ghost", Pass: "alice-pw"}.AsMechanism(),
		}
		for _, m := range []string{kafkaclient.MechanismSCRAMSHA256, kafkaclient.MechanismSCRAMSHA512} {
			refused[m+" unknown user"] = scramMech(m, "ghost", "x")
			refused[m+" known user, wrong password"] = scramMech(m, "alice", "wrong")
			refused[m+" empty user"] = rawMech{m, [][]byte{[]byte("n,,n=,r=abcdef"), []byte("c=biws,r=abcdef,p=AAAA")}}
		}
		for name, mech := range refused {
			if login(t, b.Addr(), mech) {
				t.Errorf("acls=%v: %s: logged in", acls, name)
			}
		}
		for _, mech := range []sasl.Mechanism{
			plain.Auth{User: "alice", Pass: "alice-pw"}.AsMechanism(),
			scramMech(kafkaclient.MechanismSCRAMSHA256, "alice", "alice-pw"),
			scramMech(kafkaclient.MechanismSCRAMSHA512, "alice", "alice-pw"),
		} {
			if !login(t, b.Addr(), mech) {
				t.Errorf("acls=%v: alice with %s: refused", acls, mech.Name())
			}
		}
	}
}

// TestFailedLoginsLoggedAndSlowed: every failed login, whoever decides it
// (the guard or kfake), is logged at WARN with the user and the source
// address and never the password, and counts against its source only.
func TestFailedLoginsLoggedAndSlowed(t *testing.T) {
	// The log goes to a file: os.File writes are safe from the broker's
	// goroutines and done when Write returns.
	logFile, err := os.Create(filepath.Join(t.TempDir(), "broker.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	logs := func() string {
		b, err := os.ReadFile(logFile.Name())
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	b, err := broker.Start(broker.Config{Listen: "127.0.0.1:0",
		Logger: slog.New(slog.NewJSONHandler(logFile, nil)),
		Users:  []broker.User{{Name: "alice", Password: kafkaclient.NewSecret("alice-pw")}}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	failures := []struct {
		mech sasl.Mechanism
		user string
	}{
		{plain.Auth{User: "alice", Pass: "guess-1"}.AsMechanism(), "alice"},            // the guard decides
		{scramMech(kafkaclient.MechanismSCRAMSHA256, "alice", "guess-2"), "alice"},     // kfake decides
		{scramMech(kafkaclient.MechanismSCRAMSHA512, "mallory", "guess-3"), "mallory"}, // a fake salt
	}
	for i, f := range failures {
		if login(t, b.Addr(), f.mech) {
			t.Fatalf("%s logged in", f.user)
		}
		// The guard logs before the connection closes, so the line is
		// there once the client sees the refusal.
		lines := strings.Split(strings.TrimSpace(logs()), "\n")
		if len(lines) != i+1 {
			t.Fatalf("after %d failed logins, %d log lines:\n%s", i+1, len(lines), logs())
		}
		var rec struct{ Level, Msg, User, Mechanism, Source string }
		if err := json.Unmarshal([]byte(lines[i]), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Level != "WARN" || rec.User != f.user || rec.Mechanism != f.mech.Name() || !strings.HasPrefix(rec.Source, "127.0.0.1:") {
			t.Errorf("log line %s", lines[i])
		}
	}
	if strings.Contains(logs(), "guess-") {
		t.Errorf("a password was logged:\n%s", logs())
	}
	// Three failures from 127.0.0.1: its next attempt waits 400 ms;
	// 127.0.0.2 is not held up and its user logs in.
	if d := broker.LoginDelay(b, "127.0.0.1"); d <= 200*time.Millisecond || d > 400*time.Millisecond {
		t.Errorf("127.0.0.1's next attempt waits %v after 3 failures, want (200ms, 400ms]", d)
	}
	// The guard holds the attempt that long: it ends no earlier than the
	// slot it reserved (measured, not slept).
	d := broker.LoginDelay(b, "127.0.0.1")
	start := time.Now()
	if login(t, b.Addr(), plain.Auth{User: "alice", Pass: "guess-4"}.AsMechanism()) {
		t.Fatal("guess-4 logged in")
	}
	if took := time.Since(start); took < d-10*time.Millisecond {
		t.Errorf("the 4th failed attempt took %v, want at least %v", took, d)
	}
	if d := broker.LoginDelay(b, "127.0.0.2"); d != 0 {
		t.Errorf("127.0.0.2 waits %v", d)
	}
	if !loginOn(t, dialRawFrom(t, "127.0.0.2", b.Addr()), b.Addr(), plain.Auth{User: "alice", Pass: "alice-pw"}.AsMechanism()) {
		t.Error("alice refused from 127.0.0.2")
	}
}

// scramTry runs a SCRAM login as user with a wrong password and returns
// the server-first-message and whether the client-final-message was
// answered (a wrong proof closes the connection).
func scramTry(t *testing.T, addr, mech, user string) (serverFirst string, finalAnswered bool) {
	t.Helper()
	c := dialRaw(t, addr)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, mech
	if resp, err := c.do(hs); err != nil || resp.(*kmsg.SASLHandshakeResponse).ErrorCode != 0 {
		t.Fatalf("%s handshake: %v", mech, err)
	}
	sess, first, err := scramMech(mech, user, "wrong").Authenticate(t.Context(), addr)
	if err != nil {
		t.Fatal(err)
	}
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.Version, auth.SASLAuthBytes = 1, first
	resp, err := c.do(auth)
	if err != nil {
		t.Fatalf("%s %s: client-first refused: %v", mech, user, err)
	}
	r := resp.(*kmsg.SASLAuthenticateResponse)
	if r.ErrorCode != 0 {
		t.Fatalf("%s %s: client-first: error code %d", mech, user, r.ErrorCode)
	}
	_, final, err := sess.Challenge(r.SASLAuthBytes)
	if err != nil {
		t.Fatal(err)
	}
	auth = kmsg.NewPtrSASLAuthenticateRequest()
	auth.Version, auth.SASLAuthBytes = 1, final
	_, err = c.do(auth)
	return string(r.SASLAuthBytes), err == nil
}

// TestSCRAMDoesNotRevealUsers: an unknown user gets a server-first-message
// like a real user's (a salt stable across attempts, kfake's iteration
// count) and fails at the proof as a wrong password does.
func TestSCRAMDoesNotRevealUsers(t *testing.T) {
	broker.NoLoginBackoff(t)
	b, err := broker.Start(broker.Config{Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler),
		Users: []broker.User{{Name: "alice", Password: kafkaclient.NewSecret("alice-pw")}}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	shape := regexp.MustCompile(`^r=[!-+\--~]{20,},s=([A-Za-z0-9+/]{22}==),i=4096$`)
	for _, mech := range []string{kafkaclient.MechanismSCRAMSHA256, kafkaclient.MechanismSCRAMSHA512} {
		for _, user := range []string{"alice", "ghost"} {
			var salts []string
			for range 2 {
				first, answered := scramTry(t, b.Addr(), mech, user)
				m := shape.FindStringSubmatch(first)
				if m == nil {
					t.Fatalf("%s %s: server-first-message %q", mech, user, first)
				}
				if answered {
					t.Errorf("%s %s: a wrong proof was answered", mech, user)
				}
				salts = append(salts, m[1])
			}
			if salts[0] != salts[1] {
				t.Errorf("%s %s: salt changes between attempts: %v", mech, user, salts)
			}
		}
	}
}
