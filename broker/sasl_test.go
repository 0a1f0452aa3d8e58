package broker_test

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
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

func dialRaw(t testing.TB, addr string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
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
	c := dialRaw(t, addr)
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
	for _, acls := range []bool{false, true} {
		cfg := broker.Config{Listen: "127.0.0.1:0", EnforceACLs: acls, Users: []broker.User{
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
