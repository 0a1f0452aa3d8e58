// SPDX-License-Identifier: Apache-2.0

package consumers

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Error texts end up on spans (status, exception events, retry events), in
// logs and in the dead-letter reason header, so they must not carry user
// data: query text, document bodies, record keys. Errors made by kretrieve
// (messages' decode and validation errors, the Limits, Recover) never
// quote them. Errors from dependencies a handler calls with user data (a
// search backend given the query) may; handlers pass those through
// RedactError.

// RedactError returns err unchanged when its text contains none of
// userData (the user data the failed call was given, such as a query),
// compared case-insensitively and also in their Go- and JSON-quoted forms.
// Otherwise it returns an error with the same errors.Is and errors.As
// behaviour (it wraps err) whose text says only that it was withheld.
// Empty and whitespace-only userData are ignored. A short value (a one-letter
// query) makes most texts withheld: that is the price of the guarantee.
func RedactError(err error, userData ...string) error {
	if err == nil {
		return nil
	}
	text := strings.ToLower(err.Error())
	for _, d := range userData {
		if strings.TrimSpace(d) == "" {
			continue
		}
		for _, form := range quotedForms(d) {
			if strings.Contains(text, strings.ToLower(form)) {
				return &redactedError{err: err}
			}
		}
	}
	return err
}

// quotedForms returns s as it may appear inside an error text: as is, and
// escaped by %q and by JSON encoding (without the quotes).
func quotedForms(s string) []string {
	forms := []string{s}
	if q := strconv.Quote(s); q[1:len(q)-1] != s {
		forms = append(forms, q[1:len(q)-1])
	}
	if j, err := json.Marshal(s); err == nil && string(j[1:len(j)-1]) != s {
		forms = append(forms, string(j[1:len(j)-1]))
	}
	return forms
}

// redactedError hides the text of an error that quotes user data.
type redactedError struct{ err error }

func (e *redactedError) Error() string { return "error text withheld: it contains user data" }
func (e *redactedError) Unwrap() error { return e.err }
