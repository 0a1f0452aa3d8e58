// SPDX-License-Identifier: Apache-2.0

package broker_test

import (
	"log/slog"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kretrieve/kretrieve/broker"
	"github.com/kretrieve/kretrieve/kafkaclient"
)

// FuzzSASLAuthenticate sends a handshake and two SaslAuthenticate requests
// of arbitrary bytes (any version) to a running development broker, then
// a metadata request, which only an authenticated connection gets
// answered. The broker must never log a connection in without valid
// credentials: only PLAIN with alice's exact password may (a SCRAM proof
// cannot be guessed), and nothing may panic.
func FuzzSASLAuthenticate(f *testing.F) {
	const user, pass = "alice", "alice-pw"
	broker.NoLoginBackoff(f)
	b, err := broker.Start(broker.Config{Listen: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler),
		Users: []broker.User{{Name: user, Password: kafkaclient.NewSecret(pass)}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(b.Close)

	mechs := append([]string{"BOGUS"}, kafkaclient.Mechanisms...)
	f.Add(uint8(1), uint8(1), []byte("\x00alice\x00alice-pw"), []byte(nil))
	f.Add(uint8(1), uint8(2), []byte("alice\x00alice\x00alice-pw"), []byte("x"))
	f.Add(uint8(1), uint8(0), []byte("\x00ghost\x00"), []byte(nil))
	f.Add(uint8(1), uint8(1), []byte("\x00\x00"), []byte(nil))
	f.Add(uint8(1), uint8(1), []byte("\x00alice\x00"), []byte(nil))
	f.Add(uint8(2), uint8(1), []byte("n,,n=alice,r=abcdefgh"), []byte("c=biws,r=abcdefgh,p=AAAA"))
	f.Add(uint8(3), uint8(2), []byte("n,a=ghost,n=ghost,r=abcdefgh"), []byte("c=biws,r=abcdefgh,p=AAAA"))
	f.Add(uint8(2), uint8(1), []byte("n,,m=x,n=,r="), []byte("\x00alice\x00"))
	f.Add(uint8(0), uint8(1), []byte("\x00ghost\x00"), []byte(nil))

	f.Fuzz(func(t *testing.T, mech, version uint8, first, second []byte) {
		m := mechs[int(mech)%len(mechs)]
		c := dialRaw(t, b.Addr())
		hs := kmsg.NewPtrSASLHandshakeRequest()
		hs.Version, hs.Mechanism = 1, m
		if _, err := c.do(hs); err != nil {
			t.Fatalf("handshake %s: %v", m, err)
		}
		for _, msg := range [][]byte{first, second} {
			auth := kmsg.NewPtrSASLAuthenticateRequest()
			auth.Version, auth.SASLAuthBytes = int16(version%3), msg
			if _, err := c.do(auth); err != nil {
				return // refused: the connection is closed
			}
		}
		md := kmsg.NewPtrMetadataRequest()
		md.Version = 4
		if _, err := c.do(md); err != nil {
			return // not logged in
		}
		if valid := m == kafkaclient.MechanismPLAIN && (string(first) == "\x00"+user+"\x00"+pass ||
			string(first) == user+"\x00"+user+"\x00"+pass); !valid {
			t.Fatalf("logged in with %s %q then %q", m, first, second)
		}
	})
}
