// SPDX-License-Identifier: Apache-2.0

package broker_test

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kretrieve/kretrieve/broker"
	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/internal/testutil/syncbuf"
	"github.com/kretrieve/kretrieve/kafkaclient"
)

// pipelinedWrongSCRAM runs a SCRAM login with a wrong password on a new
// connection, sending an ApiVersions request and the client-final-message
// in one write, and reports whether the connection then still answers a
// metadata request.
func pipelinedWrongSCRAM(t *testing.T, addr string) bool {
	t.Helper()
	const mech = kafkaclient.MechanismSCRAMSHA256
	c := dialRaw(t, addr)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, mech
	if resp, err := c.do(hs); err != nil || resp.(*kmsg.SASLHandshakeResponse).ErrorCode != 0 {
		t.Fatalf("handshake: %v", err)
	}
	sess, first, err := scramMech(mech, "alice", "wrong").Authenticate(t.Context(), addr)
	if err != nil {
		t.Fatal(err)
	}
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.Version, auth.SASLAuthBytes = 1, first
	resp, err := c.do(auth)
	if err != nil || resp.(*kmsg.SASLAuthenticateResponse).ErrorCode != 0 {
		t.Fatalf("client-first: %v", err)
	}
	_, final, err := sess.Challenge(resp.(*kmsg.SASLAuthenticateResponse).SASLAuthBytes)
	if err != nil {
		t.Fatal(err)
	}
	versions := kmsg.NewPtrApiVersionsRequest()
	versions.Version = 3
	versions.ClientSoftwareName, versions.ClientSoftwareVersion = "raw", "1"
	auth = kmsg.NewPtrSASLAuthenticateRequest()
	auth.Version, auth.SASLAuthBytes = 1, final
	// AppendRequest frames from the start of its buffer: one each.
	buf := append(c.f.AppendRequest(nil, versions, c.corr+1), c.f.AppendRequest(nil, auth, c.corr+2)...)
	c.corr += 2
	if _, err := c.Write(buf); err != nil {
		t.Fatal(err)
	}
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 4
	_, err = c.do(md)
	// Whatever was answered before, the connection must end.
	_, _ = io.Copy(io.Discard, c)
	return err == nil
}

// TestPipelinedWrongSCRAMLoginsLoggedAndSlowed: a wrong SCRAM proof sent
// right behind another request is a failed login like any other: logged,
// counted against its source and slowed down. The guard used to take the
// answer to the pipelined request for kfake's verdict on the proof.
func TestPipelinedWrongSCRAMLoginsLoggedAndSlowed(t *testing.T) {
	var logs syncbuf.Buffer
	b, err := broker.Start(broker.Config{Listen: "127.0.0.1:0",
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
		Users:  []broker.User{{Name: "alice", Password: kafkaclient.NewSecret("alice-pw")}}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	failedLines := func() int { return strings.Count(logs.String(), "failed SASL login") }
	for i := 1; i <= 3; i++ {
		if pipelinedWrongSCRAM(t, b.Addr()) {
			t.Fatalf("attempt %d: a wrong proof logged in", i)
		}
		if !poll.Wait(5*time.Second, func() bool { return failedLines() >= i }) {
			t.Fatalf("after %d pipelined wrong proofs, %d failed logins logged:\n%s", i, failedLines(), logs.String())
		}
	}
	if n := failedLines(); n != 3 {
		t.Errorf("%d failed logins logged, want 3:\n%s", n, logs.String())
	}
	// Three failures: the next attempt waits 400 ms, as without pipelining.
	if d := broker.LoginDelay(b, "127.0.0.1"); d <= 200*time.Millisecond || d > 400*time.Millisecond {
		t.Errorf("the next attempt waits %v after 3 pipelined failures, want (200ms, 400ms]", d)
	}
}
