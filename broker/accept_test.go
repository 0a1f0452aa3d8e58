// SPDX-License-Identifier: Apache-2.0

//go:build linux

package broker

import (
	"context"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kretrieve/kretrieve/internal/testutil/poll"
	"github.com/kretrieve/kretrieve/internal/testutil/syncbuf"
)

// TestBrokerListensAgainAfterFileDescriptorExhaustion runs out of file
// descriptors in a child process (RLIMIT_NOFILE lowered to 128) with idle
// connections to the broker, closes them, and produces: the broker must
// accept again. kfake's accept loop ended on the first EMFILE, and the
// broker never listened again.
func TestBrokerListensAgainAfterFileDescriptorExhaustion(t *testing.T) {
	if os.Getenv("KRETRIEVE_TEST_FD_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestBrokerListensAgainAfterFileDescriptorExhaustion$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "KRETRIEVE_TEST_FD_CHILD=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "--- PASS") {
			t.Fatalf("child did not run the test:\n%s", out)
		}
		return
	}

	lim := syscall.Rlimit{Cur: 128, Max: 128}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	lim.Max = old.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	// The log is kept in memory: reading a file needs a descriptor, and
	// there is none while the test looks for the accept failure.
	var logBuf syncbuf.Buffer
	logs := logBuf.String
	b, err := Start(Config{Listen: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(&logBuf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	// Idle connections until the process has no descriptor left: the
	// client's socket takes the last one, and the broker's accept fails.
	var idle []net.Conn
	for len(idle) < 1000 {
		c, err := net.DialTimeout("tcp", b.Addr(), time.Second)
		if err != nil {
			break
		}
		idle = append(idle, c)
	}
	if len(idle) == 1000 {
		t.Fatal("1000 idle connections and the descriptors did not run out")
	}
	// The dial that failed may have lost the race for the last descriptor
	// to the broker's accept, leaving no connection for the broker to
	// fail on. Free one descriptor and take it back with a client socket:
	// the broker must accept that connection and has nothing to do it with.
	exhausted := func() bool { return strings.Contains(logs(), "accepting a connection failed") }
	for tries := 0; !poll.Wait(200*time.Millisecond, exhausted); tries++ {
		if tries == 20 || len(idle) == 0 {
			t.Fatalf("no accept failure was logged after %d idle connections: the test did not exhaust the broker's descriptors\n%s", len(idle), logs())
		}
		idle[len(idle)-1].Close()
		idle = idle[:len(idle)-1]
		if c, err := net.DialTimeout("tcp", b.Addr(), time.Second); err == nil {
			idle = append(idle, c)
		}
	}
	for _, c := range idle {
		c.Close()
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "after-exhaustion", Value: []byte("x")}).FirstErr(); err != nil {
		t.Fatalf("produce after the descriptors came back: %v\n%s", err, logs())
	}
	if !strings.Contains(logs(), "accepting connections again") {
		t.Errorf("the broker produced but logged no recovery:\n%s", logs())
	}
	t.Logf("%d idle connections exhausted the descriptors; the broker accepts again", len(idle))
}

// TestRetryingListenerBacksOff: consecutive accept errors wait 5 ms
// doubling to 1 s, and a closed listener's error is returned.
func TestRetryingListenerBacksOff(t *testing.T) {
	fl := &failingListener{fails: 12}
	var waits []time.Duration
	l := newRetryingListener(fl, slog.New(slog.DiscardHandler))
	l.sleep = func(d time.Duration) { waits = append(waits, d) }
	c, err := l.Accept()
	if err != nil || c == nil {
		t.Fatalf("Accept after 12 errors: %v", err)
	}
	want := []time.Duration{5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000, 1000, 1000}
	for i := range want {
		want[i] *= time.Millisecond
	}
	if !slices.Equal(waits, want) {
		t.Errorf("back-off %v, want %v", waits, want)
	}
	l.Close()
	if _, err := l.Accept(); err == nil {
		t.Error("Accept on a closed listener returned no error")
	}
}

// failingListener fails its first fails accepts with EMFILE, then returns
// a connection; closed, it fails with net.ErrClosed.
type failingListener struct {
	fails  int
	closed bool
}

func (f *failingListener) Accept() (net.Conn, error) {
	if f.closed {
		return nil, net.ErrClosed
	}
	if f.fails > 0 {
		f.fails--
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	c, _ := net.Pipe()
	return c, nil
}

func (f *failingListener) Close() error   { f.closed = true; return nil }
func (f *failingListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }
