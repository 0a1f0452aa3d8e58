// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/kretrieve/kretrieve/kafkaclient"
)

// envPrefix is the prefix of every kretrieve variable.
const envPrefix = "KRETRIEVE_"

// envName returns the variable bound to a flag: --topic-requests is
// KRETRIEVE_TOPIC_REQUESTS.
func envName(flagName string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// settings binds flags to KRETRIEVE_* variables: a set variable replaces the
// flag's default, and a flag given on the command line wins over both.
// The flags are declared on a command's pflag set; cobra parses them.
type settings struct {
	fs     *pflag.FlagSet
	getenv func(string) string
	errs   []error
}

func newSettings(fs *pflag.FlagSet, getenv func(string) string) *settings {
	return &settings{fs: fs, getenv: getenv}
}

// env returns the variable's value and whether it is set (non-empty).
func (s *settings) env(flagName string) (string, bool) {
	v := s.getenv(envName(flagName))
	return v, v != ""
}

// placeholder is the first word of a usage that names a flag's value.
var placeholder = regexp.MustCompile(`\b(FILE|DIR|URL|ADDR|DURATION)\b`)

// usage appends the flag's variable to its usage. pflag shows a backquoted
// word of the usage as the value's placeholder ("--file FILE"), so
// backquotes become quotes and, for a flag that takes a value, the first
// FILE, DIR, URL, ADDR or DURATION of the text is the placeholder (else
// the type: string, int, duration).
func (s *settings) usage(flagName, usage string, takesValue bool) string {
	usage = strings.ReplaceAll(usage, "`", "'")
	if m := placeholder.FindStringIndex(usage); takesValue && m != nil {
		usage = usage[:m[0]] + "`" + usage[m[0]:m[1]] + "`" + usage[m[1]:]
	}
	return fmt.Sprintf("%s [$%s]", usage, envName(flagName))
}

func (s *settings) badEnv(flagName, v string, err error) {
	s.errs = append(s.errs, fmt.Errorf("%s=%q: %w", envName(flagName), v, err))
}

func (s *settings) str(p *string, name, def, usage string) {
	if v, ok := s.env(name); ok {
		def = v
	}
	s.fs.StringVar(p, name, def, s.usage(name, usage, true))
}

// list declares a flag given once per value; its variable holds the
// values comma-separated.
func (s *settings) list(p *[]string, name, usage string) {
	var def []string
	if v, ok := s.env(name); ok {
		def = splitList(v)
	}
	s.fs.StringArrayVar(p, name, def, s.usage(name, usage, true))
}

func (s *settings) integer(p *int, name string, def int, usage string) {
	if v, ok := s.env(name); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			s.badEnv(name, v, errors.New("not an integer"))
		} else {
			def = n
		}
	}
	s.fs.IntVar(p, name, def, s.usage(name, usage, true))
}

func (s *settings) boolean(p *bool, name string, def bool, usage string) {
	if v, ok := s.env(name); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			s.badEnv(name, v, errors.New("not a boolean"))
		} else {
			def = b
		}
	}
	s.fs.BoolVar(p, name, def, s.usage(name, usage, false))
}

func (s *settings) float(p *float64, name string, def float64, usage string) {
	if v, ok := s.env(name); ok {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			s.badEnv(name, v, errors.New("not a number"))
		} else {
			def = f
		}
	}
	s.fs.Float64Var(p, name, def, s.usage(name, usage, true))
}

func (s *settings) duration(p *time.Duration, name string, def time.Duration, usage string) {
	if v, ok := s.env(name); ok {
		d, err := time.ParseDuration(v)
		if err != nil {
			s.badEnv(name, v, errors.New("not a duration (e.g. 10s)"))
		} else {
			def = d
		}
	}
	s.fs.DurationVar(p, name, def, s.usage(name, usage, true))
}

// secret declares a flag holding a secret: its variable's value is taken
// but, unlike str, never shown as the default in -h, and the value is a
// kafkaclient.Secret that does not print itself.
func (s *settings) secret(p *kafkaclient.Secret, name, usage string) {
	if v, ok := s.env(name); ok {
		*p = kafkaclient.NewSecret(v)
	}
	s.fs.Var(secretFlag{p}, name, s.usage(name, usage, true))
}

// secretFlag is a pflag.Value whose String never shows the value.
type secretFlag struct{ p *kafkaclient.Secret }

func (secretFlag) String() string { return "" }

func (secretFlag) Type() string { return "string" }

func (f secretFlag) Set(v string) error {
	*f.p = kafkaclient.NewSecret(v)
	return nil
}

// err reports the variables that do not parse as their flag's type.
func (s *settings) err() error {
	return errors.Join(s.errs...)
}
