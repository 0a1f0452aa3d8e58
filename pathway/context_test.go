// SPDX-License-Identifier: Apache-2.0

package pathway

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	now := time.Now().UnixNano()
	c := Context{Hash: 0x0123456789abcdef, Origin: now - int64(time.Second), Prev: now - int64(time.Millisecond)}
	var fixed [Size]byte
	c.Encode(&fixed)
	appended := c.Append(nil)
	if !bytes.Equal(fixed[:], appended) {
		t.Fatalf("Encode %x, Append %x", fixed, appended)
	}
	if len(appended) != Size || Size > 32 {
		t.Fatalf("encoded %d bytes, Size %d: the header must stay within 32 bytes", len(appended), Size)
	}
	got, err := Decode(appended, now)
	if err != nil || got != c {
		t.Fatalf("Decode = %+v, %v; want %+v", got, err, c)
	}
}

func TestDecodeRefusesHostileHeaders(t *testing.T) {
	now := time.Now().UnixNano()
	valid := Context{Hash: 42, Origin: now - int64(time.Minute), Prev: now - int64(time.Second)}
	enc := func(c Context) []byte { return c.Append(nil) }
	versioned := enc(valid)
	versioned[0] = 2
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"empty", nil, ErrLength},
		{"short", enc(valid)[:Size-1], ErrLength},
		{"long", append(enc(valid), 0), ErrLength},
		{"garbage text", []byte("this is not a pathway header!"), ErrLength},
		{"other version", versioned, ErrVersion},
		{"zero hash", enc(Context{Origin: valid.Origin, Prev: valid.Prev}), ErrHash},
		{"origin in the far future", enc(Context{Hash: 1, Origin: now + int64(time.Hour), Prev: now + int64(time.Hour)}), ErrTime},
		{"previous in the future beyond skew", enc(Context{Hash: 1, Origin: valid.Origin, Prev: now + int64(2*MaxSkew)}), ErrTime},
		{"previous before origin", enc(Context{Hash: 1, Origin: valid.Origin, Prev: valid.Origin - 1}), ErrTime},
		{"origin too old", enc(Context{Hash: 1, Origin: now - int64(MaxAge) - 1, Prev: now}), ErrTime},
		{"negative origin", enc(Context{Hash: 1, Origin: -5, Prev: now}), ErrTime},
		{"max int times", enc(Context{Hash: 1, Origin: 1<<63 - 1, Prev: 1<<63 - 1}), ErrTime},
	}
	for _, c := range cases {
		if _, err := Decode(c.b, now); !errors.Is(err, c.want) {
			t.Errorf("%s: Decode error %v, want %v", c.name, err, c.want)
		}
	}
	// Within the skew allowance a future time is accepted.
	skewed := Context{Hash: 1, Origin: now + int64(MaxSkew/2), Prev: now + int64(MaxSkew/2)}
	if _, err := Decode(enc(skewed), now); err != nil {
		t.Errorf("a time %v ahead: %v", MaxSkew/2, err)
	}
}

func TestDecodeDoesNotAllocate(t *testing.T) {
	now := time.Now().UnixNano()
	b := Context{Hash: 7, Origin: now, Prev: now}.Append(nil)
	if n := testing.AllocsPerRun(100, func() { _, _ = Decode(b, now) }); n != 0 {
		t.Fatalf("Decode allocates %v times", n)
	}
}

func FuzzDecode(f *testing.F) {
	now := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC).UnixNano()
	f.Add(Context{Hash: 1, Origin: now - 1000, Prev: now}.Append(nil))
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{0xff}, Size))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Decode(b, now)
		if err != nil {
			return
		}
		if !c.IsValid() || c.Prev < c.Origin || c.Prev > now+int64(MaxSkew) || c.Origin < now-int64(MaxAge) {
			t.Fatalf("accepted an implausible context %+v", c)
		}
		if !bytes.Equal(c.Append(nil), b) {
			t.Fatalf("accepted %x, re-encodes as %x", b, c.Append(nil))
		}
	})
}
