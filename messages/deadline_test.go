// SPDX-License-Identifier: Apache-2.0

package messages_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kretrieve/kretrieve/messages"
)

type header struct {
	k string
	v []byte
}

func headerKV(h *header) (string, []byte) { return h.k, h.v }

// TestParseDeadlineHostileValues checks every rule of a deadline value: a
// well-formed one is read to the millisecond; one far in the future is
// clamped; anything else (not decimal digits, too long, too far in the
// past) is ignored with its error.
func TestParseDeadlineHostileValues(t *testing.T) {
	now := time.UnixMilli(1_767_225_600_000) // 2026-01-01T00:00:00Z
	ms := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).UnixMilli(), 10) }
	for _, tc := range []struct {
		name, value string
		want        time.Time
		clamped     bool
		err         error
	}{
		{"in a second", ms(time.Second), now.Add(time.Second), false, nil},
		{"a second ago", ms(-time.Second), now.Add(-time.Second), false, nil},
		{"29 days ago", ms(-29 * 24 * time.Hour), now.Add(-29 * 24 * time.Hour), false, nil},
		{"at the future bound", ms(messages.MaxDeadlineAhead), now.Add(messages.MaxDeadlineAhead), false, nil},
		{"a day ahead: clamped", ms(24 * time.Hour), now.Add(messages.MaxDeadlineAhead), true, nil},
		{"microseconds by mistake: clamped", strconv.FormatInt(now.UnixMicro(), 10), now.Add(messages.MaxDeadlineAhead), true, nil},
		{"31 days ago", ms(-31 * 24 * time.Hour), time.Time{}, false, messages.ErrDeadlinePast},
		{"seconds by mistake", strconv.FormatInt(now.Unix(), 10), time.Time{}, false, messages.ErrDeadlinePast},
		{"zero", "0", time.Time{}, false, messages.ErrDeadlinePast},
		{"empty", "", time.Time{}, false, messages.ErrDeadlineSyntax},
		{"negative", "-" + ms(time.Second), time.Time{}, false, messages.ErrDeadlineSyntax},
		{"plus sign", "+" + ms(time.Second), time.Time{}, false, messages.ErrDeadlineSyntax},
		{"space", " " + ms(time.Second), time.Time{}, false, messages.ErrDeadlineSyntax},
		{"fraction", ms(time.Second) + ".5", time.Time{}, false, messages.ErrDeadlineSyntax},
		{"RFC 3339", now.Format(time.RFC3339), time.Time{}, false, messages.ErrDeadlineSyntax},
		{"17 digits", strings.Repeat("9", 17), time.Time{}, false, messages.ErrDeadlineSyntax},
		{"int64 overflow", "99999999999999999999", time.Time{}, false, messages.ErrDeadlineSyntax},
		{"binary", "\x00\x00\x01\x9b", time.Time{}, false, messages.ErrDeadlineSyntax},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, clamped, err := messages.ParseDeadline([]byte(tc.value), now)
			if !errors.Is(err, tc.err) || !got.Equal(tc.want) || clamped != tc.clamped {
				t.Errorf("ParseDeadline(%q) = %v, %v, %v; want %v, %v, %v", tc.value, got, clamped, err, tc.want, tc.clamped, tc.err)
			}
		})
	}
}

// TestReadDeadlineRepeatedIgnored checks that a record with several
// deadline headers has none, as one with the pathway header repeated has
// no pathway, and that one header is read.
func TestReadDeadlineRepeatedIgnored(t *testing.T) {
	now := time.UnixMilli(1_767_225_600_000)
	one := []byte(messages.FormatDeadline(now.Add(time.Second)))
	if _, _, ok, err := messages.ReadDeadline([]header{{"other", nil}}, headerKV, now); ok || err != nil {
		t.Errorf("no header: ok=%v err=%v, want none", ok, err)
	}
	d, _, ok, err := messages.ReadDeadline([]header{{"traceparent", nil}, {messages.HeaderDeadline, one}}, headerKV, now)
	if !ok || err != nil || !d.Equal(now.Add(time.Second)) {
		t.Errorf("one header: %v ok=%v err=%v", d, ok, err)
	}
	_, _, ok, err = messages.ReadDeadline([]header{{messages.HeaderDeadline, one}, {messages.HeaderDeadline, one}}, headerKV, now)
	if ok || !errors.Is(err, messages.ErrDeadlineRepeat) {
		t.Errorf("two headers: ok=%v err=%v, want ignored with ErrDeadlineRepeat", ok, err)
	}
}

// TestFormatDeadlineRoundsDown checks that a deadline is written to the
// millisecond, never later than the caller's.
func TestFormatDeadlineRoundsDown(t *testing.T) {
	at := time.UnixMilli(1_767_225_600_000)
	if got := messages.FormatDeadline(at); got != "1767225600000" {
		t.Errorf("FormatDeadline(whole ms) = %s", got)
	}
	if got := messages.FormatDeadline(at.Add(999 * time.Microsecond)); got != "1767225600000" {
		t.Errorf("FormatDeadline(+999µs) = %s, want rounded down", got)
	}
}

// FuzzParseDeadline checks that ParseDeadline never panics and that what
// it accepts lies within its bounds.
func FuzzParseDeadline(f *testing.F) {
	for _, s := range []string{"1767225600000", "0", "", "-1", "99999999999999999999", "1767225600000.5", "9999999999999999"} {
		f.Add([]byte(s))
	}
	now := time.UnixMilli(1_767_225_600_000)
	f.Fuzz(func(t *testing.T, b []byte) {
		d, _, err := messages.ParseDeadline(b, now)
		if err != nil {
			return
		}
		if d.Before(now.Add(-messages.MaxDeadlineAge)) || d.After(now.Add(messages.MaxDeadlineAhead)) {
			t.Fatalf("accepted %q as %v, out of bounds", b, d)
		}
	})
}
