package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

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
type settings struct {
	fs     *flag.FlagSet
	getenv func(string) string
	errs   []error
}

func newSettings(name string, getenv func(string) string, out io.Writer) *settings {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	return &settings{fs: fs, getenv: getenv}
}

// env returns the variable's value and whether it is set (non-empty).
func (s *settings) env(flagName string) (string, bool) {
	v := s.getenv(envName(flagName))
	return v, v != ""
}

func (s *settings) usage(flagName, usage string) string {
	return fmt.Sprintf("%s [$%s]", usage, envName(flagName))
}

func (s *settings) badEnv(flagName, v string, err error) {
	s.errs = append(s.errs, fmt.Errorf("%s=%q: %w", envName(flagName), v, err))
}

func (s *settings) str(p *string, name, def, usage string) {
	if v, ok := s.env(name); ok {
		def = v
	}
	s.fs.StringVar(p, name, def, s.usage(name, usage))
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
	s.fs.IntVar(p, name, def, s.usage(name, usage))
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
	s.fs.BoolVar(p, name, def, s.usage(name, usage))
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
	s.fs.DurationVar(p, name, def, s.usage(name, usage))
}

// secret declares a flag holding a secret: its variable's value is taken
// but, unlike str, never shown as the default in -h, and the value is a
// kafkaclient.Secret that does not print itself.
func (s *settings) secret(p *kafkaclient.Secret, name, usage string) {
	if v, ok := s.env(name); ok {
		*p = kafkaclient.NewSecret(v)
	}
	s.fs.Var(secretFlag{p}, name, s.usage(name, usage))
}

// secretFlag is a flag.Value whose String never shows the value.
type secretFlag struct{ p *kafkaclient.Secret }

func (secretFlag) String() string { return "" }

func (f secretFlag) Set(v string) error {
	*f.p = kafkaclient.NewSecret(v)
	return nil
}

// parse parses args after every flag is declared; variable errors come first.
func (s *settings) parse(args []string) error {
	if err := errors.Join(s.errs...); err != nil {
		return err
	}
	return s.fs.Parse(args)
}

// variables lists the variables of the declared flags, sorted.
func (s *settings) variables() []string {
	var out []string
	s.fs.VisitAll(func(f *flag.Flag) { out = append(out, envName(f.Name)) })
	sort.Strings(out)
	return out
}
