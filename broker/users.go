// SPDX-License-Identifier: Apache-2.0

package broker

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/kretrieve/kretrieve/kafkaclient"
)

// ParseUsers reads SASL users, USER:PASSWORD entries, from a
// comma-separated list (the sasl-users setting) and from a file with one a
// line, blank lines and # comments skipped (sasl-users-file); either may
// be empty. Errors name the entry's position or the file's line, never a
// password.
func ParseUsers(list, file string) ([]User, error) {
	var (
		users []User
		errs  []error
	)
	add := func(where, entry string) {
		name, pass, ok := strings.Cut(entry, ":")
		if !ok || strings.TrimSpace(name) == "" || pass == "" {
			errs = append(errs, fmt.Errorf("%s: want USER:PASSWORD", where))
			return
		}
		users = append(users, User{Name: strings.TrimSpace(name), Password: kafkaclient.NewSecret(pass)})
	}
	i := 0
	for e := range strings.SplitSeq(list, ",") {
		if e = strings.TrimSpace(e); e != "" {
			i++
			add(fmt.Sprintf("sasl-users: entry %d", i), e)
		}
	}
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("sasl-users-file: %w", err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			if line != "" && !strings.HasPrefix(line, "#") {
				add(fmt.Sprintf("sasl-users-file %s: line %d", file, i+1), line)
			}
		}
	}
	return users, errors.Join(errs...)
}
