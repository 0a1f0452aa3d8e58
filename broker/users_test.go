// SPDX-License-Identifier: Apache-2.0

package broker_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kretrieve/kretrieve/broker"
)

// TestParseUsers reads users from the list and the file, skipping blanks
// and comments, and names bad entries by position or line, never with
// their password.
func TestParseUsers(t *testing.T) {
	file := filepath.Join(t.TempDir(), "users")
	if err := os.WriteFile(file, []byte("# team\ncarol:c-secret\n\n dave : d:secret \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	users, err := broker.ParseUsers(" alice:a-secret, ,bob:b-secret", file)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range users {
		got = append(got, u.Name+"="+u.Password.Reveal())
	}
	if want := "alice=a-secret bob=b-secret carol=c-secret dave= d:secret"; strings.Join(got, " ") != want {
		t.Fatalf("users %q, want %q", strings.Join(got, " "), want)
	}

	if err := os.WriteFile(file, []byte("ok:fine\nnopassword-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = broker.ParseUsers("a:x,:orphan-secret,b", file)
	for _, want := range []string{"sasl-users: entry 2: want USER:PASSWORD", "sasl-users: entry 3: want USER:PASSWORD", "sasl-users-file " + file + ": line 2: want USER:PASSWORD"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err %v, want %q", err, want)
		}
	}
	if err != nil && strings.Contains(err.Error(), "secret") {
		t.Errorf("err shows a password: %v", err)
	}
	if _, err := broker.ParseUsers("", file+".nope"); err == nil || !strings.HasPrefix(err.Error(), "sasl-users-file: ") {
		t.Errorf("missing file: %v", err)
	}
}
